// The IIS module's own events. The worker process has no console: module-level events go to
// the Windows event log (Application, source "gatehouse", which scripts/iis/install.ps1
// registers); the core logs to GATEHOUSE_LOG_FILE.
#ifndef GATEHOUSE_IIS_EVENT_LOG_H
#define GATEHOUSE_IIS_EVENT_LOG_H

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <string>

namespace gh_iis {

/** An error event. Its text is at most 31,839 characters: longer ones are cut. */
void report(const std::string& message) noexcept;

/**
 * A request's trouble: logged, at most once a second across the process (a failing IIS call
 * on every request must not flood the event log), with how many went unlogged since.
 */
void report_request_trouble(const char* what) noexcept;

/** A failed IIS call while answering a request. A client that has gone away is not a failure worth a line. */
void report_request_failure(const char* what, HRESULT hr) noexcept;

}  // namespace gh_iis

#endif
