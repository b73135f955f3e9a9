// The fake IIS's IHttpServer, which RegisterModule receives: it records each RecycleProcess
// (the module asks for a new worker process once its Node has ended) and refuses (records)
// every other call, as the fake does for whatever it does not model.
#ifndef GATEHOUSE_FAKE_IIS_FAKE_HTTP_SERVER_H
#define GATEHOUSE_FAKE_IIS_FAKE_HTTP_SERVER_H

#include <httpserv.h>

#include <mutex>
#include <string>
#include <vector>

namespace fake_iis {

class FakeHttpServer final : public IHttpServer {
 public:
  /** The reasons given to RecycleProcess, in order (UTF-8). */
  std::vector<std::string> recycles() const;
  std::vector<std::string> violations() const;

  VOID RecycleProcess(PCWSTR reason) override;

  BOOL IsCommandLineLaunch() const override;
  PCWSTR GetAppPoolName() const override;
  HRESULT AssociateWithThreadPool(HANDLE handle, LPOVERLAPPED_COMPLETION_ROUTINE completion) override;
  VOID IncrementThreadCount() override;
  VOID DecrementThreadCount() override;
  VOID ReportUnhealthy(PCWSTR reason, HRESULT hr) override;
  IAppHostAdminManager* GetAdminManager() const override;
  HRESULT GetFileInfo(PCWSTR physical_path, HANDLE user_token, PSID sid, PCWSTR change_path, HANDLE change_token,
                      BOOL cache, IHttpFileInfo** file_info, IHttpTraceContext* trace) override;
  HRESULT FlushKernelCache(PCWSTR url) override;
  HRESULT DoCacheOperation(CACHE_OPERATION operation, IHttpCacheKey* key, IHttpCacheSpecificData** data,
                           IHttpTraceContext* trace) override;
  GLOBAL_NOTIFICATION_STATUS NotifyCustomNotification(ICustomNotificationProvider* provider) override;
  IHttpPerfCounterInfo* GetPerfCounterInfo() override;
  VOID RecycleApplication(PCWSTR app_config_path) override;
  VOID NotifyConfigurationChange(PCWSTR path) override;
  VOID NotifyFileChange(PCWSTR file_name) override;
  IDispensedHttpModuleContextContainer* DispenseContainer() override;
  HRESULT AddFragmentToCache(HTTP_DATA_CHUNK* chunk, PCWSTR name) override;
  HRESULT ReadFragmentFromCache(PCWSTR name, BYTE* buffer, DWORD size, DWORD* copied) override;
  HRESULT RemoveFragmentFromCache(PCWSTR name) override;
  HRESULT GetWorkerProcessSettings(IWpfSettings** settings) override;
  HRESULT GetProtocolManagerCustomInterface(PCWSTR dll, PCWSTR init_function, DWORD interface_id,
                                            PVOID* custom_interface) override;
  BOOL SatisfiesPrecondition(PCWSTR precondition, BOOL* unknown) const override;
  IHttpTraceContext* GetTraceContext() const override;
  HRESULT RegisterFileChangeMonitor(PCWSTR path, HANDLE token, IHttpFileMonitor** monitor) override;
  HRESULT GetExtendedInterface(HTTP_SERVER_INTERFACE_VERSION version, PVOID* out) override;

 private:
  void unmodeled(const char* method) const;

  mutable std::mutex mutex_;
  std::vector<std::string> recycles_;
  mutable std::vector<std::string> violations_;
};

}  // namespace fake_iis

#endif
