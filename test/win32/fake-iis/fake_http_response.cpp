#include "fake_http_response.h"

#include "fake_http_context.h"
#include "fault_result.h"

namespace fake_iis {

void FakeHttpResponse::record(Outcome& outcome) {
  std::lock_guard<std::mutex> lock(mutex_);
  outcome.status = status_;
  outcome.reason = reason_;
  outcome.skip_custom_errors = skip_custom_errors_;
  outcome.response_headers = headers_;
  outcome.response_body = body_;
  outcome.need_disconnect = need_disconnect_;
  outcome.kernel_cache_disabled = kernel_cache_disabled_;
}

HRESULT FakeHttpResponse::SetStatus(USHORT status, PCSTR reason, USHORT, HRESULT, IAppHostConfigException*,
                                    BOOL skip_custom_errors) {
  HRESULT hr = S_OK;
  if (fault_decides(context_.call("IHttpResponse::SetStatus"), &hr)) return hr;
  std::lock_guard<std::mutex> lock(mutex_);
  status_ = status;
  reason_ = reason == nullptr ? "" : reason;
  skip_custom_errors_ = skip_custom_errors != FALSE;
  return S_OK;
}

HRESULT FakeHttpResponse::SetHeader(PCSTR name, PCSTR value, USHORT length, BOOL replace) {
  HRESULT hr = S_OK;
  if (fault_decides(context_.call("IHttpResponse::SetHeader"), &hr)) return hr;
  if (name == nullptr || value == nullptr) return E_INVALIDARG;
  std::lock_guard<std::mutex> lock(mutex_);
  if (replace) {
    for (auto it = headers_.begin(); it != headers_.end();)
      it = _stricmp(it->first.c_str(), name) == 0 ? headers_.erase(it) : it + 1;
  }
  headers_.emplace_back(name, std::string(value, length));
  return S_OK;
}

VOID FakeHttpResponse::Clear() {
  if (fault_skips(context_.call("IHttpResponse::Clear"))) return;
  std::lock_guard<std::mutex> lock(mutex_);
  status_ = 200;
  reason_ = "OK";
  skip_custom_errors_ = false;
  headers_.clear();
  body_.clear();
}

VOID FakeHttpResponse::SetNeedDisconnect() {
  if (fault_skips(context_.call("IHttpResponse::SetNeedDisconnect"))) return;
  std::lock_guard<std::mutex> lock(mutex_);
  need_disconnect_ = true;
}

VOID FakeHttpResponse::DisableKernelCache(ULONG reason) {
  if (fault_skips(context_.call("IHttpResponse::DisableKernelCache"))) return;
  std::lock_guard<std::mutex> lock(mutex_);
  kernel_cache_disabled_ = static_cast<long>(reason);
}

HRESULT FakeHttpResponse::WriteEntityChunks(HTTP_DATA_CHUNK* chunks, DWORD count, BOOL async, BOOL, DWORD* sent,
                                            BOOL* completion_expected) {
  HRESULT hr = S_OK;
  if (fault_decides(context_.call("IHttpResponse::WriteEntityChunks"), &hr)) return hr;
  // An asynchronous write would complete through OnAsyncCompletion, which the module does not expect.
  if (async) context_.violation("an asynchronous WriteEntityChunks");
  if (chunks == nullptr && count > 0) return E_INVALIDARG;
  std::string written;
  for (DWORD i = 0; i < count; ++i) {
    if (chunks[i].DataChunkType != HttpDataChunkFromMemory) {
      context_.unmodeled("IHttpResponse::WriteEntityChunks with a chunk not from memory");
      return E_NOTIMPL;
    }
    const auto* data = static_cast<const char*>(chunks[i].FromMemory.pBuffer);
    const ULONG size = chunks[i].FromMemory.BufferLength;
    if (!context_.is_request_memory(data, size)) {
      context_.violation(
          "WriteEntityChunks with memory that is not the request's (IIS sends it after the call has returned)");
    }
    written.append(data, size);
  }
  if (sent != nullptr) *sent = static_cast<DWORD>(written.size());
  if (completion_expected != nullptr) *completion_expected = FALSE;
  std::lock_guard<std::mutex> lock(mutex_);
  body_ += written;
  return S_OK;
}

HTTP_RESPONSE* FakeHttpResponse::GetRawHttpResponse() {
  context_.unmodeled("IHttpResponse::GetRawHttpResponse");
  return nullptr;
}
const HTTP_RESPONSE* FakeHttpResponse::GetRawHttpResponse() const {
  context_.unmodeled("IHttpResponse::GetRawHttpResponse");
  return nullptr;
}
IHttpCachePolicy* FakeHttpResponse::GetCachePolicy() {
  context_.unmodeled("IHttpResponse::GetCachePolicy");
  return nullptr;
}
HRESULT FakeHttpResponse::SetHeader(HTTP_HEADER_ID, PCSTR, USHORT, BOOL) {
  context_.unmodeled("IHttpResponse::SetHeader(HTTP_HEADER_ID)");
  return E_NOTIMPL;
}
HRESULT FakeHttpResponse::DeleteHeader(PCSTR) {
  context_.unmodeled("IHttpResponse::DeleteHeader(PCSTR)");
  return E_NOTIMPL;
}
HRESULT FakeHttpResponse::DeleteHeader(HTTP_HEADER_ID) {
  context_.unmodeled("IHttpResponse::DeleteHeader(HTTP_HEADER_ID)");
  return E_NOTIMPL;
}
PCSTR FakeHttpResponse::GetHeader(PCSTR, USHORT*) const {
  context_.unmodeled("IHttpResponse::GetHeader(PCSTR)");
  return nullptr;
}
PCSTR FakeHttpResponse::GetHeader(HTTP_HEADER_ID, USHORT*) const {
  context_.unmodeled("IHttpResponse::GetHeader(HTTP_HEADER_ID)");
  return nullptr;
}
VOID FakeHttpResponse::ClearHeaders() { context_.unmodeled("IHttpResponse::ClearHeaders"); }
VOID FakeHttpResponse::ResetConnection() { context_.unmodeled("IHttpResponse::ResetConnection"); }
BOOL FakeHttpResponse::GetKernelCacheEnabled() const {
  context_.unmodeled("IHttpResponse::GetKernelCacheEnabled");
  return FALSE;
}
VOID FakeHttpResponse::SuppressHeaders() { context_.unmodeled("IHttpResponse::SuppressHeaders"); }
BOOL FakeHttpResponse::GetHeadersSuppressed() const {
  context_.unmodeled("IHttpResponse::GetHeadersSuppressed");
  return FALSE;
}
HRESULT FakeHttpResponse::Flush(BOOL, BOOL, DWORD*, BOOL*) {
  context_.unmodeled("IHttpResponse::Flush");
  return E_NOTIMPL;
}
HRESULT FakeHttpResponse::Redirect(PCSTR, BOOL, BOOL) {
  context_.unmodeled("IHttpResponse::Redirect");
  return E_NOTIMPL;
}
HRESULT FakeHttpResponse::WriteEntityChunkByReference(HTTP_DATA_CHUNK*, LONG) {
  context_.unmodeled("IHttpResponse::WriteEntityChunkByReference");
  return E_NOTIMPL;
}
VOID FakeHttpResponse::DisableBuffering() { context_.unmodeled("IHttpResponse::DisableBuffering"); }
VOID FakeHttpResponse::GetStatus(USHORT*, USHORT*, PCSTR*, USHORT*, HRESULT*, PCWSTR*, DWORD*,
                                 IAppHostConfigException**, BOOL*) {
  context_.unmodeled("IHttpResponse::GetStatus");
}
HRESULT FakeHttpResponse::SetErrorDescription(PCWSTR, DWORD, BOOL) {
  context_.unmodeled("IHttpResponse::SetErrorDescription");
  return E_NOTIMPL;
}
PCWSTR FakeHttpResponse::GetErrorDescription(DWORD*) {
  context_.unmodeled("IHttpResponse::GetErrorDescription");
  return nullptr;
}
HRESULT FakeHttpResponse::GetHeaderChanges(DWORD, DWORD*, PCSTR[HttpHeaderResponseMaximum], DWORD*, PCSTR**, PCSTR**,
                                           DWORD[HttpHeaderResponseMaximum + 1], DWORD*, DWORD**) {
  context_.unmodeled("IHttpResponse::GetHeaderChanges");
  return E_NOTIMPL;
}
VOID FakeHttpResponse::CloseConnection() { context_.unmodeled("IHttpResponse::CloseConnection"); }

}  // namespace fake_iis
