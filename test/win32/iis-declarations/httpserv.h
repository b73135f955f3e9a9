// The part of the IIS native-code API (the Windows SDK's <httpserv.h>) that binding/iis/module.cpp
// uses, declared as Microsoft's reference documents it ("Native-Code API Reference", IIS 7.0 and
// later: CHttpModule, IHttpContext, IHttpRequest, IHttpResponse, IHttpModuleFactory,
// IHttpModuleRegistrationInfo, IHttpCompletionInfo, REQUEST_NOTIFICATION_STATUS, the RQ_ notification bits). Not the
// SDK header, which is not available here: written for the Windows leg only, so that mingw-w64
// compiles module.cpp (syntax, types, overloads, the `override`s) against the interfaces it
// must fit. Never used to build a module IIS loads: that takes MSVC and the real SDK (README).
#ifndef GATEHOUSE_TEST_IIS_DECLARATIONS_HTTPSERV_H
#define GATEHOUSE_TEST_IIS_DECLARATIONS_HTTPSERV_H

#include <windows.h>
#include <http.h>

enum REQUEST_NOTIFICATION_STATUS {
  RQ_NOTIFICATION_CONTINUE,
  RQ_NOTIFICATION_PENDING,
  RQ_NOTIFICATION_FINISH_REQUEST,
};

#define RQ_BEGIN_REQUEST 0x00000001

class IHttpEventProvider;
class IModuleAllocator;
class IHttpServer;
class IAppHostConfigException;

class IHttpCompletionInfo {
 public:
  virtual DWORD GetCompletionBytes(VOID) const = 0;
  virtual HRESULT GetCompletionStatus(VOID) const = 0;
};

class IHttpRequest {
 public:
  virtual HTTP_REQUEST* GetRawHttpRequest(VOID) = 0;
  virtual const HTTP_REQUEST* GetRawHttpRequest(VOID) const = 0;
  virtual PCSTR GetHttpMethod(VOID) const = 0;
  virtual DWORD GetRemainingEntityBytes(VOID) = 0;
  virtual HRESULT ReadEntityBody(VOID* pvBuffer, DWORD cbBuffer, BOOL fAsync, DWORD* pcbBytesReceived, BOOL* pfCompletionPending = NULL) = 0;
  virtual HRESULT SetHeader(PCSTR pszHeaderName, PCSTR pszHeaderValue, USHORT cchHeaderValue, BOOL fReplace) = 0;
  virtual HRESULT SetHeader(HTTP_HEADER_ID ulHeaderIndex, PCSTR pszHeaderValue, USHORT cchHeaderValue, BOOL fReplace) = 0;
  virtual HRESULT DeleteHeader(PCSTR pszHeaderName) = 0;
  virtual HRESULT DeleteHeader(HTTP_HEADER_ID ulHeaderIndex) = 0;
};

class IHttpResponse {
 public:
  virtual VOID Clear(VOID) = 0;
  virtual HRESULT SetStatus(USHORT statusCode, PCSTR pszReason, USHORT uSubStatus = 0, HRESULT hrErrorToReport = S_OK,
                            IAppHostConfigException* pException = NULL, BOOL fTrySkipCustomErrors = FALSE) = 0;
  virtual HRESULT SetHeader(PCSTR pszHeaderName, PCSTR pszHeaderValue, USHORT cchHeaderValue, BOOL fReplace) = 0;
  virtual HRESULT SetHeader(HTTP_HEADER_ID ulHeaderIndex, PCSTR pszHeaderValue, USHORT cchHeaderValue, BOOL fReplace) = 0;
  virtual HRESULT WriteEntityChunks(HTTP_DATA_CHUNK* pDataChunks, DWORD nChunks, BOOL fAsync, BOOL fMoreData, DWORD* pcbSent,
                                    BOOL* pfCompletionExpected = NULL) = 0;
  virtual VOID SetNeedDisconnect(VOID) = 0;
};

class IHttpContext {
 public:
  virtual IHttpRequest* GetRequest(VOID) = 0;
  virtual IHttpResponse* GetResponse(VOID) = 0;
  virtual VOID* AllocateRequestMemory(DWORD cbAllocation) = 0;
  virtual HRESULT PostCompletion(DWORD cbBytes) = 0;
  virtual HRESULT CancelIo(VOID) = 0;
};

class CHttpModule {
 public:
  virtual REQUEST_NOTIFICATION_STATUS OnBeginRequest(IHttpContext* /*pHttpContext*/, IHttpEventProvider* /*pProvider*/) { return RQ_NOTIFICATION_CONTINUE; }
  virtual REQUEST_NOTIFICATION_STATUS OnAsyncCompletion(IHttpContext* /*pHttpContext*/, DWORD /*dwNotification*/, BOOL /*fPostNotification*/,
                                                        IHttpEventProvider* /*pProvider*/, IHttpCompletionInfo* /*pCompletionInfo*/) {
    return RQ_NOTIFICATION_CONTINUE;
  }
  virtual VOID Dispose(VOID) { delete this; }

 protected:
  CHttpModule() {}
  virtual ~CHttpModule() {}
};

class IHttpModuleFactory {
 public:
  virtual HRESULT GetHttpModule(CHttpModule** ppModule, IModuleAllocator* pAllocator) = 0;
  virtual VOID Terminate(VOID) = 0;
};

class IHttpModuleRegistrationInfo {
 public:
  virtual HRESULT SetRequestNotifications(IHttpModuleFactory* pModuleFactory, DWORD dwRequestNotifications, DWORD dwPostRequestNotifications) = 0;
};

#endif
