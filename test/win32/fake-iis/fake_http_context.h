// The fake IIS's request: IHttpContext over a scripted request (FakeHttpRequest) and a
// recording response (FakeHttpResponse), and the part of the IIS pipeline that calls the
// module: OnBeginRequest, then OnAsyncCompletion for each completed read and each
// PostCompletion, each on a thread of its own, as IIS runs notifications on its thread pool,
// until one of them returns something other than RQ_NOTIFICATION_PENDING. Then the module is
// disposed and, when the request continues, the application reads its headers and body.
//
// What IIS allows and the fake does too: a completion that runs on another thread before the
// call that started it (ReadEntityBody, PostCompletion) has returned. What IIS forbids, the fake
// records as a violation: two final statuses, a call into the request once it has ended, a second
// read while one is pending, a synchronous read (it holds an IIS thread), memory handed to IIS
// that does not live as long as the request, and every IIS method the fake does not model.
#ifndef GATEHOUSE_FAKE_IIS_FAKE_HTTP_CONTEXT_H
#define GATEHOUSE_FAKE_IIS_FAKE_HTTP_CONTEXT_H

#include <httpserv.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fake_http_request.h"
#include "fake_http_response.h"
#include "faults.h"
#include "outcome.h"
#include "request_script.h"

namespace fake_iis {

class FakeHttpContext final : public IHttpContext, public std::enable_shared_from_this<FakeHttpContext> {
 public:
  using Finished = std::function<void(const Outcome&)>;

  /** module: what the factory made for this request; finished: called once, on an IIS thread, with the outcome. */
  FakeHttpContext(const RequestScript& script, CHttpModule* module, Finished finished);

  /** Starts the request: OnBeginRequest on an IIS thread. Once, on a context held by a shared_ptr. */
  void begin();

  // For the request and the response.
  /** Counts a call of method, and returns the fault planned for it (a call after the end is a violation). */
  Fault call(const char* method);
  /** A call of a method the fake does not model: a violation. */
  void unmodeled(const char* method);
  void violation(const std::string& what);
  /** Whether [data, data + size) lies in memory from AllocateRequestMemory. */
  bool is_request_memory(const void* data, size_t size);
  /**
   * An asynchronous operation completed: on a new IIS thread, fill() (the data lands in the
   * module's buffer) and then OnAsyncCompletion with bytes and status. wait: return only once
   * that notification has returned (a completion before the call that started it returns).
   */
  void complete(DWORD bytes, HRESULT status, std::function<void()> fill, bool wait);

  // IHttpContext: what the module calls.
  IHttpRequest* GetRequest() override;
  IHttpResponse* GetResponse() override;
  HRESULT PostCompletion(DWORD bytes) override;
  VOID* AllocateRequestMemory(DWORD size) override;
  HRESULT CancelIo() override;

  // IHttpContext: the rest, which the module must not need.
  IHttpSite* GetSite() override;
  IHttpApplication* GetApplication() override;
  IHttpConnection* GetConnection() override;
  BOOL GetResponseHeadersSent() const override;
  IHttpUser* GetUser() const override;
  IHttpModuleContextContainer* GetModuleContextContainer() override;
  VOID IndicateCompletion(REQUEST_NOTIFICATION_STATUS status) override;
  VOID DisableNotifications(DWORD notifications, DWORD post_notifications) override;
  BOOL GetNextNotification(REQUEST_NOTIFICATION_STATUS status, DWORD* notification, BOOL* is_post, CHttpModule** module,
                           IHttpEventProvider** provider) override;
  BOOL GetIsLastNotification(REQUEST_NOTIFICATION_STATUS status) override;
  HRESULT ExecuteRequest(BOOL async, IHttpContext* child, DWORD flags, IHttpUser* user,
                         BOOL* completion_expected) override;
  DWORD GetExecuteFlags() const override;
  HRESULT GetServerVariable(PCSTR name, PCWSTR* value, DWORD* length) override;
  HRESULT GetServerVariable(PCSTR name, PCSTR* value, DWORD* length) override;
  HRESULT SetServerVariable(PCSTR name, PCWSTR value) override;
  IHttpUrlInfo* GetUrlInfo() override;
  IMetadataInfo* GetMetadata() override;
  PCWSTR GetPhysicalPath(DWORD* length) override;
  PCWSTR GetScriptName(DWORD* length) const override;
  PCWSTR GetScriptTranslated(DWORD* length) override;
  IScriptMapInfo* GetScriptMap() const override;
  VOID SetRequestHandled() override;
  IHttpFileInfo* GetFileInfo() const override;
  HRESULT MapPath(PCWSTR url, PWSTR physical_path, DWORD* size) override;
  HRESULT NotifyCustomNotification(ICustomNotificationProvider* provider, BOOL* completion_expected) override;
  IHttpContext* GetParentContext() const override;
  IHttpContext* GetRootContext() const override;
  HRESULT CloneContext(DWORD flags, IHttpContext** clone) override;
  HRESULT ReleaseClonedContext() override;
  HRESULT GetCurrentExecutionStats(DWORD* notification, DWORD* notification_start, PCWSTR* module, DWORD* module_start,
                                   DWORD* async_notification, DWORD* async_notification_start) const override;
  IHttpTraceContext* GetTraceContext() const override;
  HRESULT GetServerVarChanges(DWORD old_change, DWORD* new_change, DWORD* count, PCSTR** names, PCWSTR** values,
                              DWORD* changed_count, DWORD** changed) override;
  HRESULT MapHandler(DWORD site_id, PCWSTR site_name, PCWSTR url, PCSTR verb, IScriptMapInfo** script_map,
                     BOOL ignore_wildcard_mappings) override;
  HRESULT GetExtendedInterface(HTTP_CONTEXT_INTERFACE_VERSION version, PVOID* out) override;

 private:
  /** Runs notification on a new IIS thread; wait: returns once it has returned. */
  void dispatch(std::function<REQUEST_NOTIFICATION_STATUS()> notification, bool wait);
  void settle(REQUEST_NOTIFICATION_STATUS status);
  void finish();

  const bool post_completion_before_return_;
  CHttpModule* module_;
  Finished finished_;
  Faults faults_;
  FakeHttpRequest request_;
  FakeHttpResponse response_;

  std::mutex mutex_;
  int in_flight_ = 0;  // notifications running or about to run
  bool has_final_ = false;
  REQUEST_NOTIFICATION_STATUS final_ = RQ_NOTIFICATION_PENDING;
  bool ended_ = false;  // the final status is in and no notification runs: IIS moves on
  int notifications_ = 0;
  std::map<std::string, int> calls_;
  std::vector<std::string> violations_;
  std::vector<std::unique_ptr<char[]>> request_memory_;
  std::vector<std::pair<const char*, size_t>> request_memory_ranges_;
};

}  // namespace fake_iis

#endif
