// Checks the IIS module's HTTP_REQUEST → request view on Windows structures
// (built by mingw-w64, run under wine by scripts/win32/test.sh), reporting
// through native_checks.h.
#include <cstdio>
#include <cstring>
#include <string>

#include "../iis/http_request_view.h"
#include "native_checks.h"

namespace {

using gh_checks::check;

std::string text(gh_bytes b) {
  return b.ptr == nullptr ? std::string("<absent>") : std::string(reinterpret_cast<const char*>(b.ptr), b.len);
}

void check_text(gh_bytes actual, const std::string& expected, const char* what) {
  const std::string got = text(actual);
  if (got != expected) std::printf("  %s: got \"%s\", expected \"%s\"\n", what, got.c_str(), expected.c_str());
  check(got == expected, what);
}

void known(HTTP_REQUEST& request, HTTP_HEADER_ID id, const char* value) {
  request.Headers.KnownHeaders[id].pRawValue = value;
  request.Headers.KnownHeaders[id].RawValueLength = static_cast<USHORT>(std::strlen(value));
}

HTTP_UNKNOWN_HEADER unknown(const char* name, const char* value) {
  HTTP_UNKNOWN_HEADER h{};
  h.pName = name;
  h.NameLength = static_cast<USHORT>(std::strlen(name));
  h.pRawValue = value;
  h.RawValueLength = static_cast<USHORT>(std::strlen(value));
  return h;
}

void plain_http_over_ipv4() {
  HTTP_REQUEST request{};
  static const char url[] = "/orders/7?page=2&sort=a%20b";
  request.pRawUrl = url;
  request.RawUrlLength = sizeof url - 1;
  SOCKADDR_IN remote{};
  remote.sin_family = AF_INET;
  inet_pton(AF_INET, "10.1.2.3", &remote.sin_addr);
  request.Address.pRemoteAddress = reinterpret_cast<PSOCKADDR>(&remote);
  known(request, HttpHeaderHost, "app.example:8080");
  known(request, HttpHeaderCookie, "PlatformAuthSession=abc");
  known(request, HttpHeaderAccept, "text/html");
  known(request, HttpHeaderReferer, "");  // present and empty: kept
  HTTP_UNKNOWN_HEADER extra[] = {unknown("X-Platform-Client-Principal-Id", "admin"),
                                 unknown("X_PLATFORM_CLIENT_PRINCIPAL", "forged")};
  request.Headers.pUnknownHeaders = extra;
  request.Headers.UnknownHeaderCount = 2;

  gh_iis::HttpRequestView built(request, "GET");
  const gh_request_view& v = built.view();
  check_text(v.method, "GET", "method");
  check_text(v.scheme, "http", "scheme without TLS");
  check_text(v.host, "app.example:8080", "host from the Host header");
  check_text(v.path, "/orders/7", "raw path");
  check_text(v.query, "page=2&sort=a%20b", "raw query, without ?");
  check_text(v.remote_address, "10.1.2.3", "IPv4 remote address");
  check(v.body.ptr == nullptr, "no body unless set");
  // Known headers in HTTP_HEADER_ID order with canonical names, then the unknown ones as received.
  const char* expected[][2] = {
      {"Accept", "text/html"}, {"Cookie", "PlatformAuthSession=abc"},       {"Host", "app.example:8080"},
      {"Referer", ""},         {"X-Platform-Client-Principal-Id", "admin"}, {"X_PLATFORM_CLIENT_PRINCIPAL", "forged"}};
  check(v.header_count == 6, "header count");
  for (size_t i = 0; i < 6 && i < v.header_count; ++i) {
    check_text(v.headers[i].name, expected[i][0], "header name");
    check_text(v.headers[i].value, expected[i][1], "header value");
  }
}

void https_over_ipv6_with_a_body() {
  HTTP_REQUEST request{};
  static const char url[] = "/.auth/login/github?";
  request.pRawUrl = url;
  request.RawUrlLength = sizeof url - 1;
  HTTP_SSL_INFO ssl{};
  request.pSslInfo = &ssl;
  SOCKADDR_IN6 remote{};
  remote.sin6_family = AF_INET6;
  inet_pton(AF_INET6, "2001:db8::1", &remote.sin6_addr);
  request.Address.pRemoteAddress = reinterpret_cast<PSOCKADDR>(&remote);
  known(request, HttpHeaderHost, "app.example");
  known(request, HttpHeaderContentType, "application/json");

  gh_iis::HttpRequestView built(request, "POST");
  static const char body[] = "{\"access_token\":\"t\"}";
  built.set_body(body, sizeof body - 1);
  const gh_request_view& v = built.view();
  check_text(v.scheme, "https", "scheme with TLS");
  check_text(v.path, "/.auth/login/github", "path before an empty query");
  check_text(v.query, "", "empty query");
  check_text(v.remote_address, "2001:db8::1", "IPv6 remote address");
  check_text(v.body, body, "body");
  check(v.header_count == 2, "only present headers");
}

void nothing_at_all() {
  HTTP_REQUEST request{};  // no URL, no address, no headers: an empty view, never a crash
  gh_iis::HttpRequestView built(request, "PROPFIND");
  const gh_request_view& v = built.view();
  check_text(v.method, "PROPFIND", "a verb HTTP_VERB does not name");
  check_text(v.path, "", "no URL");
  check_text(v.host, "", "no Host");
  check_text(v.remote_address, "", "no address");
  check(v.header_count == 0, "no headers");
}

void header_names() {
  check(std::strcmp(gh_iis::known_request_header_name(HttpHeaderUserAgent), "User-Agent") == 0, "last request header");
  check(std::strcmp(gh_iis::known_request_header_name(HttpHeaderCacheControl), "Cache-Control") == 0,
        "first request header");
  check(gh_iis::known_request_header_name(HttpHeaderRequestMaximum) == nullptr, "past the request headers");
  check(gh_iis::known_request_header_name(-1) == nullptr, "negative id");
}

}  // namespace

int main() {
  plain_http_over_ipv4();
  https_over_ipv6_with_a_body();
  nothing_at_all();
  header_names();
  return gh_checks::summary();
}
