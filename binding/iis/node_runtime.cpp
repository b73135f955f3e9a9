#include "node_runtime.h"

#include <node.h>
#include <uv.h>

#include <atomic>
#include <mutex>

#include "linked_binding.h"
#include "node_options.h"
#include "stack_thread.h"

namespace gh_iis {

namespace {

// The Node thread's stack: reserved, committed as it grows. V8 keeps its own default limit
// (--stack-size, about 984 KB on x64), so a runaway recursion is a RangeError with megabytes of
// real stack to spare for the native frames under and above it (the addon, the engine, V8's
// own). A larger --stack-size is refused by parse_node_options (binding/iis/node_options.h):
// V8 would run past the real stack, and STATUS_STACK_OVERFLOW ends the worker process.

// Public require, from the boot script's own location; the boot script is CommonJS so that it
// can import() the ESM entry normally. The main script's own require takes built-in modules
// only, and no "node:" prefix before Node 20. A boot script that throws as it loads (it is not
// there, say) has its reason written to the module's log before Node ends: the worker process
// has no console.
constexpr const char kMainScript[] =
    "const boot = process.argv[1];"
    "try {"
    "  require('module').createRequire(boot)(boot);"
    "} catch (error) {"
    "  const why = (error && error.stack) || String(error);"
    "  process._linkedBinding('gatehouse_host').report(`gatehouse: the boot script ${boot} failed: ${why}`.slice(0, "
    "2000));"
    "  throw error;"
    "}";

}  // namespace

struct NodeRuntime::State {
  std::string boot_script;
  std::string node_options;
  Report report = nullptr;
  Ended on_end = nullptr;
  StackThread thread;

  // Set by the Node thread once the loop can be woken; guarded by mutex.
  std::mutex mutex;
  uv_async_t* stop_signal = nullptr;
  bool stopping = false;
  std::atomic<bool> ended{false};

  void run();
  void run_node();
};

void NodeRuntime::State::run() {
  run_node();
  ended.store(true, std::memory_order_release);
  bool asked = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    asked = stopping;
  }
  if (!asked && on_end != nullptr) on_end();
}

void NodeRuntime::State::run_node() {
  // GATEHOUSE_NODE_OPTIONS as command-line options, where Node reads its own and hands V8 its
  // flags (--max-old-space-size); exec_args given to CommonEnvironmentSetup are only recorded
  // (process.execArgv), never parsed. The boot script comes last, as a script does.
  const NodeOptions options = parse_node_options(node_options);
  for (const std::string& refused : options.refused) report("gatehouse: GATEHOUSE_NODE_OPTIONS: " + refused);
  std::vector<std::string> args{"gatehouse-iis"};
  args.insert(args.end(), options.accepted.begin(), options.accepted.end());
  args.push_back(boot_script);
  // The web server owns stdio, signals, resource limits and memory pages: Node leaves them alone.
  // NODE_OPTIONS belongs to the machine's other Node programs: only GATEHOUSE_NODE_OPTIONS applies.
  auto init = node::InitializeOncePerProcess(args, static_cast<node::ProcessInitializationFlags::Flags>(
                                                       node::ProcessInitializationFlags::kNoStdioInitialization |
                                                       node::ProcessInitializationFlags::kNoDefaultSignalHandling |
                                                       node::ProcessInitializationFlags::kNoAdjustResourceLimits |
                                                       node::ProcessInitializationFlags::kNoUseLargePages |
                                                       node::ProcessInitializationFlags::kDisableNodeOptionsEnv |
                                                       node::ProcessInitializationFlags::kNoPrintHelpOrVersionOutput));
  for (const std::string& error : init->errors()) report("gatehouse: Node did not start: " + error);
  if (init->early_return()) {
    report("gatehouse: Node did not start (exit code " + std::to_string(init->exit_code()) + ")");
    return;
  }
  std::vector<std::string> errors;
  std::unique_ptr<node::CommonEnvironmentSetup> setup =
      node::CommonEnvironmentSetup::Create(init->platform(), &errors, init->args(), init->exec_args());
  for (const std::string& error : errors) report("gatehouse: Node's environment: " + error);
  if (setup) {
    v8::Isolate* isolate = setup->isolate();
    node::Environment* env = setup->env();
    {
      v8::Locker locker(isolate);
      v8::Isolate::Scope isolate_scope(isolate);
      v8::HandleScope handle_scope(isolate);
      v8::Context::Scope context_scope(setup->context());

      // The module decides when Node stops: this handle keeps the loop alive
      // (the interceptor's own handles never do) until the module asks.
      uv_async_t stop{};
      uv_async_init(setup->event_loop(), &stop, [](uv_async_t* handle) {
        node::Stop(static_cast<node::Environment*>(handle->data));
        uv_close(reinterpret_cast<uv_handle_t*>(handle), nullptr);
      });
      stop.data = env;
      bool stop_now = false;
      {
        std::lock_guard<std::mutex> lock(mutex);
        stop_signal = &stop;
        stop_now = stopping;
      }
      if (stop_now) uv_async_send(&stop);

      // process.exit() and an uncaught exception end here instead of in exit(), which would end
      // the worker process with every site it serves: the environment stops, the core's teardown
      // detaches it from the module (whose requests are then answered 503, as before the core
      // started), and this thread ends. Node cannot start again in this process (its per-process
      // state is torn down once): the module asks IIS for a new worker process (ended()).
      node::SetProcessExitHandler(env, [this](node::Environment* exiting, int exit_code) {
        report("gatehouse: Node exited with code " + std::to_string(exit_code) +
               " (process.exit(), an uncaught exception or a failed start of the core)");
        node::Stop(exiting);
      });
      node::AddLinkedBinding(env, kLinkedBindingName, init_linked_binding, NAPI_VERSION);
      if (node::LoadEnvironment(env, kMainScript).IsEmpty()) {
        report("gatehouse: the boot script failed to run: " + boot_script);
      } else {
        node::SpinEventLoop(env);  // the exit handler reported an exit; Stop() is the module's own
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        stop_signal = nullptr;
      }
      if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&stop)))
        uv_close(reinterpret_cast<uv_handle_t*>(&stop), nullptr);
      uv_run(setup->event_loop(), UV_RUN_NOWAIT);  // let the close callback run before `stop` goes away
      node::Stop(env);
    }
  } else {
    report("gatehouse: Node's environment could not be created");
  }
  setup.reset();
  node::TearDownOncePerProcess();
}

NodeRuntime::NodeRuntime(std::unique_ptr<State> state) : state_(std::move(state)) {}

std::unique_ptr<NodeRuntime> NodeRuntime::Start(const std::string& boot_script, const std::string& node_options,
                                                const gh_host_link* link, Report report, Ended ended) {
  set_linked_binding_host(link, report);
  auto state = std::make_unique<State>();
  state->boot_script = boot_script;
  state->node_options = node_options;
  state->report = report;
  state->on_end = ended;
  if (!state->thread.start(
          kNodeThreadStackBytes, [](void* raw) { static_cast<State*>(raw)->run(); }, state.get()))
    return nullptr;
  return std::unique_ptr<NodeRuntime>(new NodeRuntime(std::move(state)));
}

void NodeRuntime::Stop() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
    if (state_->stop_signal != nullptr) uv_async_send(state_->stop_signal);
  }
  state_->thread.join();
}

bool NodeRuntime::ended() const { return state_->ended.load(std::memory_order_acquire); }

NodeRuntime::~NodeRuntime() { Stop(); }

}  // namespace gh_iis
