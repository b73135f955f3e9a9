#include "faults.h"

namespace fake_iis {

Fault fault_named(const std::string& name) {
  if (name == "fail") return Fault::kFail;
  if (name == "bad_alloc") return Fault::kBadAlloc;
  if (name == "ignore") return Fault::kIgnore;
  return Fault::kNone;
}

void Faults::plan(const std::string& method, Fault fault) {
  std::lock_guard<std::mutex> lock(mutex_);
  planned_[method] = fault;
}

Fault Faults::take(const char* method) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = planned_.find(method);
  if (found == planned_.end()) return Fault::kNone;
  const Fault fault = found->second;
  fired_.insert(found->first);
  if (fault != Fault::kIgnore) planned_.erase(found);
  return fault;
}

std::set<std::string> Faults::unfired() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::set<std::string> unfired;
  for (const auto& [method, fault] : planned_) {
    if (fired_.count(method) == 0) unfired.insert(method);
  }
  return unfired;
}

}  // namespace fake_iis
