// One request's decision as a web-server notification sees it. The engine
// may complete the request while it is being submitted (on the notification's
// own thread: a synchronous policy, a shut-down engine) or later, on Node's
// thread. The handler must then either apply the decision at once, or return
// "pending" and be resumed exactly once. An atomic state decides which,
// whatever the interleaving:
//
//   submitting --complete--> done            (inline: the handler applies it, no resume)
//   submitting --settle----> pending --complete--> done + resume()
//
// Portable C++ (no IIS headers): the native test host runs the same code.
#ifndef GATEHOUSE_IIS_DEFERRED_DECISION_H
#define GATEHOUSE_IIS_DEFERRED_DECISION_H

#include <atomic>

#include "../core/gh_core.h"
#include "../core/owned_decision.h"

namespace gh_iis {

class DeferredDecision {
 public:
  using ResumeFn = void (*)(void* resume_data);

  /** resume runs (on the completing thread) when the decision arrives after the handler went pending. */
  DeferredDecision(ResumeFn resume, void* resume_data) : resume_(resume), resume_data_(resume_data) {}
  DeferredDecision(const DeferredDecision&) = delete;
  DeferredDecision& operator=(const DeferredDecision&) = delete;

  /** The gh_completion_fn to submit with, host_data = this DeferredDecision. */
  static void OnComplete(void* self, const gh_decision* decision);

  /**
   * Right after submit returned. true: the decision is here, apply it now (no
   * resume will come). false: go pending; resume() comes exactly once.
   */
  bool settle_after_submit();

  /** Valid once settle_after_submit returned true, or after resume. */
  const gh::OwnedDecision& decision() const { return decision_; }

  /** Whether the decision came during submission (for tests and logs). */
  bool completed_inline() const { return inline_; }

  /** How many completions arrived (the engine promises exactly one). */
  int completions() const { return completions_.load(std::memory_order_acquire); }

 private:
  enum State : int { kSubmitting, kPending, kDone };

  ResumeFn resume_;
  void* resume_data_;
  std::atomic<int> state_{kSubmitting};
  std::atomic<int> completions_{0};
  gh::OwnedDecision decision_;
  bool inline_ = false;
};

}  // namespace gh_iis

#endif
