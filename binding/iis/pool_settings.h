// The IIS module's settings: environment variables of the application pool (docs/in-server-module.md).
#ifndef GATEHOUSE_IIS_POOL_SETTINGS_H
#define GATEHOUSE_IIS_POOL_SETTINGS_H

#include <string>

namespace gh_iis {

/** The largest number of seconds a setting takes. */
constexpr unsigned long kMaxSeconds = 3600;

/** An environment variable of the application pool, or "" (on the heap: an IIS thread's stack is small). */
std::wstring environment(const wchar_t* name);

/** A number of seconds (0 to kMaxSeconds), or the fallback: a value that is not one is logged. */
unsigned long seconds_setting(const wchar_t* name, unsigned long fallback);

}  // namespace gh_iis

#endif
