#include "pool_settings.h"

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <cstdlib>

#include "event_log.h"
#include "wide_text.h"

namespace gh_iis {

std::wstring environment(const wchar_t* name) {
  const DWORD size = GetEnvironmentVariableW(name, nullptr, 0);  // with the terminating null
  if (size == 0) return std::wstring();
  std::wstring value(size, L'\0');
  const DWORD length = GetEnvironmentVariableW(name, value.data(), size);
  if (length == 0 || length >= size) return std::wstring();  // changed in between: taken as unset
  value.resize(length);
  return value;
}

unsigned long seconds_setting(const wchar_t* name, unsigned long fallback) {
  const std::string text = utf8(environment(name));
  if (text.empty()) return fallback;
  char* rest = nullptr;
  const unsigned long value = std::strtoul(text.c_str(), &rest, 10);
  if (*rest == '\0' && text[0] >= '0' && text[0] <= '9' && value <= kMaxSeconds) return value;
  report(std::string("gatehouse: ") + utf8(name) + "=" + text.substr(0, 100) +
         " is not a number of seconds from 0 to " + std::to_string(kMaxSeconds) + "; " + std::to_string(fallback) +
         " is used");
  return fallback;
}

}  // namespace gh_iis
