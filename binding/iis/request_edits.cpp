#include "request_edits.h"

#include <cstring>

namespace gh_iis {
namespace {

// http.sys keeps each occurrence of an unknown header as an entry of its own, and one
// DeleteHeader may remove only one of them: delete until GetHeader finds none. Bounded by
// the request's own header count, so an IIS that reports success without removing anything
// fails the request (500) rather than spinning or letting a spoofed copy through.
HRESULT delete_every(IHttpRequest* request, const char* name) {
  const HTTP_REQUEST* raw = request->GetRawHttpRequest();
  const DWORD bound = (raw == nullptr ? 0 : raw->Headers.UnknownHeaderCount) + 2;
  for (DWORD round = 0; round < bound; ++round) {
    if (request->GetHeader(name) == nullptr) return S_OK;
    const HRESULT hr = request->DeleteHeader(name);
    if (FAILED(hr)) return hr;
  }
  return request->GetHeader(name) == nullptr ? S_OK : HRESULT_FROM_WIN32(ERROR_INVALID_STATE);
}

}  // namespace

HRESULT edit_headers(IHttpRequest* request, const gh::OwnedDecision& d, const char** call) {
  for (const std::string& name : d.remove()) {
    const HRESULT hr = delete_every(request, name.c_str());
    if (FAILED(hr)) {
      *call = "IHttpRequest::DeleteHeader";
      return hr;
    }
  }
  for (const auto& [name, value] : d.headers()) {
    const HRESULT hr = value.size() > 0xFFFF
                           ? E_INVALIDARG
                           : request->SetHeader(name.c_str(), value.c_str(), static_cast<USHORT>(value.size()), TRUE);
    if (FAILED(hr)) {
      *call = "IHttpRequest::SetHeader";
      return hr;
    }
  }
  return S_OK;
}

HRESULT give_body_back(IHttpContext* context, const std::string& body) {
  if (body.size() > 0xFFFFFFFFu) return E_INVALIDARG;
  void* copy = context->AllocateRequestMemory(static_cast<DWORD>(body.size()));
  if (copy == nullptr) return E_OUTOFMEMORY;
  std::memcpy(copy, body.data(), body.size());
  return context->GetRequest()->InsertEntityBody(copy, static_cast<DWORD>(body.size()));
}

}  // namespace gh_iis
