#include "fake_http_server.h"

namespace fake_iis {

std::vector<std::string> FakeHttpServer::recycles() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recycles_;
}

std::vector<std::string> FakeHttpServer::violations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return violations_;
}

VOID FakeHttpServer::RecycleProcess(PCWSTR reason) {
  std::string text;
  if (reason != nullptr) {
    const int size = WideCharToMultiByte(CP_UTF8, 0, reason, -1, nullptr, 0, nullptr, nullptr);
    if (size > 1) {
      text.resize(static_cast<size_t>(size - 1));
      WideCharToMultiByte(CP_UTF8, 0, reason, -1, text.data(), size, nullptr, nullptr);
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  recycles_.push_back(text);
}

void FakeHttpServer::unmodeled(const char* method) const {
  std::lock_guard<std::mutex> lock(mutex_);
  violations_.push_back(std::string("a call IIS's fake does not model: IHttpServer::") + method);
}

BOOL FakeHttpServer::IsCommandLineLaunch() const {
  unmodeled("IsCommandLineLaunch");
  return FALSE;
}
PCWSTR FakeHttpServer::GetAppPoolName() const {
  unmodeled("GetAppPoolName");
  return L"";
}
HRESULT FakeHttpServer::AssociateWithThreadPool(HANDLE, LPOVERLAPPED_COMPLETION_ROUTINE) {
  unmodeled("AssociateWithThreadPool");
  return E_NOTIMPL;
}
VOID FakeHttpServer::IncrementThreadCount() { unmodeled("IncrementThreadCount"); }
VOID FakeHttpServer::DecrementThreadCount() { unmodeled("DecrementThreadCount"); }
VOID FakeHttpServer::ReportUnhealthy(PCWSTR, HRESULT) { unmodeled("ReportUnhealthy"); }
IAppHostAdminManager* FakeHttpServer::GetAdminManager() const {
  unmodeled("GetAdminManager");
  return nullptr;
}
HRESULT FakeHttpServer::GetFileInfo(PCWSTR, HANDLE, PSID, PCWSTR, HANDLE, BOOL, IHttpFileInfo**, IHttpTraceContext*) {
  unmodeled("GetFileInfo");
  return E_NOTIMPL;
}
HRESULT FakeHttpServer::FlushKernelCache(PCWSTR) {
  unmodeled("FlushKernelCache");
  return E_NOTIMPL;
}
HRESULT FakeHttpServer::DoCacheOperation(CACHE_OPERATION, IHttpCacheKey*, IHttpCacheSpecificData**,
                                         IHttpTraceContext*) {
  unmodeled("DoCacheOperation");
  return E_NOTIMPL;
}
GLOBAL_NOTIFICATION_STATUS FakeHttpServer::NotifyCustomNotification(ICustomNotificationProvider*) {
  unmodeled("NotifyCustomNotification");
  return GL_NOTIFICATION_CONTINUE;
}
IHttpPerfCounterInfo* FakeHttpServer::GetPerfCounterInfo() {
  unmodeled("GetPerfCounterInfo");
  return nullptr;
}
VOID FakeHttpServer::RecycleApplication(PCWSTR) { unmodeled("RecycleApplication"); }
VOID FakeHttpServer::NotifyConfigurationChange(PCWSTR) { unmodeled("NotifyConfigurationChange"); }
VOID FakeHttpServer::NotifyFileChange(PCWSTR) { unmodeled("NotifyFileChange"); }
IDispensedHttpModuleContextContainer* FakeHttpServer::DispenseContainer() {
  unmodeled("DispenseContainer");
  return nullptr;
}
HRESULT FakeHttpServer::AddFragmentToCache(HTTP_DATA_CHUNK*, PCWSTR) {
  unmodeled("AddFragmentToCache");
  return E_NOTIMPL;
}
HRESULT FakeHttpServer::ReadFragmentFromCache(PCWSTR, BYTE*, DWORD, DWORD*) {
  unmodeled("ReadFragmentFromCache");
  return E_NOTIMPL;
}
HRESULT FakeHttpServer::RemoveFragmentFromCache(PCWSTR) {
  unmodeled("RemoveFragmentFromCache");
  return E_NOTIMPL;
}
HRESULT FakeHttpServer::GetWorkerProcessSettings(IWpfSettings**) {
  unmodeled("GetWorkerProcessSettings");
  return E_NOTIMPL;
}
HRESULT FakeHttpServer::GetProtocolManagerCustomInterface(PCWSTR, PCWSTR, DWORD, PVOID*) {
  unmodeled("GetProtocolManagerCustomInterface");
  return E_NOTIMPL;
}
BOOL FakeHttpServer::SatisfiesPrecondition(PCWSTR, BOOL*) const {
  unmodeled("SatisfiesPrecondition");
  return FALSE;
}
IHttpTraceContext* FakeHttpServer::GetTraceContext() const {
  unmodeled("GetTraceContext");
  return nullptr;
}
HRESULT FakeHttpServer::RegisterFileChangeMonitor(PCWSTR, HANDLE, IHttpFileMonitor**) {
  unmodeled("RegisterFileChangeMonitor");
  return E_NOTIMPL;
}
HRESULT FakeHttpServer::GetExtendedInterface(HTTP_SERVER_INTERFACE_VERSION, PVOID*) {
  unmodeled("GetExtendedInterface");
  return E_NOTIMPL;
}

}  // namespace fake_iis
