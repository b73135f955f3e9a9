// The engine a web-server module submits to. The engine lives in the addon,
// inside the Node the module embeds; JavaScript attaches it through the host
// link (gh_host_link) once the auth core has started, and takes it away when
// it closes. Until then, and after, requests are answered 503: fail closed. While the
// embedded Node boots (expect_core), a request may wait for the core instead, for a bounded
// time (wait_for_core): a worker process's first requests are then decided, not refused.
// Portable C++ (no IIS headers): the native test host runs the same code.
#ifndef GATEHOUSE_IIS_ENGINE_SLOT_H
#define GATEHOUSE_IIS_ENGINE_SLOT_H

#include <chrono>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "../core/gh_core.h"
#include "deadline_timer.h"

namespace gh_iis {

class EngineSlot {
 public:
  EngineSlot();
  EngineSlot(const EngineSlot&) = delete;
  EngineSlot& operator=(const EngineSlot&) = delete;

  /** What JavaScript receives (as a tagged external) to attach an interceptor. */
  const gh_host_link* link() const { return &link_; }

  /**
   * Submits through the attached engine. Without one, completes at once (on
   * this thread) with 503. Never blocks on JavaScript.
   */
  void submit(const gh_request_view& request, gh_completion_fn done, void* host_data) const;

  /** Whether a request to this raw path must carry its body (the auth routes' POSTs). */
  bool needs_body(const char* path, size_t length) const;

  bool attached() const;

  /** Wakes a request that waited for the core (wait_for_core's data). Must not block. */
  using Wake = void (*)(void* data);

  /**
   * Node has started: for `wait` from now, until the first core attaches, requests may wait
   * for it. Once, before any wait_for_core. May throw (the timer's thread).
   */
  void expect_core(std::chrono::milliseconds wait);

  /** Node has ended before any core attached: whoever waits is woken now, and no one waits again. */
  void core_not_coming();

  /**
   * true: the request waits; wake(data) comes exactly once (the core attached, the wait ran out,
   * or it is not coming), perhaps on another thread before this returns. false: go on now (a
   * core is attached, or none is expected). May throw (allocation).
   */
  bool wait_for_core(Wake wake, void* data);

 private:
  void wake_all();  // takes the waiters and wakes them, expecting no more
  static void Attach(void* self, const gh_engine_ref* ref);
  static void Detach(void* self, const gh_engine* engine);
  void clear();  // with the lock held

  gh_host_link link_{};
  // Readers: every submission. Writer: attach/detach, which therefore waits for
  // submissions in flight through the old engine (they never wait on JavaScript).
  mutable std::shared_mutex mutex_;
  gh_engine_ref ref_{};
  bool attached_ = false;
  std::string body_prefix_;

  // The cold start's waiting requests; taken under mutex_ (shared) then waiters_mutex_, so that
  // none is left behind by an attach between its check and its wait.
  std::mutex waiters_mutex_;
  bool expecting_ = false;
  std::vector<std::pair<Wake, void*>> waiters_;
  std::uint64_t expect_deadline_ = 0;
  DeadlineTimer timer_;  // last: destroyed (its thread joined) before what its deadline uses
};

}  // namespace gh_iis

#endif
