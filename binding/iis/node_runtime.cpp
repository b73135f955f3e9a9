#include "node_runtime.h"

#include <node.h>
#include <uv.h>

#include <cstdlib>
#include <mutex>

#include "linked_binding.h"
#include "stack_thread.h"

namespace gh_iis {

namespace {

// The Node thread's stack: reserved, committed as it grows. V8 keeps its own default limit
// (--stack-size, about 984 KB on x64), so a runaway recursion is a RangeError with megabytes of
// real stack to spare for the native frames under and above it (the addon, the engine, V8's
// own). A --stack-size of more than kMaxV8StackKb is not passed on (it would let V8 run past
// the real stack: STATUS_STACK_OVERFLOW ends the worker process).
constexpr std::size_t kThreadStackBytes = 8u * 1024 * 1024;
constexpr unsigned long kMaxV8StackKb = 7 * 1024;

// "--stack-size=N" or "--stack_size=N": N, else 0.
unsigned long v8_stack_size_kb(const std::string& option) {
  for (const char* name : {"--stack-size=", "--stack_size="}) {
    const std::string prefix(name);
    if (option.compare(0, prefix.size(), prefix) == 0) return std::strtoul(option.c_str() + prefix.size(), nullptr, 10);
  }
  return 0;
}

// Public require, from the boot script's own location; the boot script is
// CommonJS so that it can import() the ESM entry normally.
constexpr const char kMainScript[] =
    "const { createRequire } = require('node:module');"
    "createRequire(process.argv[1])(process.argv[1]);";

}  // namespace

struct NodeRuntime::State {
  std::string boot_script;
  std::vector<std::string> exec_args;
  Report report = nullptr;
  StackThread thread;

  // Set by the Node thread once the loop can be woken; guarded by mutex.
  std::mutex mutex;
  uv_async_t* stop_signal = nullptr;
  bool stopping = false;

  void run();
};

void NodeRuntime::State::run() {
  std::vector<std::string> args{"gatehouse-iis", boot_script};
  // The web server owns stdio, signals, resource limits and memory pages: Node leaves them alone.
  auto init = node::InitializeOncePerProcess(args, static_cast<node::ProcessInitializationFlags::Flags>(
                                                       node::ProcessInitializationFlags::kNoStdioInitialization |
                                                       node::ProcessInitializationFlags::kNoDefaultSignalHandling |
                                                       node::ProcessInitializationFlags::kNoAdjustResourceLimits |
                                                       node::ProcessInitializationFlags::kNoUseLargePages |
                                                       node::ProcessInitializationFlags::kNoPrintHelpOrVersionOutput));
  for (const std::string& error : init->errors()) report("Node: " + error);
  if (init->early_return()) {
    report("Node did not start (exit code " + std::to_string(init->exit_code()) + ")");
    return;
  }
  std::vector<std::string> errors;
  std::vector<std::string> all_exec_args = init->exec_args();
  for (const std::string& option : exec_args) {
    if (v8_stack_size_kb(option) > kMaxV8StackKb) {
      report("gatehouse: " + option +
             " is more than the Node thread's stack allows (at most --stack-size=" + std::to_string(kMaxV8StackKb) +
             " on its " + std::to_string(kThreadStackBytes / (1024 * 1024)) + " MB); ignored");
      continue;
    }
    all_exec_args.push_back(option);
  }
  std::unique_ptr<node::CommonEnvironmentSetup> setup =
      node::CommonEnvironmentSetup::Create(init->platform(), &errors, init->args(), all_exec_args);
  for (const std::string& error : errors) report("Node: " + error);
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
      // state is torn down once), so it stays so until the application pool recycles.
      node::SetProcessExitHandler(env, [this](node::Environment* exiting, int exit_code) {
        report("gatehouse: Node exited with code " + std::to_string(exit_code) +
               " (process.exit() or an uncaught exception in the core); the module answers 503 until the application "
               "pool recycles");
        node::Stop(exiting);
      });
      node::AddLinkedBinding(env, kLinkedBindingName, init_linked_binding, NAPI_VERSION);
      if (node::LoadEnvironment(env, kMainScript).IsEmpty()) {
        report("the gatehouse boot script failed to run: " + boot_script);
      } else {
        const v8::Maybe<int> exit_code = node::SpinEventLoop(env);
        if (exit_code.IsNothing() || exit_code.FromJust() != 0) report("Node stopped");
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
    report("Node's environment could not be created");
  }
  setup.reset();
  node::TearDownOncePerProcess();
}

NodeRuntime::NodeRuntime(std::unique_ptr<State> state) : state_(std::move(state)) {}

std::unique_ptr<NodeRuntime> NodeRuntime::Start(const std::string& boot_script,
                                                const std::vector<std::string>& exec_args, const gh_host_link* link,
                                                Report report) {
  set_linked_binding_host(link, report);
  auto state = std::make_unique<State>();
  state->boot_script = boot_script;
  state->exec_args = exec_args;
  state->report = report;
  if (!state->thread.start(
          kThreadStackBytes, [](void* raw) { static_cast<State*>(raw)->run(); }, state.get()))
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

NodeRuntime::~NodeRuntime() { Stop(); }

}  // namespace gh_iis
