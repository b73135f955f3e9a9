#include "fake_http_request.h"

#include <algorithm>
#include <cstring>

#include "../../../binding/iis/http_request_view.h"
#include "fake_http_context.h"
#include "fault_result.h"

namespace fake_iis {

namespace {

// What a client that breaks off or stalls announced and never sent (its Content-Length).
constexpr DWORD kUnsentBytes = 100;

HTTP_VERB verb_of(const std::string& method) {
  if (method == "GET") return HttpVerbGET;
  if (method == "HEAD") return HttpVerbHEAD;
  if (method == "POST") return HttpVerbPOST;
  if (method == "PUT") return HttpVerbPUT;
  if (method == "DELETE") return HttpVerbDELETE;
  if (method == "OPTIONS") return HttpVerbOPTIONS;
  return HttpVerbUnknown;
}

// HTTP_HEADER_ID of a request header name (any case), or -1.
int known_id(const char* name) {
  for (int id = 0; id < HttpHeaderRequestMaximum; ++id) {
    if (_stricmp(name, gh_iis::known_request_header_name(id)) == 0) return id;
  }
  return -1;
}

}  // namespace

FakeHttpRequest::FakeHttpRequest(FakeHttpContext& context, const RequestScript& script)
    : context_(context),
      method_(script.method),
      url_(script.url),
      major_(script.major),
      minor_(script.minor),
      pieces_(script.body),
      end_(script.end),
      chunked_(script.chunked) {
  for (const auto& [name, value] : script.headers) {
    const int known = known_id(name.c_str());
    const size_t same = known < 0 ? headers_.size() : index_of(name.c_str());
    if (same < headers_.size()) {
      // http.sys keeps one value per known header: a repeated one is joined to the first.
      headers_[same].value = keep(*headers_[same].value + ", " + value);
      continue;
    }
    headers_.push_back(
        Header{keep(known < 0 ? name : std::string(gh_iis::known_request_header_name(known))), keep(value), known});
  }
  remote_.sin_family = AF_INET;
  inet_pton(AF_INET, script.remote_address.c_str(), &remote_.sin_addr);
  raw_.Version.MajorVersion = major_;
  raw_.Version.MinorVersion = minor_;
  raw_.Verb = verb_of(method_);
  if (raw_.Verb == HttpVerbUnknown) {
    raw_.pUnknownVerb = method_.c_str();
    raw_.UnknownVerbLength = static_cast<USHORT>(method_.size());
  }
  raw_.pRawUrl = url_.c_str();
  raw_.RawUrlLength = static_cast<USHORT>(url_.size());
  raw_.Address.pRemoteAddress = reinterpret_cast<PSOCKADDR>(&remote_);
  raw_.pSslInfo = script.https ? &ssl_ : nullptr;
  rebuild_raw();
}

const std::string* FakeHttpRequest::keep(std::string text) {
  strings_.push_back(std::move(text));
  return &strings_.back();
}

void FakeHttpRequest::rebuild_raw() {
  for (HTTP_KNOWN_HEADER& known : raw_.Headers.KnownHeaders) known = HTTP_KNOWN_HEADER{};
  std::vector<HTTP_UNKNOWN_HEADER> unknown;
  for (const Header& h : headers_) {
    if (h.known >= 0) {
      raw_.Headers.KnownHeaders[h.known].pRawValue = h.value->c_str();
      raw_.Headers.KnownHeaders[h.known].RawValueLength = static_cast<USHORT>(h.value->size());
      continue;
    }
    HTTP_UNKNOWN_HEADER entry{};
    entry.pName = h.name->c_str();
    entry.NameLength = static_cast<USHORT>(h.name->size());
    entry.pRawValue = h.value->c_str();
    entry.RawValueLength = static_cast<USHORT>(h.value->size());
    unknown.push_back(entry);
  }
  unknown_tables_.push_back(std::move(unknown));
  raw_.Headers.UnknownHeaderCount = static_cast<USHORT>(unknown_tables_.back().size());
  raw_.Headers.pUnknownHeaders = unknown_tables_.back().empty() ? nullptr : unknown_tables_.back().data();
}

size_t FakeHttpRequest::index_of(const char* name) const {
  const int known = known_id(name);
  for (size_t i = 0; i < headers_.size(); ++i) {
    const Header& h = headers_[i];
    if (known >= 0 ? h.known == known : (h.known < 0 && _stricmp(h.name->c_str(), name) == 0)) return i;
  }
  return headers_.size();
}

size_t FakeHttpRequest::unread_bytes() const {
  size_t unread = 0;
  for (size_t i = piece_; i < pieces_.size(); ++i) unread += pieces_[i].data.size() - (i == piece_ ? offset_ : 0);
  return unread;
}

bool FakeHttpRequest::cancel_pending_read() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // A read whose data is on its way completes as it would have: the cancel came too late.
    if (!read_pending_ || !stalled_) return read_pending_;
    stalled_ = false;
  }
  context_.complete(
      0, HRESULT_FROM_WIN32(ERROR_OPERATION_ABORTED),
      [this] {
        std::lock_guard<std::mutex> lock(mutex_);
        read_pending_ = false;
      },
      false);
  return true;
}

bool FakeHttpRequest::read_pending() {
  std::lock_guard<std::mutex> lock(mutex_);
  return read_pending_;
}

HeaderList FakeHttpRequest::app_headers() {
  std::lock_guard<std::mutex> lock(mutex_);
  HeaderList out;
  for (int id = 0; id < HttpHeaderRequestMaximum; ++id) {
    for (const Header& h : headers_) {
      if (h.known == id) out.emplace_back(*h.name, *h.value);
    }
  }
  for (const Header& h : headers_) {
    if (h.known < 0) out.emplace_back(*h.name, *h.value);
  }
  return out;
}

std::string FakeHttpRequest::app_body() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string body;
  // IIS reads the buffers given back where they are (request memory): no copy was taken.
  for (const auto& [data, size] : inserted_) body.append(data, size);
  for (size_t i = piece_; i < pieces_.size(); ++i)
    body.append(pieces_[i].data, i == piece_ ? offset_ : 0, std::string::npos);
  return body;
}

int FakeHttpRequest::pending_reads() {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_reads_;
}

int FakeHttpRequest::buffered_reads() {
  std::lock_guard<std::mutex> lock(mutex_);
  return buffered_reads_;
}

HTTP_REQUEST* FakeHttpRequest::GetRawHttpRequest() {
  if (fault_skips(context_.call("IHttpRequest::GetRawHttpRequest"))) return nullptr;
  return &raw_;
}

const HTTP_REQUEST* FakeHttpRequest::GetRawHttpRequest() const {
  if (fault_skips(context_.call("IHttpRequest::GetRawHttpRequest"))) return nullptr;
  return &raw_;
}

PCSTR FakeHttpRequest::GetHeader(PCSTR name, USHORT* length) const {
  if (fault_skips(context_.call("IHttpRequest::GetHeader"))) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t i = index_of(name);
  const bool found = i < headers_.size();
  if (length != nullptr) *length = found ? static_cast<USHORT>(headers_[i].value->size()) : 0;
  return found ? headers_[i].value->c_str() : nullptr;
}

HRESULT FakeHttpRequest::SetHeader(PCSTR name, PCSTR value, USHORT length, BOOL replace) {
  HRESULT hr = S_OK;
  if (fault_decides(context_.call("IHttpRequest::SetHeader"), &hr)) return hr;
  if (name == nullptr || value == nullptr) return E_INVALIDARG;
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string text(value, length);
  const size_t same = index_of(name);
  const int known = known_id(name);
  if (same < headers_.size() && (replace || known >= 0)) {
    headers_[same].value = keep(replace ? text : *headers_[same].value + ", " + text);
  } else {
    headers_.push_back(
        Header{keep(known < 0 ? std::string(name) : std::string(gh_iis::known_request_header_name(known))), keep(text),
               known});
  }
  rebuild_raw();
  return S_OK;
}

HRESULT FakeHttpRequest::DeleteHeader(PCSTR name) {
  HRESULT hr = S_OK;
  if (fault_decides(context_.call("IHttpRequest::DeleteHeader"), &hr)) return hr;
  if (name == nullptr) return E_INVALIDARG;
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t first = index_of(name);
  if (first < headers_.size()) {
    headers_.erase(headers_.begin() + static_cast<std::ptrdiff_t>(first));  // only the first entry of that name
    rebuild_raw();
  }
  return S_OK;
}

PCSTR FakeHttpRequest::GetHttpMethod() const {
  if (fault_skips(context_.call("IHttpRequest::GetHttpMethod"))) return nullptr;
  return method_.c_str();
}

HRESULT FakeHttpRequest::ReadEntityBody(VOID* buffer, DWORD size, BOOL async, DWORD* received, BOOL* pending) {
  HRESULT hr = S_OK;
  if (fault_decides(context_.call("IHttpRequest::ReadEntityBody"), &hr)) return hr;
  if (!async)
    context_.violation("a synchronous ReadEntityBody: it holds an IIS thread for as long as the client takes");
  if (buffer == nullptr || received == nullptr || pending == nullptr || size == 0) {
    context_.violation("ReadEntityBody without a buffer, a size, or somewhere to say how it went");
    return E_INVALIDARG;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  if (read_pending_) {
    lock.unlock();
    context_.violation("ReadEntityBody while another read of the request is pending");
    return HRESULT_FROM_WIN32(ERROR_INVALID_STATE);
  }
  *received = 0;
  *pending = FALSE;
  if (piece_ == pieces_.size()) {
    switch (end_) {
      case BodyEnd::kComplete:
        return HRESULT_FROM_WIN32(ERROR_HANDLE_EOF);
      case BodyEnd::kStalled:
        // Completes when the module cancels it (CancelIo), with ERROR_OPERATION_ABORTED.
        read_pending_ = true;
        stalled_ = true;
        ++pending_reads_;
        *pending = TRUE;
        return S_OK;
      case BodyEnd::kAborted:
        read_pending_ = true;
        ++pending_reads_;
        *pending = TRUE;
        lock.unlock();
        context_.complete(
            0, HRESULT_FROM_WIN32(ERROR_CONNECTION_ABORTED),
            [this] {
              std::lock_guard<std::mutex> done(mutex_);
              read_pending_ = false;
            },
            false);
        return S_OK;
    }
  }
  const BodyPiece& piece = pieces_[piece_];
  const size_t n = std::min<size_t>(size, piece.data.size() - offset_);
  const char* data = piece.data.data() + offset_;
  offset_ += n;
  if (offset_ == piece.data.size()) {
    ++piece_;
    offset_ = 0;
  }
  if (piece.arrival == Arrival::kBuffered) {
    std::memcpy(buffer, data, n);
    ++buffered_reads_;
    *received = static_cast<DWORD>(n);
    return S_OK;
  }
  read_pending_ = true;
  ++pending_reads_;
  *pending = TRUE;
  lock.unlock();
  // The bytes land in the module's buffer on the completing thread, as http.sys fills it.
  context_.complete(
      static_cast<DWORD>(n), S_OK,
      [this, buffer, data, n] {
        std::memcpy(buffer, data, n);
        std::lock_guard<std::mutex> done(mutex_);
        read_pending_ = false;
      },
      piece.arrival == Arrival::kBeforeReturn);
  return S_OK;
}

HRESULT FakeHttpRequest::InsertEntityBody(VOID* buffer, DWORD size) {
  HRESULT hr = S_OK;
  if (fault_decides(context_.call("IHttpRequest::InsertEntityBody"), &hr)) return hr;
  if (!context_.is_request_memory(buffer, size)) {
    context_.violation(
        "InsertEntityBody with memory that is not the request's (IIS keeps the pointer until the application has read "
        "it)");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  inserted_.emplace_back(static_cast<const char*>(buffer), size);
  return S_OK;
}

DWORD FakeHttpRequest::GetRemainingEntityBytes() {
  if (fault_skips(context_.call("IHttpRequest::GetRemainingEntityBytes"))) return 0;
  std::lock_guard<std::mutex> lock(mutex_);
  const bool more = piece_ < pieces_.size() || end_ != BodyEnd::kComplete;
  if (chunked_) return more ? INFINITE : 0;
  return static_cast<DWORD>(unread_bytes()) + (end_ == BodyEnd::kComplete ? 0 : kUnsentBytes);
}

VOID FakeHttpRequest::GetHttpVersion(USHORT* major, USHORT* minor) const {
  if (fault_skips(context_.call("IHttpRequest::GetHttpVersion"))) return;
  if (major != nullptr) *major = major_;
  if (minor != nullptr) *minor = minor_;
}

PCSTR FakeHttpRequest::GetHeader(HTTP_HEADER_ID, USHORT*) const {
  context_.unmodeled("IHttpRequest::GetHeader(HTTP_HEADER_ID)");
  return nullptr;
}
HRESULT FakeHttpRequest::SetHeader(HTTP_HEADER_ID, PCSTR, USHORT, BOOL) {
  context_.unmodeled("IHttpRequest::SetHeader(HTTP_HEADER_ID)");
  return E_NOTIMPL;
}
HRESULT FakeHttpRequest::DeleteHeader(HTTP_HEADER_ID) {
  context_.unmodeled("IHttpRequest::DeleteHeader(HTTP_HEADER_ID)");
  return E_NOTIMPL;
}
HRESULT FakeHttpRequest::SetHttpMethod(PCSTR) {
  context_.unmodeled("IHttpRequest::SetHttpMethod");
  return E_NOTIMPL;
}
HRESULT FakeHttpRequest::SetUrl(PCWSTR, DWORD, BOOL) {
  context_.unmodeled("IHttpRequest::SetUrl(PCWSTR)");
  return E_NOTIMPL;
}
HRESULT FakeHttpRequest::SetUrl(PCSTR, DWORD, BOOL) {
  context_.unmodeled("IHttpRequest::SetUrl(PCSTR)");
  return E_NOTIMPL;
}
BOOL FakeHttpRequest::GetUrlChanged() const {
  context_.unmodeled("IHttpRequest::GetUrlChanged");
  return FALSE;
}
PCWSTR FakeHttpRequest::GetForwardedUrl() const {
  context_.unmodeled("IHttpRequest::GetForwardedUrl");
  return nullptr;
}
PSOCKADDR FakeHttpRequest::GetLocalAddress() const {
  context_.unmodeled("IHttpRequest::GetLocalAddress");
  return nullptr;
}
PSOCKADDR FakeHttpRequest::GetRemoteAddress() const {
  context_.unmodeled("IHttpRequest::GetRemoteAddress");
  return nullptr;
}
HRESULT FakeHttpRequest::GetClientCertificate(HTTP_SSL_CLIENT_CERT_INFO**, BOOL*) {
  context_.unmodeled("IHttpRequest::GetClientCertificate");
  return E_NOTIMPL;
}
HRESULT FakeHttpRequest::NegotiateClientCertificate(BOOL, BOOL*) {
  context_.unmodeled("IHttpRequest::NegotiateClientCertificate");
  return E_NOTIMPL;
}
DWORD FakeHttpRequest::GetSiteId() const {
  context_.unmodeled("IHttpRequest::GetSiteId");
  return 0;
}
HRESULT FakeHttpRequest::GetHeaderChanges(DWORD, DWORD*, PCSTR[HttpHeaderRequestMaximum], DWORD*, PCSTR**, PCSTR**,
                                          DWORD[HttpHeaderRequestMaximum + 1], DWORD*, DWORD**) {
  context_.unmodeled("IHttpRequest::GetHeaderChanges");
  return E_NOTIMPL;
}

}  // namespace fake_iis
