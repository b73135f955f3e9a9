#include "response_writer.h"

#include <cstring>

#include "../core/error_response.h"
#include "event_log.h"

namespace gh_iis {
namespace {

const char* reason(USHORT status) {
  switch (status) {
    case 200:
      return "OK";
    case 302:
      return "Found";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    default:
      return "";
  }
}

// The last argument (fTrySkipCustomErrors): IIS's custom error pages must not replace the answer.
HRESULT set_status(IHttpResponse* response, USHORT status) {
  return response->SetStatus(status, reason(status), 0, S_OK, nullptr, TRUE);
}

}  // namespace

REQUEST_NOTIFICATION_STATUS respond(IHttpContext* context, const gh::OwnedDecision& d) {
  IHttpResponse* response = context->GetResponse();
  response->Clear();
  const HRESULT status_hr = set_status(response, static_cast<USHORT>(d.status()));
  if (FAILED(status_hr)) {
    report_request_failure("IHttpResponse::SetStatus", status_hr);
    return fail(context, 500);
  }
  for (const auto& [name, value] : d.headers()) {
    if (value.size() > 0xFFFF) return fail(context, 500);
    // Set-Cookie may repeat: append rather than replace.
    const HRESULT hr = response->SetHeader(name.c_str(), value.c_str(), static_cast<USHORT>(value.size()),
                                           _stricmp(name.c_str(), "Set-Cookie") != 0);
    if (FAILED(hr)) {
      // A response without one of its headers (a cookie, a Location) is not the core's answer.
      report_request_failure("IHttpResponse::SetHeader", hr);
      return fail(context, 500);
    }
  }
  if (!d.body().empty()) {
    // The chunk must outlive this call: request-lifetime memory from IIS.
    void* copy = context->AllocateRequestMemory(static_cast<DWORD>(d.body().size()));
    if (copy == nullptr) return fail(context, 500);
    std::memcpy(copy, d.body().data(), d.body().size());
    HTTP_DATA_CHUNK chunk{};
    chunk.DataChunkType = HttpDataChunkFromMemory;
    chunk.FromMemory.pBuffer = copy;
    chunk.FromMemory.BufferLength = static_cast<ULONG>(d.body().size());
    DWORD sent = 0;
    const HRESULT hr = response->WriteEntityChunks(&chunk, 1, FALSE, FALSE, &sent);
    if (FAILED(hr)) {
      report_request_failure("IHttpResponse::WriteEntityChunks", hr);
      return fail(context, 500);
    }
  }
  return RQ_NOTIFICATION_FINISH_REQUEST;
}

REQUEST_NOTIFICATION_STATUS refuse(IHttpContext* context, int status, const char* message) {
  const gh::ErrorResponse answer(status, message);
  return respond(context, gh::OwnedDecision(*answer.decision()));
}

REQUEST_NOTIFICATION_STATUS fail(IHttpContext* context, USHORT status) noexcept {
  IHttpResponse* response = context->GetResponse();
  response->Clear();
  const HRESULT hr = set_status(response, status);
  if (FAILED(hr)) report_request_failure("IHttpResponse::SetStatus", hr);
  return RQ_NOTIFICATION_FINISH_REQUEST;
}

void disconnect_after_response(IHttpContext* context) noexcept {
  USHORT major = 0;
  USHORT minor = 0;
  context->GetRequest()->GetHttpVersion(&major, &minor);
  if (major < 2) context->GetResponse()->SetNeedDisconnect();
}

}  // namespace gh_iis
