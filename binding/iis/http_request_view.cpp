#include "http_request_view.h"

#include <cstring>

namespace gh_iis {

namespace {

// HTTP_HEADER_ID order (request side): http.sys parses these into KnownHeaders
// and drops their names, so the module names them again, in canonical case.
const char* const kKnownRequestHeaders[HttpHeaderRequestMaximum] = {
    "Cache-Control",
    "Connection",
    "Date",
    "Keep-Alive",
    "Pragma",
    "Trailer",
    "Transfer-Encoding",
    "Upgrade",
    "Via",
    "Warning",
    "Allow",
    "Content-Length",
    "Content-Type",
    "Content-Encoding",
    "Content-Language",
    "Content-Location",
    "Content-MD5",
    "Content-Range",
    "Expires",
    "Last-Modified",
    "Accept",
    "Accept-Charset",
    "Accept-Encoding",
    "Accept-Language",
    "Authorization",
    "Cookie",
    "Expect",
    "From",
    "Host",
    "If-Match",
    "If-Modified-Since",
    "If-None-Match",
    "If-Range",
    "If-Unmodified-Since",
    "Max-Forwards",
    "Proxy-Authorization",
    "Referer",
    "Range",
    "TE",
    "Translate",
    "User-Agent",
};

gh_bytes bytes(const char* data, size_t length) {
  return gh_bytes{reinterpret_cast<const uint8_t*>(data == nullptr ? "" : data), data == nullptr ? 0 : length};
}

std::string address_text(const SOCKADDR* address) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (address == nullptr) return std::string();
  if (address->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const SOCKADDR_IN*>(address);
    if (inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text) != nullptr) return text;
  } else if (address->sa_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const SOCKADDR_IN6*>(address);
    if (inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text) != nullptr) return text;
  }
  return std::string();
}

}  // namespace

const char* known_request_header_name(int id) {
  return id >= 0 && id < HttpHeaderRequestMaximum ? kKnownRequestHeaders[id] : nullptr;
}

HttpRequestView::HttpRequestView(const HTTP_REQUEST& request, const char* method)
    : method_(method == nullptr ? "" : method) {
  remote_address_ = address_text(request.Address.pRemoteAddress);

  // The raw URL as the client sent it: origin-form "/path?query" (absolute-form
  // requests to a proxy never reach an IIS site).
  const char* url = request.pRawUrl == nullptr ? "" : request.pRawUrl;
  const size_t url_length = request.pRawUrl == nullptr ? 0 : request.RawUrlLength;
  const void* question = std::memchr(url, '?', url_length);
  const size_t path_length =
      question == nullptr ? url_length : static_cast<size_t>(static_cast<const char*>(question) - url);

  const HTTP_REQUEST_HEADERS& h = request.Headers;
  headers_.reserve(HttpHeaderRequestMaximum + h.UnknownHeaderCount);
  for (int id = 0; id < HttpHeaderRequestMaximum; ++id) {
    const HTTP_KNOWN_HEADER& known = h.KnownHeaders[id];
    if (known.pRawValue == nullptr) continue;  // absent (an empty value has a non-NULL pointer)
    headers_.push_back(gh_header{bytes(kKnownRequestHeaders[id], std::strlen(kKnownRequestHeaders[id])),
                                 bytes(known.pRawValue, known.RawValueLength)});
  }
  for (USHORT i = 0; h.pUnknownHeaders != nullptr && i < h.UnknownHeaderCount; ++i) {
    const HTTP_UNKNOWN_HEADER& unknown = h.pUnknownHeaders[i];
    headers_.push_back(
        gh_header{bytes(unknown.pName, unknown.NameLength), bytes(unknown.pRawValue, unknown.RawValueLength)});
  }

  const HTTP_KNOWN_HEADER& host = h.KnownHeaders[HttpHeaderHost];
  static const char kHttps[] = "https";
  view_.method = bytes(method_.data(), method_.size());
  view_.scheme = bytes(kHttps, request.pSslInfo != nullptr ? 5 : 4);  // "http" is a prefix of "https"
  view_.host = bytes(host.pRawValue, host.RawValueLength);
  view_.path = bytes(url, path_length);
  view_.query = question == nullptr ? bytes("", 0) : bytes(url + path_length + 1, url_length - path_length - 1);
  view_.remote_address = bytes(remote_address_.data(), remote_address_.size());
  view_.headers = headers_.data();
  view_.header_count = headers_.size();
  view_.body = gh_bytes{nullptr, 0};
}

void HttpRequestView::set_body(const void* data, size_t length) {
  view_.body = data == nullptr ? gh_bytes{reinterpret_cast<const uint8_t*>(""), 0}
                               : gh_bytes{static_cast<const uint8_t*>(data), length};
}

}  // namespace gh_iis
