#include "fake_http_context.h"

#include <future>

#include "fault_result.h"
#include "iis_threads.h"

namespace fake_iis {

namespace {

// What OnAsyncCompletion is told: how many bytes, and how the operation ended.
class FakeCompletionInfo final : public IHttpCompletionInfo {
 public:
  FakeCompletionInfo(FakeHttpContext& context, DWORD bytes, HRESULT status)
      : context_(context), bytes_(bytes), status_(status) {}
  DWORD GetCompletionBytes() const override {
    if (fault_skips(context_.call("IHttpCompletionInfo::GetCompletionBytes"))) return 0;
    return bytes_;
  }
  HRESULT GetCompletionStatus() const override {
    HRESULT hr = S_OK;
    if (fault_decides(context_.call("IHttpCompletionInfo::GetCompletionStatus"), &hr)) return hr;
    return status_;
  }

 private:
  FakeHttpContext& context_;
  const DWORD bytes_;
  const HRESULT status_;
};

// The notifications' provider: the module never needs it.
class FakeEventProvider final : public IHttpEventProvider {
 public:
  explicit FakeEventProvider(FakeHttpContext& context) : context_(context) {}
  VOID SetErrorStatus(HRESULT) override { context_.unmodeled("IHttpEventProvider::SetErrorStatus"); }

 private:
  FakeHttpContext& context_;
};

const char* status_name(REQUEST_NOTIFICATION_STATUS status) {
  switch (status) {
    case RQ_NOTIFICATION_CONTINUE:
      return "continue";
    case RQ_NOTIFICATION_PENDING:
      return "pending";
    case RQ_NOTIFICATION_FINISH_REQUEST:
      return "finish";
  }
  return "an unknown status";
}

}  // namespace

FakeHttpContext::FakeHttpContext(const RequestScript& script, CHttpModule* module, Finished finished)
    : post_completion_before_return_(script.post_completion_before_return),
      module_(module),
      finished_(std::move(finished)),
      request_(*this, script),
      response_(*this) {
  for (const auto& [method, fault] : script.faults) faults_.plan(method, fault);
}

void FakeHttpContext::begin() {
  dispatch(
      [this] {
        FakeEventProvider provider(*this);
        return module_->OnBeginRequest(this, &provider);
      },
      false);
}

Fault FakeHttpContext::call(const char* method) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++calls_[method];
    if (ended_) violations_.push_back(std::string(method) + " after the request had ended");
  }
  return faults_.take(method);
}

void FakeHttpContext::unmodeled(const char* method) {
  violation(std::string("a call IIS's fake does not model: ") + method);
}

void FakeHttpContext::violation(const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  violations_.push_back(what);
}

bool FakeHttpContext::is_request_memory(const void* data, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto* begin = static_cast<const char*>(data);
  for (const auto& [start, length] : request_memory_ranges_) {
    if (begin >= start && begin + size <= start + length) return true;
  }
  return false;
}

void FakeHttpContext::complete(DWORD bytes, HRESULT status, std::function<void()> fill, bool wait) {
  dispatch(
      [this, bytes, status, fill = std::move(fill)] {
        fill();
        FakeCompletionInfo completion(*this, bytes, status);
        FakeEventProvider provider(*this);
        return module_->OnAsyncCompletion(this, 0, FALSE, &provider, &completion);
      },
      wait);
}

void FakeHttpContext::dispatch(std::function<REQUEST_NOTIFICATION_STATUS()> notification, bool wait) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_ || has_final_)
      violations_.push_back("a completion for a request whose module had already finished with it");
    ++in_flight_;
  }
  auto self = shared_from_this();
  auto returned = std::make_shared<std::promise<void>>();
  std::future<void> done = returned->get_future();
  const bool queued = run_on_iis_thread([self, notification = std::move(notification), returned] {
    REQUEST_NOTIFICATION_STATUS status = RQ_NOTIFICATION_PENDING;
    {
      std::lock_guard<std::mutex> lock(self->mutex_);
      ++self->notifications_;
    }
    try {
      status = notification();
    } catch (...) {
      // IIS is not C++: an exception out of a notification ends the worker process.
      self->violation("a C++ exception left a notification handler (IIS would end the worker process)");
      status = RQ_NOTIFICATION_FINISH_REQUEST;
    }
    returned->set_value();
    self->settle(status);
  });
  if (!queued) {
    // The fake's own failure, not the module's: the test fails, and the request ends.
    violation("the fake IIS could not queue a notification on its thread pool");
    settle(RQ_NOTIFICATION_FINISH_REQUEST);
    return;
  }
  if (wait) done.wait();
}

void FakeHttpContext::settle(REQUEST_NOTIFICATION_STATUS status) {
  bool end = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --in_flight_;
    if (status != RQ_NOTIFICATION_PENDING) {
      if (has_final_)
        violations_.push_back(std::string("a second final status (") + status_name(status) + " after " +
                              status_name(final_) + ")");
      has_final_ = true;
      final_ = status;
    }
    if (has_final_ && in_flight_ == 0 && !ended_) {
      ended_ = true;
      end = true;
    }
  }
  if (end) finish();
}

void FakeHttpContext::finish() {
  if (request_.read_pending()) violation("the module finished with the request while a read was pending");
  // IIS is done with the module for this request. Whatever the module still calls from here on
  // (a timer, a completion) is a call after the end.
  module_->Dispose();
  Outcome outcome;
  outcome.result = final_ == RQ_NOTIFICATION_CONTINUE ? "continue" : status_name(final_);
  response_.record(outcome);
  if (final_ == RQ_NOTIFICATION_CONTINUE) {
    outcome.app_headers = request_.app_headers();
    outcome.app_body = request_.app_body();
  }
  outcome.pending_reads = request_.pending_reads();
  outcome.buffered_reads = request_.buffered_reads();
  for (const std::string& method : faults_.unfired())
    violation("a planned fault never fired: the module never called " + method);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    outcome.calls = calls_;
    outcome.notifications = notifications_;
    outcome.violations = violations_;
  }
  finished_(outcome);
}

IHttpRequest* FakeHttpContext::GetRequest() {
  call("IHttpContext::GetRequest");
  return &request_;
}

IHttpResponse* FakeHttpContext::GetResponse() {
  call("IHttpContext::GetResponse");
  return &response_;
}

HRESULT FakeHttpContext::PostCompletion(DWORD bytes) {
  HRESULT hr = S_OK;
  if (fault_decides(call("IHttpContext::PostCompletion"), &hr)) return hr;
  // The caller (Node's thread) may still be inside this call when the completion has ended the
  // request: the context stays alive until it returns.
  auto self = shared_from_this();
  complete(
      bytes, S_OK, [] {}, post_completion_before_return_);
  return S_OK;
}

VOID* FakeHttpContext::AllocateRequestMemory(DWORD size) {
  if (fault_skips(call("IHttpContext::AllocateRequestMemory"))) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  request_memory_.push_back(std::make_unique<char[]>(size == 0 ? 1 : size));
  request_memory_ranges_.emplace_back(request_memory_.back().get(), size);
  return request_memory_.back().get();
}

HRESULT FakeHttpContext::CancelIo() {
  HRESULT hr = S_OK;
  if (fault_decides(call("IHttpContext::CancelIo"), &hr)) return hr;
  return request_.cancel_pending_read() ? S_OK : HRESULT_FROM_WIN32(ERROR_NOT_FOUND);
}

IHttpSite* FakeHttpContext::GetSite() {
  unmodeled("IHttpContext::GetSite");
  return nullptr;
}
IHttpApplication* FakeHttpContext::GetApplication() {
  unmodeled("IHttpContext::GetApplication");
  return nullptr;
}
IHttpConnection* FakeHttpContext::GetConnection() {
  unmodeled("IHttpContext::GetConnection");
  return nullptr;
}
BOOL FakeHttpContext::GetResponseHeadersSent() const {
  const_cast<FakeHttpContext*>(this)->unmodeled("IHttpContext::GetResponseHeadersSent");
  return FALSE;
}
IHttpUser* FakeHttpContext::GetUser() const {
  const_cast<FakeHttpContext*>(this)->unmodeled("IHttpContext::GetUser");
  return nullptr;
}
IHttpModuleContextContainer* FakeHttpContext::GetModuleContextContainer() {
  unmodeled("IHttpContext::GetModuleContextContainer");
  return nullptr;
}
VOID FakeHttpContext::IndicateCompletion(REQUEST_NOTIFICATION_STATUS) { unmodeled("IHttpContext::IndicateCompletion"); }
VOID FakeHttpContext::DisableNotifications(DWORD, DWORD) { unmodeled("IHttpContext::DisableNotifications"); }
BOOL FakeHttpContext::GetNextNotification(REQUEST_NOTIFICATION_STATUS, DWORD*, BOOL*, CHttpModule**,
                                          IHttpEventProvider**) {
  unmodeled("IHttpContext::GetNextNotification");
  return FALSE;
}
BOOL FakeHttpContext::GetIsLastNotification(REQUEST_NOTIFICATION_STATUS) {
  unmodeled("IHttpContext::GetIsLastNotification");
  return FALSE;
}
HRESULT FakeHttpContext::ExecuteRequest(BOOL, IHttpContext*, DWORD, IHttpUser*, BOOL*) {
  unmodeled("IHttpContext::ExecuteRequest");
  return E_NOTIMPL;
}
DWORD FakeHttpContext::GetExecuteFlags() const {
  const_cast<FakeHttpContext*>(this)->unmodeled("IHttpContext::GetExecuteFlags");
  return 0;
}
HRESULT FakeHttpContext::GetServerVariable(PCSTR, PCWSTR*, DWORD*) {
  unmodeled("IHttpContext::GetServerVariable(PCWSTR)");
  return E_NOTIMPL;
}
HRESULT FakeHttpContext::GetServerVariable(PCSTR, PCSTR*, DWORD*) {
  unmodeled("IHttpContext::GetServerVariable(PCSTR)");
  return E_NOTIMPL;
}
HRESULT FakeHttpContext::SetServerVariable(PCSTR, PCWSTR) {
  unmodeled("IHttpContext::SetServerVariable");
  return E_NOTIMPL;
}
IHttpUrlInfo* FakeHttpContext::GetUrlInfo() {
  unmodeled("IHttpContext::GetUrlInfo");
  return nullptr;
}
IMetadataInfo* FakeHttpContext::GetMetadata() {
  unmodeled("IHttpContext::GetMetadata");
  return nullptr;
}
PCWSTR FakeHttpContext::GetPhysicalPath(DWORD*) {
  unmodeled("IHttpContext::GetPhysicalPath");
  return nullptr;
}
PCWSTR FakeHttpContext::GetScriptName(DWORD*) const {
  const_cast<FakeHttpContext*>(this)->unmodeled("IHttpContext::GetScriptName");
  return nullptr;
}
PCWSTR FakeHttpContext::GetScriptTranslated(DWORD*) {
  unmodeled("IHttpContext::GetScriptTranslated");
  return nullptr;
}
IScriptMapInfo* FakeHttpContext::GetScriptMap() const {
  const_cast<FakeHttpContext*>(this)->unmodeled("IHttpContext::GetScriptMap");
  return nullptr;
}
VOID FakeHttpContext::SetRequestHandled() { unmodeled("IHttpContext::SetRequestHandled"); }
IHttpFileInfo* FakeHttpContext::GetFileInfo() const {
  const_cast<FakeHttpContext*>(this)->unmodeled("IHttpContext::GetFileInfo");
  return nullptr;
}
HRESULT FakeHttpContext::MapPath(PCWSTR, PWSTR, DWORD*) {
  unmodeled("IHttpContext::MapPath");
  return E_NOTIMPL;
}
HRESULT FakeHttpContext::NotifyCustomNotification(ICustomNotificationProvider*, BOOL*) {
  unmodeled("IHttpContext::NotifyCustomNotification");
  return E_NOTIMPL;
}
IHttpContext* FakeHttpContext::GetParentContext() const {
  const_cast<FakeHttpContext*>(this)->unmodeled("IHttpContext::GetParentContext");
  return nullptr;
}
IHttpContext* FakeHttpContext::GetRootContext() const {
  const_cast<FakeHttpContext*>(this)->unmodeled("IHttpContext::GetRootContext");
  return nullptr;
}
HRESULT FakeHttpContext::CloneContext(DWORD, IHttpContext**) {
  unmodeled("IHttpContext::CloneContext");
  return E_NOTIMPL;
}
HRESULT FakeHttpContext::ReleaseClonedContext() {
  unmodeled("IHttpContext::ReleaseClonedContext");
  return E_NOTIMPL;
}
HRESULT FakeHttpContext::GetCurrentExecutionStats(DWORD*, DWORD*, PCWSTR*, DWORD*, DWORD*, DWORD*) const {
  const_cast<FakeHttpContext*>(this)->unmodeled("IHttpContext::GetCurrentExecutionStats");
  return E_NOTIMPL;
}
IHttpTraceContext* FakeHttpContext::GetTraceContext() const {
  const_cast<FakeHttpContext*>(this)->unmodeled("IHttpContext::GetTraceContext");
  return nullptr;
}
HRESULT FakeHttpContext::GetServerVarChanges(DWORD, DWORD*, DWORD*, PCSTR**, PCWSTR**, DWORD*, DWORD**) {
  unmodeled("IHttpContext::GetServerVarChanges");
  return E_NOTIMPL;
}
HRESULT FakeHttpContext::MapHandler(DWORD, PCWSTR, PCWSTR, PCSTR, IScriptMapInfo**, BOOL) {
  unmodeled("IHttpContext::MapHandler");
  return E_NOTIMPL;
}
HRESULT FakeHttpContext::GetExtendedInterface(HTTP_CONTEXT_INTERFACE_VERSION, PVOID*) {
  unmodeled("IHttpContext::GetExtendedInterface");
  return E_NOTIMPL;
}

}  // namespace fake_iis
