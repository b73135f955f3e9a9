// The Node this worker process embeds, as the IIS module runs it.
//
// Node starts lazily, on the first request IIS hands the module: IIS loads a global module
// into every worker process but calls its request notifications only for the sites whose
// <modules> list has it, so a worker process that serves no gatehouse site never starts Node,
// and never loads libnode.dll either (delay-loaded: /DELAYLOAD:libnode.dll; the module loads it
// from its own directory first, and a missing one is a 503 and an event-log entry naming it).
// It stops in the module factory's Terminate (never under the loader lock: no static
// destructor owns it). Once Node has ended on its own (process.exit(), an uncaught exception,
// a failed start), it cannot start again in this process: the module answers 503 with
// Retry-After and asks IIS for a new worker process (IHttpServer::RecycleProcess, at most once
// a minute). See docs/in-server-module.md.
#ifndef GATEHOUSE_IIS_EMBEDDED_NODE_H
#define GATEHOUSE_IIS_EMBEDDED_NODE_H

#include "iis_sdk.h"

#include "engine_slot.h"

namespace gh_iis {

/** What the embedded Node works with, from RegisterModule (before any request): all live as long as the process. */
void prepare_embedded_node(HMODULE module, IHttpServer* server, EngineSlot* slot);

/**
 * Starts Node once per worker process, on the first request of a gatehouse site; every later
 * call returns at once. The requests that arrive while the core boots wait for it (the engine
 * slot's expect_core); without a core (a failed start, the wait run out, Node ended) they are
 * answered 503 with Retry-After by the engine slot. May throw (the lock): its caller is a
 * notification, which answers 500.
 */
void start_node_once();

/**
 * Whether this worker process's Node has ended for good: it did not start, or it ended on its
 * own. Read without the lock: the state is final once decided, and the runtime, once made,
 * lives as long as the process.
 */
bool node_has_ended();

/**
 * Node has ended: ask IIS for a new worker process, at most once a minute (IIS starts it beside
 * this one, which finishes its requests; one that fails the same way asks again a minute later,
 * and IIS's rapid-fail protection counts worker processes that crash, not these). Said once.
 */
void recycle_after_node_ended() noexcept;

/** The worker process is going away (the factory's Terminate): stop Node and wait for its thread. */
void stop_node() noexcept;

/** How long a decision may take before the module answers 503 itself (GATEHOUSE_IIS_DECISION_TIMEOUT); 0: no limit. */
unsigned long decision_timeout_ms();

}  // namespace gh_iis

#endif
