#include "node_runtime.h"

#include <node.h>
#include <uv.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "host_link.h"

namespace gh_iis {

namespace {

// AddLinkedBinding's Node-API form has no user data: the one host link of this
// process (one module instance per worker process) is kept here.
std::atomic<const gh_host_link*> g_link{nullptr};

napi_value init_linked_binding(napi_env env, napi_value exports) {
  napi_value link = host_link_external(env, g_link.load());
  if (link == nullptr || napi_set_named_property(env, exports, "link", link) != napi_ok) return nullptr;
  return exports;
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
  std::thread thread;

  // Set by the Node thread once the loop can be woken; guarded by mutex.
  std::mutex mutex;
  uv_async_t* stop_signal = nullptr;
  bool stopping = false;

  void run();
};

void NodeRuntime::State::run() {
  std::vector<std::string> args{"gatehouse-iis", boot_script};
  // The web server owns stdio, signals, resource limits and memory pages: Node leaves them alone.
  auto init = node::InitializeOncePerProcess(
      args, static_cast<node::ProcessInitializationFlags::Flags>(
                node::ProcessInitializationFlags::kNoStdioInitialization | node::ProcessInitializationFlags::kNoDefaultSignalHandling |
                node::ProcessInitializationFlags::kNoAdjustResourceLimits | node::ProcessInitializationFlags::kNoUseLargePages |
                node::ProcessInitializationFlags::kNoPrintHelpOrVersionOutput));
  for (const std::string& error : init->errors()) report("Node: " + error);
  if (init->early_return()) {
    report("Node did not start (exit code " + std::to_string(init->exit_code()) + ")");
    return;
  }
  std::vector<std::string> errors;
  std::vector<std::string> all_exec_args = init->exec_args();
  all_exec_args.insert(all_exec_args.end(), exec_args.begin(), exec_args.end());
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

      node::AddLinkedBinding(env, "gatehouse_host", init_linked_binding, NAPI_VERSION);
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
      if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&stop))) uv_close(reinterpret_cast<uv_handle_t*>(&stop), nullptr);
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

std::unique_ptr<NodeRuntime> NodeRuntime::Start(const std::string& boot_script, const std::vector<std::string>& exec_args,
                                                const gh_host_link* link, Report report) {
  g_link.store(link);
  auto state = std::make_unique<State>();
  state->boot_script = boot_script;
  state->exec_args = exec_args;
  state->report = report;
  State* raw = state.get();
  try {
    state->thread = std::thread([raw] { raw->run(); });
  } catch (const std::system_error&) {
    return nullptr;
  }
  return std::unique_ptr<NodeRuntime>(new NodeRuntime(std::move(state)));
}

NodeRuntime::~NodeRuntime() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
    if (state_->stop_signal != nullptr) uv_async_send(state_->stop_signal);
  }
  if (state_->thread.joinable()) state_->thread.join();
}

}  // namespace gh_iis
