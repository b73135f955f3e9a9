// The fake IIS's IHttpResponse: records what the module answers (status, reason, headers in
// order, the entity body, whether the connection is to close). Clear() empties it, as IIS's
// does (headers, body and status). DisableKernelCache is recorded with its reason: http.sys
// would otherwise keep the response and answer later requests for it before any module runs. SetHeader(replace)
// replaces every header of that name; without replace it adds one more, so several Set-Cookie stay several. Entity
// chunks must be request memory: IIS sends them after the call has returned.
#ifndef GATEHOUSE_FAKE_IIS_FAKE_HTTP_RESPONSE_H
#define GATEHOUSE_FAKE_IIS_FAKE_HTTP_RESPONSE_H

#include <httpserv.h>

#include <mutex>
#include <string>

#include "outcome.h"

namespace fake_iis {

class FakeHttpContext;

class FakeHttpResponse final : public IHttpResponse {
 public:
  explicit FakeHttpResponse(FakeHttpContext& context) : context_(context) {}
  FakeHttpResponse(const FakeHttpResponse&) = delete;
  FakeHttpResponse& operator=(const FakeHttpResponse&) = delete;

  /** The response as it stands, into outcome. */
  void record(Outcome& outcome);

  // What the module calls.
  HRESULT SetStatus(USHORT status, PCSTR reason, USHORT sub_status, HRESULT error, IAppHostConfigException* exception,
                    BOOL skip_custom_errors) override;
  HRESULT SetHeader(PCSTR name, PCSTR value, USHORT length, BOOL replace) override;
  VOID Clear() override;
  VOID SetNeedDisconnect() override;
  VOID DisableKernelCache(ULONG reason) override;
  HRESULT WriteEntityChunks(HTTP_DATA_CHUNK* chunks, DWORD count, BOOL async, BOOL more_data, DWORD* sent,
                            BOOL* completion_expected) override;

  // The rest, which the module must not need.
  HTTP_RESPONSE* GetRawHttpResponse() override;
  const HTTP_RESPONSE* GetRawHttpResponse() const override;
  IHttpCachePolicy* GetCachePolicy() override;
  HRESULT SetHeader(HTTP_HEADER_ID id, PCSTR value, USHORT length, BOOL replace) override;
  HRESULT DeleteHeader(PCSTR name) override;
  HRESULT DeleteHeader(HTTP_HEADER_ID id) override;
  PCSTR GetHeader(PCSTR name, USHORT* length) const override;
  PCSTR GetHeader(HTTP_HEADER_ID id, USHORT* length) const override;
  VOID ClearHeaders() override;
  VOID ResetConnection() override;
  BOOL GetKernelCacheEnabled() const override;
  VOID SuppressHeaders() override;
  BOOL GetHeadersSuppressed() const override;
  HRESULT Flush(BOOL async, BOOL more_data, DWORD* sent, BOOL* completion_expected) override;
  HRESULT Redirect(PCSTR url, BOOL reset_status, BOOL include_parameters) override;
  HRESULT WriteEntityChunkByReference(HTTP_DATA_CHUNK* chunk, LONG position) override;
  VOID DisableBuffering() override;
  VOID GetStatus(USHORT* status, USHORT* sub_status, PCSTR* reason, USHORT* reason_length, HRESULT* error,
                 PCWSTR* module, DWORD* notification, IAppHostConfigException** exception,
                 BOOL* skip_custom_errors) override;
  HRESULT SetErrorDescription(PCWSTR description, DWORD length, BOOL html_encode) override;
  PCWSTR GetErrorDescription(DWORD* length) override;
  HRESULT GetHeaderChanges(DWORD old_change, DWORD* new_change, PCSTR known[HttpHeaderResponseMaximum],
                           DWORD* unknown_count, PCSTR** unknown_names, PCSTR** unknown_values,
                           DWORD changed_known[HttpHeaderResponseMaximum + 1], DWORD* changed_unknown_count,
                           DWORD** changed_unknown) override;
  VOID CloseConnection() override;

 private:
  FakeHttpContext& context_;
  std::mutex mutex_;
  USHORT status_ = 200;
  std::string reason_ = "OK";
  bool skip_custom_errors_ = false;
  HeaderList headers_;
  std::string body_;
  bool need_disconnect_ = false;
  long kernel_cache_disabled_ = -1;  // not reset by Clear(): a per-request setting, not part of the response
};

}  // namespace fake_iis

#endif
