#include "deferred_decision.h"

#include <new>

namespace gh_iis {

void DeferredDecision::OnComplete(void* self, const gh_decision* decision) {
  auto* d = static_cast<DeferredDecision*>(self);
  if (d->completions_.fetch_add(1, std::memory_order_acq_rel) > 0) return;  // never applied twice
  try {
    d->decision_ = gh::OwnedDecision(*decision);
  } catch (const std::bad_alloc&) {
    d->decision_ = gh::OwnedDecision();  // RESPOND 500, no body: fail closed
  }
  // Once the state says done, the handler may apply the decision and free *d at
  // any moment: read what the resume needs first, touch nothing of d after.
  const ResumeFn resume = d->resume_;
  void* const resume_data = d->resume_data_;
  // The copy is published by the release half; the handler's acquire sees it.
  if (d->state_.exchange(kDone, std::memory_order_acq_rel) == kPending) resume(resume_data);
}

bool DeferredDecision::settle_after_submit() {
  int expected = kSubmitting;
  // Went pending: the completion (not yet run) will resume. Failed: it already ran, inline.
  if (state_.compare_exchange_strong(expected, kPending, std::memory_order_acq_rel, std::memory_order_acquire))
    return false;
  inline_ = true;
  return true;
}

}  // namespace gh_iis
