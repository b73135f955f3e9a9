// The fake IIS's IHttpModuleRegistrationInfo, which RegisterModule receives: it keeps the
// factory and the notifications the module asks for, and refuses (records) anything else.
#ifndef GATEHOUSE_FAKE_IIS_FAKE_REGISTRATION_H
#define GATEHOUSE_FAKE_IIS_FAKE_REGISTRATION_H

#include <httpserv.h>

#include <mutex>
#include <string>
#include <vector>

#include "faults.h"

namespace fake_iis {

class FakeRegistration final : public IHttpModuleRegistrationInfo {
 public:
  /** fault: what SetRequestNotifications does wrong (kFail: E_FAIL, IIS keeps nothing; kBadAlloc: throws). */
  explicit FakeRegistration(Fault fault) : fault_(fault) {}

  IHttpModuleFactory* factory() const { return factory_; }
  DWORD notifications() const { return notifications_; }
  DWORD post_notifications() const { return post_notifications_; }
  std::vector<std::string> violations() const;

  PCWSTR GetName() const override { return L"gatehouse"; }
  HTTP_MODULE_ID GetId() const override { return const_cast<FakeRegistration*>(this); }
  HRESULT SetRequestNotifications(IHttpModuleFactory* factory, DWORD notifications, DWORD post_notifications) override;
  HRESULT SetGlobalNotifications(CGlobalModule* module, DWORD notifications) override;
  HRESULT SetPriorityForRequestNotification(DWORD notification, PCWSTR priority) override;
  HRESULT SetPriorityForGlobalNotification(DWORD notification, PCWSTR priority) override;

 private:
  const Fault fault_;
  IHttpModuleFactory* factory_ = nullptr;
  DWORD notifications_ = 0;
  DWORD post_notifications_ = 0;
  mutable std::mutex mutex_;
  std::vector<std::string> violations_;
};

}  // namespace fake_iis

#endif
