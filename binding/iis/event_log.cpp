#include "event_log.h"

#include <atomic>
#include <cstdio>

#include "wide_text.h"

namespace gh_iis {

void report(const std::string& message) noexcept {
  try {
    HANDLE source = RegisterEventSourceW(nullptr, L"gatehouse");
    if (source == nullptr) return;
    std::wstring text = wide(message);
    if (text.size() > 31000) text.resize(31000);
    LPCWSTR strings[] = {text.c_str()};
    ReportEventW(source, EVENTLOG_ERROR_TYPE, 0, 1, nullptr, 1, 0, strings, nullptr);
    DeregisterEventSource(source);
  } catch (...) {
    // Not even the message could be built: nothing more to do.
  }
}

void report_request_trouble(const char* what) noexcept {
  static std::atomic<ULONGLONG> last_ms{0};
  static std::atomic<unsigned long> unlogged{0};
  const ULONGLONG now = GetTickCount64();
  ULONGLONG last = last_ms.load();
  if ((last != 0 && now - last < 1000) || !last_ms.compare_exchange_strong(last, now)) {
    unlogged.fetch_add(1);
    return;
  }
  char line[512];
  std::snprintf(line, sizeof line, "gatehouse: %s; %lu more request failures since the last report", what,
                unlogged.exchange(0));
  report(line);
}

void report_request_failure(const char* what, HRESULT hr) noexcept {
  if (hr == HRESULT_FROM_WIN32(ERROR_CONNECTION_ABORTED) || hr == HRESULT_FROM_WIN32(ERROR_NETNAME_DELETED) ||
      hr == HRESULT_FROM_WIN32(ERROR_CONNECTION_INVALID)) {
    return;
  }
  char line[256];
  std::snprintf(line, sizeof line, "%s failed (HRESULT 0x%08lX)", what, static_cast<unsigned long>(hr));
  report_request_trouble(line);
}

}  // namespace gh_iis
