// Node, embedded in the web server's worker process, with the gatehouse core
// loaded: a thread of its own runs one Node environment whose main script
// loads binding/iis/boot.cjs (which starts src/inserver/main.ts). The
// environment gets a linked binding, `gatehouse_host`, whose `link` is the
// module's host link: the in-server entry attaches its interceptor there.
// Needs Node built as a shared library (libnode; see the README) and its
// headers. No IIS headers: only the module calls it.
#ifndef GATEHOUSE_IIS_NODE_RUNTIME_H
#define GATEHOUSE_IIS_NODE_RUNTIME_H

#include <memory>
#include <string>
#include <vector>

#include "../core/gh_core.h"

namespace gh_iis {

class NodeRuntime {
 public:
  /** Why the runtime stopped or failed to start (written to the module's log by the caller). */
  using Report = void (*)(const std::string& message);

  /**
   * Starts Node on its own thread: argv[1] is boot_script, exec_args are Node
   * options (e.g. --max-old-space-size). Returns at once; the core attaches
   * to link when it is ready. NULL if the thread could not start.
   */
  static std::unique_ptr<NodeRuntime> Start(const std::string& boot_script, const std::vector<std::string>& exec_args,
                                            const gh_host_link* link, Report report);

  /** Stops the environment (pending requests are answered 503 by the core's teardown) and joins the thread. */
  ~NodeRuntime();

  NodeRuntime(const NodeRuntime&) = delete;
  NodeRuntime& operator=(const NodeRuntime&) = delete;

  struct State;

 private:
  explicit NodeRuntime(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace gh_iis

#endif
