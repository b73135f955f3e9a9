#include "embedded_node.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

#include "event_log.h"
#include "module_files.h"
#include "node_runtime.h"
#include "pool_settings.h"
#include "wide_text.h"

namespace gh_iis {
namespace {

// How long, after Node's start, requests wait for the core to attach rather than being refused
// (GATEHOUSE_IIS_START_WAIT, seconds), and how long a decision may take before the module
// answers 503 itself (GATEHOUSE_IIS_DECISION_TIMEOUT, seconds): a core whose promise never
// settles must not hold a request for ever.
constexpr unsigned long kDefaultStartWaitSeconds = 10;
constexpr unsigned long kDefaultDecisionTimeoutSeconds = 30;

// How often the module asks IIS for a new worker process while its Node has ended: IIS starts
// the new one beside this one (overlapped recycling), which may itself fail the same way.
constexpr ULONGLONG kRecycleIntervalMs = 60 * 1000;

HMODULE g_module = nullptr;
IHttpServer* g_server = nullptr;  // RegisterModule's: the worker process's services
EngineSlot* g_slot = nullptr;

// Plain pointers on purpose: a static destructor would run under the loader lock
// (DLL_PROCESS_DETACH) and must never wait for Node's thread. The runtime, once made, is never
// freed (requests may still ask it whether Node has ended): the worker process is its end.
// kNoLibnode: libnode.dll cannot be loaded; kNotStarting: Node's thread could not start.
enum class NodeState { kNotStarted, kStarted, kNotStarting, kNoLibnode, kTerminated };
std::mutex* g_node_mutex = nullptr;                           // made by prepare_embedded_node, never destroyed
std::atomic<NodeState> g_node_state{NodeState::kNotStarted};  // written under g_node_mutex
std::atomic<bool> g_node_decided{false};                      // the fast path: anything but kNotStarted
NodeRuntime* g_runtime = nullptr;
std::atomic<unsigned long> g_decision_timeout_ms{kDefaultDecisionTimeoutSeconds * 1000};

// libnode.dll, from the module's own directory (build\Release, where the release puts it), before
// anything of Node is called: the module delay-loads it, and a delay-load that fails would raise
// an exception in the worker process. The delay-load then finds this very module loaded.
bool load_libnode() {
  const std::wstring path = libnode_path(g_module);
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

}  // namespace

void prepare_embedded_node(HMODULE module, IHttpServer* server, EngineSlot* slot) {
  g_module = module;
  g_server = server;
  g_slot = slot;
  g_node_mutex = new std::mutex();
}

void start_node_once() {
  if (g_node_decided.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(*g_node_mutex);
  if (g_node_state != NodeState::kNotStarted) return;
  g_node_state = NodeState::kNotStarting;
  if (!load_libnode()) {
    g_node_state = NodeState::kNoLibnode;
  } else {
    try {
      g_decision_timeout_ms = 1000 * seconds_setting(L"GATEHOUSE_IIS_DECISION_TIMEOUT", kDefaultDecisionTimeoutSeconds);
      const unsigned long start_wait = seconds_setting(L"GATEHOUSE_IIS_START_WAIT", kDefaultStartWaitSeconds);
      const std::string options = utf8(environment(L"GATEHOUSE_NODE_OPTIONS"));
      g_runtime = NodeRuntime::Start(boot_script(g_module), options, g_slot->link(), &report, &node_ended).release();
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

void stop_node() noexcept {
  try {
    NodeRuntime* runtime = nullptr;
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

unsigned long decision_timeout_ms() { return g_decision_timeout_ms.load(); }

}  // namespace gh_iis
