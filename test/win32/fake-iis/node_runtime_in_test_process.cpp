// gh_iis::NodeRuntime for the fake IIS, linked in place of binding/iis/node_runtime.cpp: the one
// seam between the module's own code (binding/iis/module.cpp and the files it lists, unchanged) and the test.
//
// The embedding creates a Node environment on an 8 MB thread inside w3wp.exe (node::
// CreateEnvironment over libnode.dll), gives it the `gatehouse_host` binding and runs
// binding/iis/boot.cjs in it. No Windows libnode.dll can be had here, so this asks the Node
// that runs the test (the official Windows node.exe, under wine) to start a worker thread
// instead: an environment of its own, with its own event loop and teardown, given the same
// binding (binding/iis/linked_binding.cpp, set up here exactly as node_runtime.cpp sets it up)
// and running the same boot script. process.exit() or an uncaught exception in it ends that
// environment only, as the embedding's process-exit handler makes it; the in-server core's
// teardown then detaches it from the module, and ended() says so. GATEHOUSE_NODE_OPTIONS goes
// through the module's own parse_node_options: refused options are reported, the accepted ones
// handed to the worker thread's start.
//
// node_runtime.cpp itself (the environment, node::SetProcessExitHandler, the 8 MB stack
// thread, the options as InitializeOncePerProcess arguments) runs for real against Debian's
// libnode on Linux (test/inserver/embedding.test.ts); inside w3wp, and the addon's delay-load of
// libnode.dll there, only on a real IIS (.github/workflows/iis.yml).
#include <mutex>

#include "../../../binding/iis/linked_binding.h"
#include "../../../binding/iis/node_options.h"
#include "../../../binding/iis/node_runtime.h"
#include "embedded_node.h"

namespace gh_iis {

struct NodeRuntime::State {
  std::mutex mutex;
  bool stopped = false;
};

namespace {
NodeRuntime::Ended g_on_end = nullptr;  // one Node per worker process: the module's hook
}  // namespace

NodeRuntime::NodeRuntime(std::unique_ptr<State> state) : state_(std::move(state)) {}

std::unique_ptr<NodeRuntime> NodeRuntime::Start(const std::string& boot_script, const std::string& node_options,
                                                const gh_host_link* link, Report report, Ended ended) {
  set_linked_binding_host(link, report);
  g_on_end = ended;
  const NodeOptions options = parse_node_options(node_options);
  for (const std::string& refused : options.refused) report("gatehouse: GATEHOUSE_NODE_OPTIONS: " + refused);
  if (!fake_iis::start_embedded_node(boot_script, options.accepted)) return nullptr;
  return std::unique_ptr<NodeRuntime>(new NodeRuntime(std::make_unique<State>()));
}

void NodeRuntime::Stop() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->stopped) return;
  state_->stopped = true;
  fake_iis::stop_embedded_node();
}

bool NodeRuntime::ended() const {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->stopped) return true;
  }
  return fake_iis::embedded_node_ended();
}

NodeRuntime::~NodeRuntime() { Stop(); }

}  // namespace gh_iis

namespace fake_iis {

void embedded_node_has_ended() {
  if (gh_iis::g_on_end != nullptr) gh_iis::g_on_end();
}

}  // namespace fake_iis
