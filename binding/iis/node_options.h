// GATEHOUSE_NODE_OPTIONS, the Node options of the embedded runtime (an application pool's
// environment variable): split on spaces, each option checked against the options an embedded
// Node inside the web server's worker process may take. The accepted ones go to
// node::InitializeOncePerProcess as command-line arguments, where Node and V8 read them
// (binding/iis/node_runtime.cpp); each refused one is named in the module's log, and Node
// starts without it. Refused: whatever would open a port or a debugger (--inspect), run other
// code (--require, --import, --eval, --loader), write files beside the worker process
// (--prof, --cpu-prof, --heapsnapshot-*), or give V8 more stack than the Node thread has
// (--stack-size above kMaxV8StackKb). Portable C++: the Linux embedding test runs it with
// libnode (test/inserver/embedding.test.ts). docs/in-server-module.md lists the options.
#ifndef GATEHOUSE_IIS_NODE_OPTIONS_H
#define GATEHOUSE_IIS_NODE_OPTIONS_H

#include <cstddef>
#include <string>
#include <vector>

namespace gh_iis {

/** The Node thread's stack (binding/iis/stack_thread.h reserves it): 8 MB. */
constexpr std::size_t kNodeThreadStackBytes = 8u * 1024 * 1024;

/** The largest --stack-size V8 may be given on that thread, in KB: 1 MB stays for native frames. */
constexpr unsigned long kMaxV8StackKb = 7 * 1024;

struct NodeOptions {
  /** In the order given, as given: for InitializeOncePerProcess's arguments. */
  std::vector<std::string> accepted;
  /** One line per refused option, naming it and why (for the module's log). */
  std::vector<std::string> refused;
};

NodeOptions parse_node_options(const std::string& text);

}  // namespace gh_iis

#endif
