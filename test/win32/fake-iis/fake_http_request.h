// The fake IIS's IHttpRequest: a scripted client request kept as http.sys keeps it. Known
// headers (HTTP_HEADER_ID) have one value each; every other header is an entry of its own, in
// the order it arrived, so a header sent twice is there twice, and, as the module must assume of
// IIS, DeleteHeader(name) removes only the first entry of that name and SetHeader(replace)
// replaces only the first. GetRawHttpRequest gives an HTTP_REQUEST that follows every edit.
// The entity body arrives piece by piece as the script says (buffered, later, or before
// ReadEntityBody returns), then ends, breaks off or stalls until CancelIo.
#ifndef GATEHOUSE_FAKE_IIS_FAKE_HTTP_REQUEST_H
#define GATEHOUSE_FAKE_IIS_FAKE_HTTP_REQUEST_H

#include <httpserv.h>

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "outcome.h"
#include "request_script.h"

namespace fake_iis {

class FakeHttpContext;

class FakeHttpRequest final : public IHttpRequest {
 public:
  FakeHttpRequest(FakeHttpContext& context, const RequestScript& script);
  FakeHttpRequest(const FakeHttpRequest&) = delete;
  FakeHttpRequest& operator=(const FakeHttpRequest&) = delete;

  /** CancelIo: a stalled read completes with ERROR_OPERATION_ABORTED. Whether a read was pending. */
  bool cancel_pending_read();
  /** Whether a read is under way (pending, its completion not yet delivered). */
  bool read_pending();
  /** The headers as the application sees them: known ones (canonical names) first, then the others in order. */
  HeaderList app_headers();
  /** What the application reads: the bodies given back with InsertEntityBody, then what the module left unread. */
  std::string app_body();
  int pending_reads();
  int buffered_reads();

  // What the module calls.
  HTTP_REQUEST* GetRawHttpRequest() override;
  const HTTP_REQUEST* GetRawHttpRequest() const override;
  PCSTR GetHeader(PCSTR name, USHORT* length) const override;
  HRESULT SetHeader(PCSTR name, PCSTR value, USHORT length, BOOL replace) override;
  HRESULT DeleteHeader(PCSTR name) override;
  PCSTR GetHttpMethod() const override;
  HRESULT ReadEntityBody(VOID* buffer, DWORD size, BOOL async, DWORD* received, BOOL* pending) override;
  HRESULT InsertEntityBody(VOID* buffer, DWORD size) override;
  DWORD GetRemainingEntityBytes() override;
  VOID GetHttpVersion(USHORT* major, USHORT* minor) const override;

  // The rest, which the module must not need.
  PCSTR GetHeader(HTTP_HEADER_ID id, USHORT* length) const override;
  HRESULT SetHeader(HTTP_HEADER_ID id, PCSTR value, USHORT length, BOOL replace) override;
  HRESULT DeleteHeader(HTTP_HEADER_ID id) override;
  HRESULT SetHttpMethod(PCSTR method) override;
  HRESULT SetUrl(PCWSTR url, DWORD length, BOOL reset_query) override;
  HRESULT SetUrl(PCSTR url, DWORD length, BOOL reset_query) override;
  BOOL GetUrlChanged() const override;
  PCWSTR GetForwardedUrl() const override;
  PSOCKADDR GetLocalAddress() const override;
  PSOCKADDR GetRemoteAddress() const override;
  HRESULT GetClientCertificate(HTTP_SSL_CLIENT_CERT_INFO** info, BOOL* negotiated) override;
  HRESULT NegotiateClientCertificate(BOOL async, BOOL* pending) override;
  DWORD GetSiteId() const override;
  HRESULT GetHeaderChanges(DWORD old_change, DWORD* new_change, PCSTR known[HttpHeaderRequestMaximum],
                           DWORD* unknown_count, PCSTR** unknown_names, PCSTR** unknown_values,
                           DWORD changed_known[HttpHeaderRequestMaximum + 1], DWORD* changed_unknown_count,
                           DWORD** changed_unknown) override;

 private:
  struct Header {
    const std::string* name;  // in strings_
    const std::string* value;
    int known;  // HTTP_HEADER_ID, or -1
  };

  const std::string* keep(std::string text);  // with the lock
  void rebuild_raw();                         // with the lock
  size_t index_of(const char* name) const;    // with the lock: the first entry of that name, else size()
  size_t unread_bytes() const;                // with the lock

  FakeHttpContext& context_;
  const std::string method_;
  const std::string url_;
  const USHORT major_;
  const USHORT minor_;
  const std::vector<BodyPiece> pieces_;
  const BodyEnd end_;
  const bool chunked_;

  mutable std::mutex mutex_;
  std::deque<std::string> strings_;  // every name and value ever handed out: valid for the request's life
  std::vector<Header> headers_;
  HTTP_REQUEST raw_{};
  std::deque<std::vector<HTTP_UNKNOWN_HEADER>> unknown_tables_;  // each raw_ ever handed out stays readable
  SOCKADDR_IN remote_{};
  HTTP_SSL_INFO ssl_{};

  size_t piece_ = 0;   // the piece the next read takes from
  size_t offset_ = 0;  // and where in it
  bool read_pending_ = false;
  bool stalled_ = false;
  int pending_reads_ = 0;
  int buffered_reads_ = 0;
  std::vector<std::pair<const char*, DWORD>> inserted_;
};

}  // namespace fake_iis

#endif
