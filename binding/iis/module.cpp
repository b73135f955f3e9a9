// The IIS native module: every request, early in the pipeline (BeginRequest),
// goes to the gatehouse auth core running in Node embedded in this worker
// process, and the module applies its decision.
//
//   OnBeginRequest: Node started if this is the worker process's first request for a site
//     that enables gatehouse (IIS calls the module only for those) → while Node boots, wait
//     for the core to attach (pending, at most GATEHOUSE_IIS_START_WAIT) → HTTP_REQUEST → request
//     view → for the auth routes' POSTs,
//     the body, read asynchronously (each pending read returns
//     RQ_NOTIFICATION_PENDING and resumes in OnAsyncCompletion) → engine slot →
//     decided inline (core not running: 503) → apply now, else return
//     RQ_NOTIFICATION_PENDING (a decision that has not come within GATEHOUSE_IIS_DECISION_TIMEOUT
//     is answered 503 and logged);
//   the decision arrives on Node's thread → PostCompletion → OnAsyncCompletion
//     (an IIS thread) → apply: remove/set request headers and continue, or
//     write the response and finish the request. A body the module read is given back
//     to IIS (InsertEntityBody) when the request continues, so the app reads it whole.
//
// Node starts lazily, on the first request IIS hands the module: IIS loads a global module
// into every worker process but calls its request notifications only for the sites whose
// <modules> list has it, so a worker process that serves no gatehouse site never starts Node,
// and never loads libnode.dll either (delay-loaded: /DELAYLOAD:libnode.dll; the module loads it
// from its own directory first, and a missing one is a 503 and an event-log entry naming it).
// It stops in the module factory's Terminate (never under the loader lock: no static
// destructor owns it, DllMain does nothing but note the module handle). Once Node has ended on
// its own (process.exit(), an uncaught exception, a failed start), it cannot start again in
// this process: the module answers 503 with Retry-After and asks IIS for a new worker process
// (IHttpServer::RecycleProcess, at most once a minute).
//
// IIS may run a completion on another of its threads before the call that started the
// operation has returned: once a body read or a submission has gone pending, the handler
// touches nothing of the module and returns RQ_NOTIFICATION_PENDING.
//
// No C++ exception reaches IIS: every entry point IIS calls (the notifications, the factory,
// RegisterModule) catches everything and answers 500 (or fails the call). Nothing that can
// throw runs after an operation has gone pending, so the handler that catches owns the request.
//
// IIS loads it built with MSVC against the IIS SDK (httpserv.h) and libnode (see
// docs/in-server-module.md). The Windows leg runs this very file under wine, built with
// mingw-w64 into a fake IIS (test/win32/fake-iis) with the real addon and in-server core;
// only node_runtime.cpp (the embedding itself) is replaced there. That one runs on Linux against
// Debian's libnode (test/inserver/embedding.test.ts), and inside w3wp on a real IIS
// (.github/workflows/iis.yml).
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <windows.h>
#include <httpserv.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../core/error_response.h"
#include "body_reader.h"
#include "deadline_timer.h"
#include "deferred_decision.h"
#include "engine_slot.h"
#include "http_request_view.h"
#include "node_runtime.h"

namespace {

// The largest auth-route body the core takes (MAX_AUTH_BODY_BYTES: token exchange JSON,
// form_post callbacks, back-channel logouts). One byte more is read so that the core sees
// "too large" and says so (413); nothing beyond, so a slow upload holds at most this much.
constexpr size_t kMaxAuthBody = 64 * 1024;

// How long an auth-route body may take to arrive in full: the sidecar's deadline
// (DEFAULT_AUTH_BODY_DEADLINE_MS). Later, the module answers 408 and closes the connection.
constexpr DWORD kAuthBodyDeadlineMs = 30000;

// Every request the module judges, whether it lets it through or answers it, is kept out of
// http.sys's kernel cache. IIS puts a response there (a static file hit twice within the
// activity period, by default) unless a module of the request disables it, and http.sys then
// answers later requests for that URL itself, before OnBeginRequest runs: a file served once
// to a signed-in user would be served to anyone. IIS's own authentication modules disable it
// for the requests they authenticate, with this reason (IISCacheEvents::HTTPSYS_CACHEABLE
// NON_ANONYMOUS_ACCESS, as failed request tracing names it). See docs/in-server-module.md.
constexpr ULONG kKernelCacheReasonNonAnonymousAccess = 11;

// How long, after Node's start, requests wait for the core to attach rather than being refused
// (GATEHOUSE_IIS_START_WAIT, seconds), and how long a decision may take before the module
// answers 503 itself (GATEHOUSE_IIS_DECISION_TIMEOUT, seconds): a core whose promise never
// settles must not hold a request for ever.
constexpr unsigned long kDefaultStartWaitSeconds = 10;
constexpr unsigned long kDefaultDecisionTimeoutSeconds = 30;
constexpr unsigned long kMaxSeconds = 3600;

// How often the module asks IIS for a new worker process while its Node has ended: IIS starts
// the new one beside this one (overlapped recycling), which may itself fail the same way.
constexpr ULONGLONG kRecycleIntervalMs = 60 * 1000;

HMODULE g_module = nullptr;
IHttpServer* g_server = nullptr;       // RegisterModule's: the worker process's services
gh_iis::EngineSlot* g_slot = nullptr;  // lives as long as the worker process

// The embedded Node: started by the first request (start_node_once), stopped by the factory's
// Terminate. Plain pointers on purpose: a static destructor would run under the loader lock
// (DLL_PROCESS_DETACH) and must never wait for Node's thread. The runtime, once made, is never
// freed (requests may still ask it whether Node has ended): the worker process is its end.
// kNoLibnode: libnode.dll cannot be loaded; kNotStarting: Node's thread could not start.
enum class NodeState { kNotStarted, kStarted, kNotStarting, kNoLibnode, kTerminated };
std::mutex* g_node_mutex = nullptr;                           // made by RegisterModule, never destroyed
std::atomic<NodeState> g_node_state{NodeState::kNotStarted};  // written under g_node_mutex
std::atomic<bool> g_node_decided{false};                      // the fast path: anything but kNotStarted
gh_iis::NodeRuntime* g_runtime = nullptr;
std::atomic<unsigned long> g_decision_timeout_ms{kDefaultDecisionTimeoutSeconds * 1000};
gh_iis::DeadlineTimer* g_deadlines = nullptr;  // decisions' deadlines; made by RegisterModule, never destroyed

// UTF-8 (the module's and Node's text) → UTF-16 (Windows'); bytes that are not UTF-8 become U+FFFD.
std::wstring wide(const std::string& text) {
  if (text.empty() || text.size() > 0x7FFFFFFF) return std::wstring();
  const int length = static_cast<int>(text.size());
  const int size = MultiByteToWideChar(CP_UTF8, 0, text.data(), length, nullptr, 0);
  if (size <= 0) return std::wstring();
  std::wstring out(static_cast<size_t>(size), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, text.data(), length, out.data(), size);
  return out;
}

// The worker process has no console: module-level events go to the Windows event log
// (Application, source "gatehouse", which scripts/iis/install.ps1 registers); the core logs
// to GATEHOUSE_LOG_FILE. An event's text is at most 31,839 characters: longer ones are cut.
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

// A request's trouble: logged, at most once a second across the process (a failing IIS call
// on every request must not flood the event log), with how many went unlogged since.
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

// A failed IIS call while answering a request. A client that has gone away is not a failure worth a line.
void report_request_failure(const char* what, HRESULT hr) noexcept {
  if (hr == HRESULT_FROM_WIN32(ERROR_CONNECTION_ABORTED) || hr == HRESULT_FROM_WIN32(ERROR_NETNAME_DELETED) ||
      hr == HRESULT_FROM_WIN32(ERROR_CONNECTION_INVALID)) {
    return;
  }
  char line[256];
  std::snprintf(line, sizeof line, "%s failed (HRESULT 0x%08lX)", what, static_cast<unsigned long>(hr));
  report_request_trouble(line);
}

// An environment variable of the application pool, or "" (on the heap: an IIS thread's stack is small).
std::wstring environment(const wchar_t* name) {
  const DWORD size = GetEnvironmentVariableW(name, nullptr, 0);  // with the terminating null
  if (size == 0) return std::wstring();
  std::wstring value(size, L'\0');
  const DWORD length = GetEnvironmentVariableW(name, value.data(), size);
  if (length == 0 || length >= size) return std::wstring();  // changed in between: taken as unset
  value.resize(length);
  return value;
}

std::string utf8(const std::wstring& text) {
  if (text.empty()) return std::string();
  const int size =
      WideCharToMultiByte(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<size_t>(size), '\0');
  WideCharToMultiByte(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), out.data(), size, nullptr, nullptr);
  return out;
}

// The module's DLL, as a path (long paths too: the buffer grows until the name fits).
std::wstring module_path() {
  std::wstring path(MAX_PATH, L'\0');
  for (;;) {
    const DWORD length = GetModuleFileNameW(g_module, path.data(), static_cast<DWORD>(path.size()));
    if (length == 0) return std::wstring();
    if (length < path.size()) {
      path.resize(length);
      return path;
    }
    if (path.size() >= 32768) return std::wstring();
    path.resize(path.size() * 2);
  }
}

std::wstring parent(const std::wstring& path) { return path.substr(0, path.find_last_of(L"\\/")); }

// <package>/build/Release/gatehouse_iis.dll → <package>/binding/iis/boot.cjs, unless GATEHOUSE_IIS_BOOT names another.
std::string boot_script() {
  const std::wstring configured = environment(L"GATEHOUSE_IIS_BOOT");
  if (!configured.empty()) return utf8(configured);
  std::wstring dir = module_path();
  for (int up = 0; up < 3; ++up) dir = parent(dir);
  return utf8(dir + L"\\binding\\iis\\boot.cjs");
}

// Node as a DLL, as the module's build delay-loads it. The fake IIS (test/win32/fake-iis) runs the
// module inside node.exe, where a DLL named libnode.dll would be taken for Node itself by the
// addon's delay-load hook (binding/iis/delay_load_hook.cpp): it loads a stand-in of its own name.
#ifdef GATEHOUSE_FAKE_IIS
constexpr wchar_t kLibnodeDll[] = L"gatehouse-fake-libnode.dll";
#else
constexpr wchar_t kLibnodeDll[] = L"libnode.dll";
#endif

// A number of seconds from the pool's environment, or the default (a value that is not one is logged).
unsigned long seconds_setting(const wchar_t* name, const char* printable, unsigned long fallback) {
  const std::string text = utf8(environment(name));
  if (text.empty()) return fallback;
  char* rest = nullptr;
  const unsigned long value = std::strtoul(text.c_str(), &rest, 10);
  if (*rest == '\0' && text[0] >= '0' && text[0] <= '9' && value <= kMaxSeconds) return value;
  report(std::string("gatehouse: ") + printable + "=" + text.substr(0, 100) + " is not a number of seconds from 0 to " +
         std::to_string(kMaxSeconds) + "; " + std::to_string(fallback) + " is used");
  return fallback;
}

// libnode.dll, from the module's own directory (build\Release, where the release puts it), before
// anything of Node is called: the module delay-loads it, and a delay-load that fails would raise
// an exception in the worker process. The delay-load then finds this very module loaded.
bool load_libnode() {
  const std::wstring path = parent(module_path()) + L"\\" + kLibnodeDll;
  if (LoadLibraryExW(path.c_str(), nullptr, LOAD_WITH_ALTERED_SEARCH_PATH) != nullptr) return true;
  const DWORD error = GetLastError();
  report("gatehouse: " + utf8(path) + " could not be loaded (Windows error " + std::to_string(error) +
         "): Node cannot start, and every request to this site is answered 503. Install the release whole "
         "(libnode.dll beside gatehouse_iis.dll; docs/in-server-module.md)");
  return false;
}

// On Node's thread, as it ends by itself: the requests waiting for the core go on now (to a 503),
// not when their wait runs out.
void node_ended() { g_slot->core_not_coming(); }

// Starts Node once per worker process, on the first request of a gatehouse site; every later
// call returns at once. The requests that arrive while the core boots wait for it (the engine
// slot's expect_core); without a core (a failed start, the wait run out, Node ended) they are
// answered 503 with Retry-After by the engine slot. May throw (the lock): its caller is a
// notification, which answers 500.
void start_node_once() {
  if (g_node_decided.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(*g_node_mutex);
  if (g_node_state != NodeState::kNotStarted) return;
  g_node_state = NodeState::kNotStarting;
  if (!load_libnode()) {
    g_node_state = NodeState::kNoLibnode;
  } else {
    try {
      g_decision_timeout_ms = 1000 * seconds_setting(L"GATEHOUSE_IIS_DECISION_TIMEOUT",
                                                     "GATEHOUSE_IIS_DECISION_TIMEOUT", kDefaultDecisionTimeoutSeconds);
      const unsigned long start_wait =
          seconds_setting(L"GATEHOUSE_IIS_START_WAIT", "GATEHOUSE_IIS_START_WAIT", kDefaultStartWaitSeconds);
      const std::string options = utf8(environment(L"GATEHOUSE_NODE_OPTIONS"));
      g_runtime = gh_iis::NodeRuntime::Start(boot_script(), options, g_slot->link(), &report, &node_ended).release();
      if (g_runtime != nullptr) {
        g_node_state = NodeState::kStarted;
        g_slot->expect_core(std::chrono::seconds(start_wait));
      }
    } catch (...) {
      // Started, and only the wait could not be set up (its requests are refused, not held), or not started.
    }
    if (g_runtime == nullptr) report("gatehouse: Node's thread could not start");
  }
  g_node_decided.store(true, std::memory_order_release);
}

// Whether this worker process's Node has ended for good: it did not start, or it ended on its
// own. Read without the lock: the state is final once g_node_decided is set, and the runtime,
// once made, lives as long as the process.
bool node_has_ended() {
  if (!g_node_decided.load(std::memory_order_acquire)) return false;
  switch (g_node_state.load()) {
    case NodeState::kNotStarting:
      return true;
    case NodeState::kStarted:
      return g_runtime->ended();
    default:  // kNoLibnode: a new worker process would not find it either; kTerminated: IIS is ending this one
      return false;
  }
}

// Node has ended: ask IIS for a new worker process, at most once a minute (IIS starts it beside
// this one, which finishes its requests; one that fails the same way asks again a minute later,
// and IIS's rapid-fail protection counts worker processes that crash, not these). Said once.
void recycle_after_node_ended() noexcept {
  static std::atomic<ULONGLONG> last_ms{0};
  static std::atomic<bool> said{false};
  if (g_server == nullptr) return;
  const ULONGLONG now = GetTickCount64();
  ULONGLONG last = last_ms.load();
  if (last != 0 && now - last < kRecycleIntervalMs) return;
  if (!last_ms.compare_exchange_strong(last, now == 0 ? 1 : now)) return;  // another thread asked
  if (!said.exchange(true))
    report(
        "gatehouse: the embedded Node has ended (the reason is logged before this); requests are answered 503 with "
        "Retry-After, and IIS is asked for a new worker process (IHttpServer::RecycleProcess, at most once a minute)");
  g_server->RecycleProcess(L"gatehouse: the embedded Node has ended");
}

// The worker process is going away (the factory's Terminate): stop Node and wait for its thread.
void stop_node() noexcept {
  try {
    gh_iis::NodeRuntime* runtime = nullptr;
    {
      std::lock_guard<std::mutex> lock(*g_node_mutex);
      runtime = g_runtime;
      g_node_state = NodeState::kTerminated;
      g_node_decided.store(true, std::memory_order_release);
    }
    // Stops the environment (pending requests are answered 503 by the core's teardown) and joins;
    // the runtime itself stays (see g_runtime).
    if (runtime != nullptr) runtime->Stop();
  } catch (...) {
    report("gatehouse: Node could not be stopped before the worker process ended");
  }
}

// The request's entity body as the body reader reads it: asynchronous reads, and the
// deadline's cancel (IIS then completes the pending read with an error).
class RequestEntity final : public gh_iis::EntitySource {
 public:
  explicit RequestEntity(IHttpContext* context) : context_(context) {}
  DWORD remaining() override { return context_->GetRequest()->GetRemainingEntityBytes(); }
  HRESULT read(void* buffer, DWORD size, DWORD* received, BOOL* pending) override {
    return context_->GetRequest()->ReadEntityBody(buffer, size, TRUE, received, pending);
  }
  void cancel() override { context_->CancelIo(); }

 private:
  IHttpContext* context_;
};

class GatehouseModule final : public CHttpModule {
  using BodyOutcome = gh_iis::BodyReader::Outcome;

 public:
  REQUEST_NOTIFICATION_STATUS OnBeginRequest(IHttpContext* context, IHttpEventProvider*) override {
    try {
      return begin(context);
    } catch (...) {
      return failed(context, "OnBeginRequest");
    }
  }

  // On an IIS thread: a body read completed, or (after PostCompletion) the decision is here.
  REQUEST_NOTIFICATION_STATUS OnAsyncCompletion(IHttpContext* context, DWORD, BOOL, IHttpEventProvider*,
                                                IHttpCompletionInfo* completion) override {
    try {
      return resume(context, completion);
    } catch (...) {
      return failed(context, "OnAsyncCompletion");
    }
  }

  void Dispose() override { delete this; }

 private:
  REQUEST_NOTIFICATION_STATUS begin(IHttpContext* context) {
    // First, before anything can answer or fail: no path leaves a judged response cacheable.
    context->GetResponse()->DisableKernelCache(kKernelCacheReasonNonAnonymousAccess);
    start_node_once();
    if (node_has_ended()) {
      g_slot->core_not_coming();   // whoever waits for the core hears it now
      recycle_after_node_ended();  // and the engine slot answers 503 below
    }
    // Node boots: wait for the core (resumed when it attaches, or when the wait runs out).
    waiting_for_core_ = true;
    if (g_slot->wait_for_core(&GatehouseModule::Resume, context)) return RQ_NOTIFICATION_PENDING;  // touch nothing more
    waiting_for_core_ = false;
    return after_core(context);
  }

  // The core is attached, or will not be waited for any longer.
  REQUEST_NOTIFICATION_STATUS after_core(IHttpContext* context) {
    IHttpRequest* request = context->GetRequest();
    const HTTP_REQUEST* raw = request->GetRawHttpRequest();
    if (raw == nullptr) return refuse(context, 500, "The authentication layer could not read this request.");
    view_ = std::make_unique<gh_iis::HttpRequestView>(*raw, request->GetHttpMethod());
    const gh_request_view& v = view_->view();
    if (!g_slot->needs_body(reinterpret_cast<const char*>(v.path.ptr), v.path.len)) return decide(context);
    entity_ = std::make_unique<RequestEntity>(context);
    body_ = std::make_unique<gh_iis::BodyReader>(*entity_, kMaxAuthBody, kAuthBodyDeadlineMs);
    reading_body_ = true;
    const BodyOutcome outcome = body_->start();
    if (outcome == BodyOutcome::kPending) return RQ_NOTIFICATION_PENDING;  // and touch nothing more
    return after_read(context, outcome);
  }

  REQUEST_NOTIFICATION_STATUS resume(IHttpContext* context, IHttpCompletionInfo* completion) {
    if (waiting_for_core_) {
      waiting_for_core_ = false;
      return after_core(context);
    }
    if (reading_body_) {
      if (completion == nullptr) return refuse(context, 500, "The authentication layer could not read this request.");
      const BodyOutcome outcome =
          body_->on_completion(completion->GetCompletionStatus(), completion->GetCompletionBytes());
      if (outcome == BodyOutcome::kPending) return RQ_NOTIFICATION_PENDING;  // and touch nothing more
      return after_read(context, outcome);
    }
    if (decision_ == nullptr) return RQ_NOTIFICATION_CONTINUE;
    return apply(context);
  }

  // An exception reached a notification boundary. Nothing is pending (see the top of the
  // file), so this handler owns the request: stop the body's deadline, log, answer 500.
  REQUEST_NOTIFICATION_STATUS failed(IHttpContext* context, const char* where) noexcept {
    stop_deadline();
    reading_body_ = false;
    body_.reset();  // its destructor stops and waits for the deadline's timer
    try {
      report(std::string("gatehouse: an exception ended ") + where + "; the request is answered 500");
      return refuse(context, 500, "The authentication layer failed on this request.");
    } catch (...) {
      return fail(context, 500);
    }
  }

  // On Node's thread (or the engine's shutdown): resume the pending notification.
  // A failed PostCompletion leaves the request to IIS's own timeouts (no other thread may finish
  // it from here): said in the event log, so that such a hang is never silent.
  static void Resume(void* context) {
    const HRESULT hr = static_cast<IHttpContext*>(context)->PostCompletion(0);
    if (FAILED(hr)) report_request_failure("PostCompletion", hr);
  }

  // The body is read, or will not be.
  REQUEST_NOTIFICATION_STATUS after_read(IHttpContext* context, BodyOutcome outcome) {
    reading_body_ = false;
    switch (outcome) {
      case BodyOutcome::kComplete:
        view_->set_body(body_->body().data(), body_->body().size());
        return decide(context);
      case BodyOutcome::kTimedOut: {
        // The sidecar's answer; the unread rest of the body would hold the connection, so it
        // is closed after the response.
        const REQUEST_NOTIFICATION_STATUS status = refuse(context, 408, "The body did not arrive in time.");
        disconnect_after_response(context);  // after respond's Clear()
        return status;
      }
      case BodyOutcome::kBroken:  // the client went away
        return refuse(context, 400, "The body could not be read.");
      case BodyOutcome::kFailed:
      case BodyOutcome::kPending:  // never passed here
        break;
    }
    return refuse(context, 500, "The authentication layer could not read this request.");
  }

  // The engine holds its own reference to the decision until it completes it (exactly once, even
  // after the deadline has answered), and so does the deadline: either may come last.
  using SharedDecision = std::shared_ptr<gh_iis::DeferredDecision>;

  static void CompleteShared(void* holder, const gh_decision* decision) {
    const std::unique_ptr<SharedDecision> owned(static_cast<SharedDecision*>(holder));
    gh_iis::DeferredDecision::OnComplete(owned->get(), decision);
  }

  // On the deadline's thread: no decision in time. The first completion wins (DeferredDecision):
  // if the core's comes later, it is dropped; if it came first, this does nothing.
  static void DecisionTimedOut(const SharedDecision& decision, unsigned long timeout_ms) {
    if (decision->completions() > 0) return;
    const gh::ErrorResponse answer(503, "The authentication layer did not decide in time.");
    gh_iis::DeferredDecision::OnComplete(decision.get(), answer.decision());
    char line[160];
    std::snprintf(line, sizeof line,
                  "a decision did not come within %lu s (GATEHOUSE_IIS_DECISION_TIMEOUT): answered 503",
                  timeout_ms / 1000);
    report_request_trouble(line);
  }

  REQUEST_NOTIFICATION_STATUS decide(IHttpContext* context) {
    decision_ = std::make_shared<gh_iis::DeferredDecision>(&GatehouseModule::Resume, context);
    auto engine_holder = std::make_unique<SharedDecision>(decision_);
    const unsigned long timeout_ms = g_decision_timeout_ms.load();
    if (timeout_ms > 0) {
      deadline_ = g_deadlines->schedule(std::chrono::milliseconds(timeout_ms),
                                        [decision = decision_, timeout_ms] { DecisionTimedOut(decision, timeout_ms); });
    }
    // The engine completes every submission exactly once, and frees the holder then.
    g_slot->submit(view_->view(), &GatehouseModule::CompleteShared, engine_holder.release());
    if (!decision_->settle_after_submit()) return RQ_NOTIFICATION_PENDING;
    return apply(context);
  }

  void stop_deadline() noexcept {
    if (deadline_ != 0) g_deadlines->cancel(deadline_);
    deadline_ = 0;
  }

  REQUEST_NOTIFICATION_STATUS apply(IHttpContext* context) {
    stop_deadline();
    const gh::OwnedDecision& d = decision_->decision();
    if (d.kind() != GH_DECISION_CONTINUE) return respond(context, d);
    IHttpRequest* request = context->GetRequest();
    // Remove first: a spoofed alias never survives next to the identity set after it.
    for (const std::string& name : d.remove()) {
      const HRESULT hr = delete_every(request, name.c_str());
      if (FAILED(hr)) {
        report_request_failure("IHttpRequest::DeleteHeader", hr);
        return refuse(context, 500, "The identity headers could not be set.");
      }
    }
    for (const auto& [name, value] : d.headers()) {
      const HRESULT hr = value.size() > 0xFFFF
                             ? E_INVALIDARG
                             : request->SetHeader(name.c_str(), value.c_str(), static_cast<USHORT>(value.size()), TRUE);
      if (FAILED(hr)) {
        report_request_failure("IHttpRequest::SetHeader", hr);
        return refuse(context, 500, "The identity headers could not be set.");
      }
    }
    // The module read this request's body (an auth-route POST the core lets through): give it
    // back, or the app would read only what the module left unread.
    if (body_ != nullptr && !body_->body().empty()) {
      const HRESULT hr = give_body_back(context, body_->body().data(), body_->body().size());
      if (FAILED(hr)) {
        report_request_failure("IHttpRequest::InsertEntityBody", hr);
        return refuse(context, 500, "The request's body could not be passed on.");
      }
    }
    return RQ_NOTIFICATION_CONTINUE;
  }

  // IIS keeps the buffer, uncopied, until the app has read it: request-lifetime memory.
  static HRESULT give_body_back(IHttpContext* context, const void* data, size_t size) {
    if (size > 0xFFFFFFFFu) return E_INVALIDARG;
    void* copy = context->AllocateRequestMemory(static_cast<DWORD>(size));
    if (copy == nullptr) return E_OUTOFMEMORY;
    std::memcpy(copy, data, size);
    return context->GetRequest()->InsertEntityBody(copy, static_cast<DWORD>(size));
  }

  // Closes the client's connection after this response, so the unread rest of a body cannot
  // hold it: on HTTP/1.x only. An HTTP/2 (or HTTP/3) connection carries other requests' streams
  // too, and the response ends this request's stream by itself (http.sys resets what the
  // client still sends on it), so the connection stays.
  static void disconnect_after_response(IHttpContext* context) noexcept {
    USHORT major = 0;
    USHORT minor = 0;
    context->GetRequest()->GetHttpVersion(&major, &minor);
    if (major < 2) context->GetResponse()->SetNeedDisconnect();
  }

  // http.sys keeps each occurrence of an unknown header as an entry of its own, and one
  // DeleteHeader may remove only one of them: delete until GetHeader finds none. Bounded by
  // the request's own header count, so an IIS that reports success without removing anything
  // fails the request (500) rather than spinning or letting a spoofed copy through.
  static HRESULT delete_every(IHttpRequest* request, const char* name) {
    const HTTP_REQUEST* raw = request->GetRawHttpRequest();
    const DWORD bound = (raw == nullptr ? 0 : raw->Headers.UnknownHeaderCount) + 2;
    for (DWORD round = 0; round < bound; ++round) {
      if (request->GetHeader(name) == nullptr) return S_OK;
      const HRESULT hr = request->DeleteHeader(name);
      if (FAILED(hr)) return hr;
    }
    return request->GetHeader(name) == nullptr ? S_OK : HRESULT_FROM_WIN32(ERROR_INVALID_STATE);
  }

  static REQUEST_NOTIFICATION_STATUS respond(IHttpContext* context, const gh::OwnedDecision& d) {
    IHttpResponse* response = context->GetResponse();
    response->Clear();
    const HRESULT status_hr = set_status(response, static_cast<USHORT>(d.status()));
    if (FAILED(status_hr)) {
      report_request_failure("IHttpResponse::SetStatus", status_hr);
      return fail(context, 500);
    }
    for (const auto& [name, value] : d.headers()) {
      if (value.size() > 0xFFFF) return fail(context, 500);
      // Set-Cookie may repeat: append rather than replace.
      const HRESULT hr = response->SetHeader(name.c_str(), value.c_str(), static_cast<USHORT>(value.size()),
                                             _stricmp(name.c_str(), "Set-Cookie") != 0);
      if (FAILED(hr)) {
        // A response without one of its headers (a cookie, a Location) is not the core's answer.
        report_request_failure("IHttpResponse::SetHeader", hr);
        return fail(context, 500);
      }
    }
    if (!d.body().empty()) {
      // The chunk must outlive this call: request-lifetime memory from IIS.
      void* copy = context->AllocateRequestMemory(static_cast<DWORD>(d.body().size()));
      if (copy == nullptr) return fail(context, 500);
      std::memcpy(copy, d.body().data(), d.body().size());
      HTTP_DATA_CHUNK chunk{};
      chunk.DataChunkType = HttpDataChunkFromMemory;
      chunk.FromMemory.pBuffer = copy;
      chunk.FromMemory.BufferLength = static_cast<ULONG>(d.body().size());
      DWORD sent = 0;
      const HRESULT hr = response->WriteEntityChunks(&chunk, 1, FALSE, FALSE, &sent);
      if (FAILED(hr)) {
        report_request_failure("IHttpResponse::WriteEntityChunks", hr);
        return fail(context, 500);
      }
    }
    return RQ_NOTIFICATION_FINISH_REQUEST;
  }

  // The core's answer stands as written: IIS's custom error pages must not replace it.
  static HRESULT set_status(IHttpResponse* response, USHORT status) {
    return response->SetStatus(status, reason(status), 0, S_OK, nullptr, TRUE);
  }

  static const char* reason(USHORT status) {
    switch (status) {
      case 200:
        return "OK";
      case 302:
        return "Found";
      case 400:
        return "Bad Request";
      case 401:
        return "Unauthorized";
      case 403:
        return "Forbidden";
      case 404:
        return "Not Found";
      case 405:
        return "Method Not Allowed";
      case 408:
        return "Request Timeout";
      case 413:
        return "Payload Too Large";
      case 500:
        return "Internal Server Error";
      case 502:
        return "Bad Gateway";
      case 503:
        return "Service Unavailable";
      default:
        return "";
    }
  }

  // What the module answers by itself, in the shape of every native error: {"error": message}.
  static REQUEST_NOTIFICATION_STATUS refuse(IHttpContext* context, int status, const char* message) {
    const gh::ErrorResponse answer(status, message);
    return respond(context, gh::OwnedDecision(*answer.decision()));
  }

  // The bare status, for when even an answer cannot be written (respond's own failures).
  // Calls only IIS: nothing here allocates or throws.
  static REQUEST_NOTIFICATION_STATUS fail(IHttpContext* context, USHORT status) noexcept {
    IHttpResponse* response = context->GetResponse();
    response->Clear();
    const HRESULT hr = set_status(response, status);
    if (FAILED(hr)) report_request_failure("IHttpResponse::SetStatus", hr);
    return RQ_NOTIFICATION_FINISH_REQUEST;
  }

  std::unique_ptr<gh_iis::HttpRequestView> view_;
  // Declared before the reader, which uses it until its own end.
  std::unique_ptr<RequestEntity> entity_;
  std::unique_ptr<gh_iis::BodyReader> body_;
  bool reading_body_ = false;
  bool waiting_for_core_ = false;
  std::shared_ptr<gh_iis::DeferredDecision> decision_;
  std::uint64_t deadline_ = 0;
};

// final: Terminate's `delete this` deletes exactly this type (the interface has no virtual destructor).
class GatehouseModuleFactory final : public IHttpModuleFactory {
 public:
  HRESULT GetHttpModule(CHttpModule** module, IModuleAllocator*) override {
    if (module == nullptr) return E_POINTER;
    try {
      *module = new GatehouseModule();
      return S_OK;
    } catch (...) {
      *module = nullptr;
      return HRESULT_FROM_WIN32(ERROR_NOT_ENOUGH_MEMORY);
    }
  }

  // The worker process is going away: stop Node (pending requests are answered 503 by the
  // core's teardown). IIS calls this outside the loader lock, so waiting for Node's thread is safe here.
  void Terminate() override {
    stop_node();
    delete this;
  }
};

// RegisterModule's work; it may throw (allocations), RegisterModule catches.
// Node does not start here: IIS registers a global module in every worker process, also those
// that serve no site using gatehouse (see start_node_once).
HRESULT register_module(DWORD, IHttpModuleRegistrationInfo* info, IHttpServer* server) {
  g_server = server;
  g_slot = new gh_iis::EngineSlot();
  g_deadlines = new gh_iis::DeadlineTimer();
  g_node_mutex = new std::mutex();
  auto* factory = new GatehouseModuleFactory();
  const HRESULT hr = info->SetRequestNotifications(factory, RQ_BEGIN_REQUEST, 0);
  if (FAILED(hr)) {
    report_request_failure("IHttpModuleRegistrationInfo::SetRequestNotifications", hr);
    delete factory;  // IIS did not take it, so it never calls Terminate
  }
  return hr;
}

}  // namespace

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID) {
  if (reason == DLL_PROCESS_ATTACH) {
    g_module = instance;
    DisableThreadLibraryCalls(instance);
  }
  return TRUE;
}

// IIS calls this once per worker process when it loads the module.
extern "C" __declspec(dllexport) HRESULT
    __stdcall RegisterModule(DWORD version, IHttpModuleRegistrationInfo* info, IHttpServer* server) {
  try {
    return register_module(version, info, server);
  } catch (const std::bad_alloc&) {
    report("gatehouse: out of memory while loading the module");
    return HRESULT_FROM_WIN32(ERROR_NOT_ENOUGH_MEMORY);
  } catch (...) {
    report("gatehouse: an exception ended the module's registration");
    return E_FAIL;
  }
}
