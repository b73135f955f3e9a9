// The IIS native-code API (the Windows SDK's <httpserv.h>) as far as the module (binding/iis)
// needs it, written for this project from the documented interface definitions (IIS 7.0 and
// later "Native-Code API Reference"). Not the SDK header, which cannot be committed here.
//
// Every interface the module touches is declared whole: every virtual, in the documented
// order, with the documented parameter types, so that a compiler laying out vtables the way
// MSVC does (clang --target=x86_64-pc-windows-msvc) puts each method in the slot IIS calls.
// Remember MSVC's rule when editing: overloads of one name share the position of the first
// of them and are placed in reverse order of declaration (SetHeader(HTTP_HEADER_ID) before
// SetHeader(PCSTR)). test/win32/iis-vtable-slots.json holds the slot of every method, and
// scripts/win32/iis-layout.sh fails if any declaration here moves.
//
// Interfaces the module only passes along (the per-notification providers, the objects
// IHttpContext and IHttpServer hand out that the module never asks for) stay incomplete:
// calling into them does not compile.
//
// As in the SDK, every CHttpModule notification handler that a module does not override breaks
// into the debugger (DebugBreak) before continuing: subscribing to a notification without
// handling it is a bug, never a silent no-op.
#ifndef GATEHOUSE_TEST_IIS_DECLARATIONS_HTTPSERV_H
#define GATEHOUSE_TEST_IIS_DECLARATIONS_HTTPSERV_H

#include <winsock2.h>
#include <windows.h>
#include <http.h>

// Notification bits for SetRequestNotifications (the request pipeline's events, in order).
#define RQ_BEGIN_REQUEST 0x00000001
#define RQ_AUTHENTICATE_REQUEST 0x00000002
#define RQ_AUTHORIZE_REQUEST 0x00000004
#define RQ_RESOLVE_REQUEST_CACHE 0x00000008
#define RQ_MAP_REQUEST_HANDLER 0x00000010
#define RQ_ACQUIRE_REQUEST_STATE 0x00000020
#define RQ_PRE_EXECUTE_REQUEST_HANDLER 0x00000040
#define RQ_EXECUTE_REQUEST_HANDLER 0x00000080
#define RQ_RELEASE_REQUEST_STATE 0x00000100
#define RQ_UPDATE_REQUEST_CACHE 0x00000200
#define RQ_LOG_REQUEST 0x00000400
#define RQ_END_REQUEST 0x00000800
#define RQ_SEND_RESPONSE_STATUS_AND_HEADERS 0x08000000
#define RQ_CUSTOM_NOTIFICATION 0x10000000
#define RQ_SEND_RESPONSE 0x20000000
#define RQ_READ_ENTITY 0x40000000
#define RQ_MAP_PATH 0x80000000

enum REQUEST_NOTIFICATION_STATUS {
  RQ_NOTIFICATION_CONTINUE,
  RQ_NOTIFICATION_PENDING,
  RQ_NOTIFICATION_FINISH_REQUEST,
};

enum HTTP_CONTEXT_INTERFACE_VERSION {};

enum HTTP_SERVER_INTERFACE_VERSION { HTTP_SERVER_INTERFACE_V2 };

enum GLOBAL_NOTIFICATION_STATUS { GL_NOTIFICATION_CONTINUE, GL_NOTIFICATION_HANDLED };

enum CACHE_OPERATION {
  CACHE_OPERATION_RETRIEVE,
  CACHE_OPERATION_ADD,
  CACHE_OPERATION_DELETE,
  CACHE_OPERATION_FLUSH_PREFIX,
  CACHE_OPERATION_ENUM,
};

typedef VOID* HTTP_MODULE_ID;

// Passed along or handed out, never called by the module.
class IAppHostConfigException;
class IAppHostAdminManager;
class IHttpCacheKey;
class IHttpCacheSpecificData;
class IHttpPerfCounterInfo;
class IDispensedHttpModuleContextContainer;
class IWpfSettings;
class IHttpFileMonitor;
class IHttpSite;
class IHttpApplication;
class IHttpConnection;
class IHttpUser;
class IHttpModuleContextContainer;
class IHttpCachePolicy;
class IHttpUrlInfo;
class IMetadataInfo;
class IScriptMapInfo;
class IHttpFileInfo;
class IHttpTraceContext;
class ICustomNotificationProvider;
class IAuthenticationProvider;
class IMapHandlerProvider;
class ISendResponseProvider;
class IMapPathProvider;
class IReadEntityProvider;
class CGlobalModule;
class CHttpModule;

// What RegisterModule is given: the worker process's services. The module calls RecycleProcess.
class IHttpServer {
 public:
  virtual BOOL IsCommandLineLaunch(VOID) const = 0;
  virtual PCWSTR GetAppPoolName(VOID) const = 0;
  virtual HRESULT AssociateWithThreadPool(HANDLE handle, LPOVERLAPPED_COMPLETION_ROUTINE completion) = 0;
  virtual VOID IncrementThreadCount(VOID) = 0;
  virtual VOID DecrementThreadCount(VOID) = 0;
  virtual VOID ReportUnhealthy(PCWSTR reason, HRESULT hr) = 0;
  virtual VOID RecycleProcess(PCWSTR reason) = 0;
  virtual IAppHostAdminManager* GetAdminManager(VOID) const = 0;
  virtual HRESULT GetFileInfo(PCWSTR physical_path, HANDLE user_token, PSID sid, PCWSTR change_path,
                              HANDLE change_token, BOOL cache, IHttpFileInfo** file_info,
                              IHttpTraceContext* trace = NULL) = 0;
  virtual HRESULT FlushKernelCache(PCWSTR url) = 0;
  virtual HRESULT DoCacheOperation(CACHE_OPERATION operation, IHttpCacheKey* key, IHttpCacheSpecificData** data,
                                   IHttpTraceContext* trace = NULL) = 0;
  virtual GLOBAL_NOTIFICATION_STATUS NotifyCustomNotification(ICustomNotificationProvider* provider) = 0;
  virtual IHttpPerfCounterInfo* GetPerfCounterInfo(VOID) = 0;
  virtual VOID RecycleApplication(PCWSTR app_config_path) = 0;
  virtual VOID NotifyConfigurationChange(PCWSTR path) = 0;
  virtual VOID NotifyFileChange(PCWSTR file_name) = 0;
  virtual IDispensedHttpModuleContextContainer* DispenseContainer(VOID) = 0;
  virtual HRESULT AddFragmentToCache(HTTP_DATA_CHUNK* chunk, PCWSTR name) = 0;
  virtual HRESULT ReadFragmentFromCache(PCWSTR name, BYTE* buffer, DWORD size, DWORD* copied) = 0;
  virtual HRESULT RemoveFragmentFromCache(PCWSTR name) = 0;
  virtual HRESULT GetWorkerProcessSettings(IWpfSettings** settings) = 0;
  virtual HRESULT GetProtocolManagerCustomInterface(PCWSTR dll, PCWSTR init_function, DWORD interface_id,
                                                    PVOID* custom_interface) = 0;
  virtual BOOL SatisfiesPrecondition(PCWSTR precondition, BOOL* unknown = NULL) const = 0;
  virtual IHttpTraceContext* GetTraceContext(VOID) const = 0;
  virtual HRESULT RegisterFileChangeMonitor(PCWSTR path, HANDLE token, IHttpFileMonitor** monitor) = 0;
  virtual HRESULT GetExtendedInterface(HTTP_SERVER_INTERFACE_VERSION version, PVOID* out) = 0;
};

class IHttpEventProvider {
 public:
  virtual VOID SetErrorStatus(HRESULT hr) = 0;
};

class IHttpCompletionInfo {
 public:
  virtual DWORD GetCompletionBytes(VOID) const = 0;
  virtual HRESULT GetCompletionStatus(VOID) const = 0;
};

class IModuleAllocator {
 public:
  virtual VOID* AllocateMemory(DWORD size) = 0;
};

class IHttpRequest {
 public:
  virtual HTTP_REQUEST* GetRawHttpRequest(VOID) = 0;
  virtual const HTTP_REQUEST* GetRawHttpRequest(VOID) const = 0;
  virtual PCSTR GetHeader(PCSTR name, USHORT* length = NULL) const = 0;
  virtual PCSTR GetHeader(HTTP_HEADER_ID id, USHORT* length = NULL) const = 0;
  virtual HRESULT SetHeader(PCSTR name, PCSTR value, USHORT length, BOOL replace) = 0;
  virtual HRESULT SetHeader(HTTP_HEADER_ID id, PCSTR value, USHORT length, BOOL replace) = 0;
  virtual HRESULT DeleteHeader(PCSTR name) = 0;
  virtual HRESULT DeleteHeader(HTTP_HEADER_ID id) = 0;
  virtual PCSTR GetHttpMethod(VOID) const = 0;
  virtual HRESULT SetHttpMethod(PCSTR method) = 0;
  virtual HRESULT SetUrl(PCWSTR url, DWORD length, BOOL reset_query) = 0;
  virtual HRESULT SetUrl(PCSTR url, DWORD length, BOOL reset_query) = 0;
  virtual BOOL GetUrlChanged(VOID) const = 0;
  virtual PCWSTR GetForwardedUrl(VOID) const = 0;
  virtual PSOCKADDR GetLocalAddress(VOID) const = 0;
  virtual PSOCKADDR GetRemoteAddress(VOID) const = 0;
  virtual HRESULT ReadEntityBody(VOID* buffer, DWORD size, BOOL async, DWORD* received, BOOL* pending = NULL) = 0;
  virtual HRESULT InsertEntityBody(VOID* buffer, DWORD size) = 0;
  virtual DWORD GetRemainingEntityBytes(VOID) = 0;
  virtual VOID GetHttpVersion(USHORT* major, USHORT* minor) const = 0;
  virtual HRESULT GetClientCertificate(HTTP_SSL_CLIENT_CERT_INFO** info, BOOL* negotiated) = 0;
  virtual HRESULT NegotiateClientCertificate(BOOL async, BOOL* pending = NULL) = 0;
  virtual DWORD GetSiteId(VOID) const = 0;
  virtual HRESULT GetHeaderChanges(DWORD old_change, DWORD* new_change, PCSTR known[HttpHeaderRequestMaximum],
                                   DWORD* unknown_count, PCSTR** unknown_names, PCSTR** unknown_values,
                                   DWORD changed_known[HttpHeaderRequestMaximum + 1], DWORD* changed_unknown_count,
                                   DWORD** changed_unknown) = 0;
};

class IHttpResponse {
 public:
  virtual HTTP_RESPONSE* GetRawHttpResponse(VOID) = 0;
  virtual const HTTP_RESPONSE* GetRawHttpResponse(VOID) const = 0;
  virtual IHttpCachePolicy* GetCachePolicy(VOID) = 0;
  virtual HRESULT SetStatus(USHORT status, PCSTR reason, USHORT sub_status = 0, HRESULT error = S_OK,
                            IAppHostConfigException* exception = NULL, BOOL skip_custom_errors = FALSE) = 0;
  virtual HRESULT SetHeader(PCSTR name, PCSTR value, USHORT length, BOOL replace) = 0;
  virtual HRESULT SetHeader(HTTP_HEADER_ID id, PCSTR value, USHORT length, BOOL replace) = 0;
  virtual HRESULT DeleteHeader(PCSTR name) = 0;
  virtual HRESULT DeleteHeader(HTTP_HEADER_ID id) = 0;
  virtual PCSTR GetHeader(PCSTR name, USHORT* length = NULL) const = 0;
  virtual PCSTR GetHeader(HTTP_HEADER_ID id, USHORT* length = NULL) const = 0;
  virtual VOID Clear(VOID) = 0;
  virtual VOID ClearHeaders(VOID) = 0;
  virtual VOID SetNeedDisconnect(VOID) = 0;
  virtual VOID ResetConnection(VOID) = 0;
  virtual VOID DisableKernelCache(ULONG reason = 9) = 0;
  virtual BOOL GetKernelCacheEnabled(VOID) const = 0;
  virtual VOID SuppressHeaders(VOID) = 0;
  virtual BOOL GetHeadersSuppressed(VOID) const = 0;
  virtual HRESULT Flush(BOOL async, BOOL more_data, DWORD* sent, BOOL* completion_expected = NULL) = 0;
  virtual HRESULT Redirect(PCSTR url, BOOL reset_status = TRUE, BOOL include_parameters = FALSE) = 0;
  virtual HRESULT WriteEntityChunkByReference(HTTP_DATA_CHUNK* chunk, LONG position = -1) = 0;
  virtual HRESULT WriteEntityChunks(HTTP_DATA_CHUNK* chunks, DWORD count, BOOL async, BOOL more_data, DWORD* sent,
                                    BOOL* completion_expected = NULL) = 0;
  virtual VOID DisableBuffering(VOID) = 0;
  virtual VOID GetStatus(USHORT* status, USHORT* sub_status = NULL, PCSTR* reason = NULL, USHORT* reason_length = NULL,
                         HRESULT* error = NULL, PCWSTR* module = NULL, DWORD* notification = NULL,
                         IAppHostConfigException** exception = NULL, BOOL* skip_custom_errors = NULL) = 0;
  virtual HRESULT SetErrorDescription(PCWSTR description, DWORD length, BOOL html_encode = TRUE) = 0;
  virtual PCWSTR GetErrorDescription(DWORD* length = NULL) = 0;
  virtual HRESULT GetHeaderChanges(DWORD old_change, DWORD* new_change, PCSTR known[HttpHeaderResponseMaximum],
                                   DWORD* unknown_count, PCSTR** unknown_names, PCSTR** unknown_values,
                                   DWORD changed_known[HttpHeaderResponseMaximum + 1], DWORD* changed_unknown_count,
                                   DWORD** changed_unknown) = 0;
  virtual VOID CloseConnection(VOID) = 0;
};

class IHttpContext {
 public:
  virtual IHttpSite* GetSite(VOID) = 0;
  virtual IHttpApplication* GetApplication(VOID) = 0;
  virtual IHttpConnection* GetConnection(VOID) = 0;
  virtual IHttpRequest* GetRequest(VOID) = 0;
  virtual IHttpResponse* GetResponse(VOID) = 0;
  virtual BOOL GetResponseHeadersSent(VOID) const = 0;
  virtual IHttpUser* GetUser(VOID) const = 0;
  virtual IHttpModuleContextContainer* GetModuleContextContainer(VOID) = 0;
  virtual VOID IndicateCompletion(REQUEST_NOTIFICATION_STATUS status) = 0;
  virtual HRESULT PostCompletion(DWORD bytes) = 0;
  virtual VOID DisableNotifications(DWORD notifications, DWORD post_notifications) = 0;
  virtual BOOL GetNextNotification(REQUEST_NOTIFICATION_STATUS status, DWORD* notification, BOOL* is_post,
                                   CHttpModule** module, IHttpEventProvider** provider) = 0;
  virtual BOOL GetIsLastNotification(REQUEST_NOTIFICATION_STATUS status) = 0;
  virtual HRESULT ExecuteRequest(BOOL async, IHttpContext* child, DWORD flags, IHttpUser* user,
                                 BOOL* completion_expected = NULL) = 0;
  virtual DWORD GetExecuteFlags(VOID) const = 0;
  virtual HRESULT GetServerVariable(PCSTR name, PCWSTR* value, DWORD* length) = 0;
  virtual HRESULT GetServerVariable(PCSTR name, PCSTR* value, DWORD* length) = 0;
  virtual HRESULT SetServerVariable(PCSTR name, PCWSTR value) = 0;
  virtual VOID* AllocateRequestMemory(DWORD size) = 0;
  virtual IHttpUrlInfo* GetUrlInfo(VOID) = 0;
  virtual IMetadataInfo* GetMetadata(VOID) = 0;
  virtual PCWSTR GetPhysicalPath(DWORD* length = NULL) = 0;
  virtual PCWSTR GetScriptName(DWORD* length = NULL) const = 0;
  virtual PCWSTR GetScriptTranslated(DWORD* length = NULL) = 0;
  virtual IScriptMapInfo* GetScriptMap(VOID) const = 0;
  virtual VOID SetRequestHandled(VOID) = 0;
  virtual IHttpFileInfo* GetFileInfo(VOID) const = 0;
  virtual HRESULT MapPath(PCWSTR url, PWSTR physical_path, DWORD* size) = 0;
  virtual HRESULT NotifyCustomNotification(ICustomNotificationProvider* provider, BOOL* completion_expected) = 0;
  virtual IHttpContext* GetParentContext(VOID) const = 0;
  virtual IHttpContext* GetRootContext(VOID) const = 0;
  virtual HRESULT CloneContext(DWORD flags, IHttpContext** clone) = 0;
  virtual HRESULT ReleaseClonedContext(VOID) = 0;
  virtual HRESULT GetCurrentExecutionStats(DWORD* notification, DWORD* notification_start = NULL, PCWSTR* module = NULL,
                                           DWORD* module_start = NULL, DWORD* async_notification = NULL,
                                           DWORD* async_notification_start = NULL) const = 0;
  virtual IHttpTraceContext* GetTraceContext(VOID) const = 0;
  virtual HRESULT GetServerVarChanges(DWORD old_change, DWORD* new_change, DWORD* count, PCSTR** names, PCWSTR** values,
                                      DWORD* changed_count, DWORD** changed) = 0;
  virtual HRESULT CancelIo(VOID) = 0;
  virtual HRESULT MapHandler(DWORD site_id, PCWSTR site_name, PCWSTR url, PCSTR verb, IScriptMapInfo** script_map,
                             BOOL ignore_wildcard_mappings = FALSE) = 0;
  virtual HRESULT GetExtendedInterface(HTTP_CONTEXT_INTERFACE_VERSION version, PVOID* out) = 0;
};

namespace gatehouse_iis_declarations {
// What every CHttpModule handler a module did not override does, as in the SDK.
inline REQUEST_NOTIFICATION_STATUS not_overridden() {
  DebugBreak();
  return RQ_NOTIFICATION_CONTINUE;
}
}  // namespace gatehouse_iis_declarations

class CHttpModule {
 public:
  virtual REQUEST_NOTIFICATION_STATUS OnBeginRequest(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnPostBeginRequest(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnAuthenticateRequest(IHttpContext*, IAuthenticationProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnPostAuthenticateRequest(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnAuthorizeRequest(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnPostAuthorizeRequest(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnResolveRequestCache(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnPostResolveRequestCache(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnMapRequestHandler(IHttpContext*, IMapHandlerProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnPostMapRequestHandler(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnAcquireRequestState(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnPostAcquireRequestState(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnPreExecuteRequestHandler(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnPostPreExecuteRequestHandler(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnExecuteRequestHandler(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnPostExecuteRequestHandler(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnReleaseRequestState(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnPostReleaseRequestState(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnUpdateRequestCache(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnPostUpdateRequestCache(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnLogRequest(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnPostLogRequest(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnEndRequest(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnPostEndRequest(IHttpContext*, IHttpEventProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnSendResponse(IHttpContext*, ISendResponseProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnMapPath(IHttpContext*, IMapPathProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnReadEntity(IHttpContext*, IReadEntityProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnCustomRequestNotification(IHttpContext*, ICustomNotificationProvider*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual REQUEST_NOTIFICATION_STATUS OnAsyncCompletion(IHttpContext*, DWORD, BOOL, IHttpEventProvider*,
                                                        IHttpCompletionInfo*) {
    return gatehouse_iis_declarations::not_overridden();
  }
  virtual VOID Dispose(VOID) { delete this; }

 protected:
  CHttpModule() {}
  virtual ~CHttpModule() {}
};

class IHttpModuleFactory {
 public:
  virtual HRESULT GetHttpModule(CHttpModule** module, IModuleAllocator* allocator) = 0;
  virtual VOID Terminate(VOID) = 0;
};

class IHttpModuleRegistrationInfo {
 public:
  virtual PCWSTR GetName(VOID) const = 0;
  virtual HTTP_MODULE_ID GetId(VOID) const = 0;
  virtual HRESULT SetRequestNotifications(IHttpModuleFactory* factory, DWORD notifications,
                                          DWORD post_notifications) = 0;
  virtual HRESULT SetGlobalNotifications(CGlobalModule* module, DWORD notifications) = 0;
  virtual HRESULT SetPriorityForRequestNotification(DWORD notification, PCWSTR priority) = 0;
  virtual HRESULT SetPriorityForGlobalNotification(DWORD notification, PCWSTR priority) = 0;
};

typedef HRESULT(WINAPI* PFN_REGISTERMODULE)(DWORD server_version, IHttpModuleRegistrationInfo* info,
                                            IHttpServer* server);

#define MODULE_REGISTERMODULE "RegisterModule"

#endif
