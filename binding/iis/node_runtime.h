// Node, embedded in the web server's worker process, with the gatehouse core
// loaded: a thread of its own (8 MB of stack, binding/iis/stack_thread.h) runs one
// Node environment whose main script loads binding/iis/boot.cjs (which starts
// src/inserver/main.ts). The environment gets a linked binding, `gatehouse_host`,
// whose `link` is the module's host link (the in-server entry attaches its
// interceptor there) and whose `report(message)` writes to the module's log.
// process.exit() or an uncaught exception stops the environment (a process-exit
// handler), never the process: the module then answers 503 and asks IIS for a new
// worker process (ended() says when). GATEHOUSE_NODE_OPTIONS reaches Node as
// command-line arguments of InitializeOncePerProcess (binding/iis/node_options.h).
// Needs Node built as a shared library (libnode; see the README) and its
// headers. No IIS headers: only the module calls it. The linked binding itself is
// binding/iis/linked_binding.cpp.
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

  /** Node has ended by itself (not by Stop()): called once, on Node's thread, as it ends. */
  using Ended = void (*)();

  /**
   * Starts Node on its own thread: argv[1] is boot_script, node_options the text of
   * GATEHOUSE_NODE_OPTIONS (e.g. "--max-old-space-size=256"; refused options are reported by
   * name and left out). Returns at once; the core attaches to link when it is ready. NULL if
   * the thread could not start.
   */
  static std::unique_ptr<NodeRuntime> Start(const std::string& boot_script, const std::string& node_options,
                                            const gh_host_link* link, Report report, Ended ended);

  /**
   * Whether Node has ended (process.exit(), an uncaught exception, a boot that failed, or
   * Stop()): it never starts again in this process (its per-process state is torn down once).
   */
  bool ended() const;

  /**
   * Stops the environment (pending requests are answered 503 by the core's teardown) and
   * waits for its thread. Waits: never call it under the loader lock (DllMain, a static
   * destructor); the module calls it from its factory's Terminate.
   */
  void Stop();

  /** Stop(), with the same rule: a NodeRuntime is never destroyed by a static destructor. */
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
