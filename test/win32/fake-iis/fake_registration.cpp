#include "fake_registration.h"

#include <new>

namespace fake_iis {

std::vector<std::string> FakeRegistration::violations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return violations_;
}

HRESULT FakeRegistration::SetRequestNotifications(IHttpModuleFactory* factory, DWORD notifications,
                                                  DWORD post_notifications) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (factory == nullptr) violations_.push_back("SetRequestNotifications without a factory");
  if (fault_ == Fault::kBadAlloc) throw std::bad_alloc();
  if (fault_ == Fault::kFail) return E_FAIL;  // IIS keeps nothing: the factory stays the module's
  if (factory_ != nullptr) violations_.push_back("SetRequestNotifications twice");
  factory_ = factory;
  notifications_ = notifications;
  post_notifications_ = post_notifications;
  return S_OK;
}

HRESULT FakeRegistration::SetGlobalNotifications(CGlobalModule*, DWORD) {
  std::lock_guard<std::mutex> lock(mutex_);
  violations_.push_back("a call IIS's fake does not model: IHttpModuleRegistrationInfo::SetGlobalNotifications");
  return E_NOTIMPL;
}

HRESULT FakeRegistration::SetPriorityForRequestNotification(DWORD, PCWSTR) {
  std::lock_guard<std::mutex> lock(mutex_);
  violations_.push_back(
      "a call IIS's fake does not model: IHttpModuleRegistrationInfo::SetPriorityForRequestNotification");
  return E_NOTIMPL;
}

HRESULT FakeRegistration::SetPriorityForGlobalNotification(DWORD, PCWSTR) {
  std::lock_guard<std::mutex> lock(mutex_);
  violations_.push_back(
      "a call IIS's fake does not model: IHttpModuleRegistrationInfo::SetPriorityForGlobalNotification");
  return E_NOTIMPL;
}

}  // namespace fake_iis
