// Between the fake IIS's NodeRuntime (node_runtime_in_test_process.cpp) and the Node that runs
// the test (fake_iis_addon.cpp): where the embedding would create a Node environment on a thread
// of its own, the test's Node starts one as a worker thread.
#ifndef GATEHOUSE_FAKE_IIS_EMBEDDED_NODE_H
#define GATEHOUSE_FAKE_IIS_EMBEDDED_NODE_H

#include <string>
#include <vector>

namespace fake_iis {

/**
 * Asks the test's Node to start an environment whose main script is boot_script, and returns at
 * once (the environment boots on its own thread, as the embedded one does). false: it cannot be
 * asked (no host set, or the test made the start fail), as when the embedding's thread cannot start.
 */
bool start_embedded_node(const std::string& boot_script, const std::vector<std::string>& exec_args);

/** Whether that environment ended by itself (process.exit(), an uncaught exception), as the test's Node says. */
bool embedded_node_ended();

/** The test's Node says the environment has ended by itself: the module's hook runs, as the embedding runs it. */
void embedded_node_has_ended();

/** Asks the test's Node to stop that environment, and waits until it has ended. */
void stop_embedded_node();

}  // namespace fake_iis

#endif
