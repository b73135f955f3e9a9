// An HTTP Server API request (HTTP_REQUEST, what IIS's IHttpRequest::
// GetRawHttpRequest returns) as the C ABI's request view. Windows SDK
// <http.h> only, no IIS headers: the Windows leg builds it with mingw-w64 and
// tests it under wine; binding/iis/gatehouse_module.cpp uses it inside IIS.
#ifndef GATEHOUSE_IIS_HTTP_REQUEST_VIEW_H
#define GATEHOUSE_IIS_HTTP_REQUEST_VIEW_H

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <http.h>

#include <string>
#include <vector>

#include "../core/gh_core.h"

namespace gh_iis {

/** The canonical name of a known request header (HTTP_HEADER_ID below HttpHeaderRequestMaximum), else NULL. */
const char* known_request_header_name(int id);

/**
 * A request view over an HTTP_REQUEST. Borrows the request's own bytes (valid
 * for the notification) and owns only what it had to make: the remote address
 * text, the header table, the method.
 */
class HttpRequestView {
 public:
  /** method: IHttpRequest::GetHttpMethod() (covers verbs HTTP_VERB does not name). */
  HttpRequestView(const HTTP_REQUEST& request, const char* method);
  HttpRequestView(const HttpRequestView&) = delete;
  HttpRequestView& operator=(const HttpRequestView&) = delete;

  /** The view; body absent until set_body. */
  const gh_request_view& view() const { return view_; }
  void set_body(const void* data, size_t length);

 private:
  std::string method_;
  std::string remote_address_;
  std::vector<gh_header> headers_;
  gh_request_view view_{};
};

}  // namespace gh_iis

#endif
