#include "engine_slot.h"

#include <cstring>
#include <mutex>

#include "../core/bytes.h"
#include "../core/error_response.h"

namespace gh_iis {

EngineSlot::EngineSlot() {
  link_.abi_version = GH_ABI_VERSION;
  link_.host_data = this;
  link_.attach = &EngineSlot::Attach;
  link_.detach = &EngineSlot::Detach;
}

void EngineSlot::Attach(void* self, const gh_engine_ref* ref) {
  auto* slot = static_cast<EngineSlot*>(self);
  {
    std::unique_lock<std::shared_mutex> lock(slot->mutex_);
    // An engine from an older ABI lacks fields this host reads: refuse it (and drop the old one).
    if (ref == nullptr || ref->abi_version < 4 || ref->engine == nullptr || ref->submit == nullptr) {
      slot->clear();
      return;
    }
    slot->ref_ = *ref;
    slot->body_prefix_ = gh::text_of(ref->body_path_prefix);
    slot->ref_.body_path_prefix = gh::bytes_of(slot->body_prefix_);
    slot->attached_ = true;
  }
  slot->wake_all();  // the requests that waited go on, to the core now attached
}

void EngineSlot::expect_core(std::chrono::milliseconds wait) {
  std::lock_guard<std::mutex> lock(waiters_mutex_);
  expecting_ = true;
  expect_deadline_ = timer_.schedule(wait, [this] { wake_all(); });
}

void EngineSlot::core_not_coming() {
  {
    std::lock_guard<std::mutex> lock(waiters_mutex_);
    if (expect_deadline_ != 0) timer_.cancel(expect_deadline_);
  }
  wake_all();
}

void EngineSlot::wake_all() {
  std::vector<std::pair<Wake, void*>> woken;
  {
    std::lock_guard<std::mutex> lock(waiters_mutex_);
    expecting_ = false;
    woken.swap(waiters_);
  }
  for (const auto& [wake, data] : woken) wake(data);
}

bool EngineSlot::wait_for_core(Wake wake, void* data) {
  std::shared_lock<std::shared_mutex> lock(mutex_);  // no attach between the check and the wait
  if (attached_) return false;
  std::lock_guard<std::mutex> waiting(waiters_mutex_);
  if (!expecting_) return false;
  waiters_.emplace_back(wake, data);
  return true;
}

void EngineSlot::Detach(void* self, const gh_engine* engine) {
  auto* slot = static_cast<EngineSlot*>(self);
  std::unique_lock<std::shared_mutex> lock(slot->mutex_);  // waits for submissions in flight
  if (slot->attached_ && slot->ref_.engine == engine) slot->clear();
}

void EngineSlot::clear() {
  attached_ = false;
  ref_ = gh_engine_ref{};
  body_prefix_.clear();
}

void EngineSlot::submit(const gh_request_view& request, gh_completion_fn done, void* host_data) const {
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    // GH_ERR_SHUT_DOWN still completed the request (503); any other failure did not.
    if (attached_) {
      const gh_status status = ref_.submit(ref_.engine, &request, done, host_data);
      if (status == GH_OK || status == GH_ERR_SHUT_DOWN) return;
    }
  }
  gh::answer_error(done, host_data, 503, "The authentication layer is not running.");
}

bool EngineSlot::needs_body(const char* path, size_t length) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return attached_ && !body_prefix_.empty() && length >= body_prefix_.size() &&
         std::memcmp(path, body_prefix_.data(), body_prefix_.size()) == 0;
}

bool EngineSlot::attached() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return attached_;
}

}  // namespace gh_iis
