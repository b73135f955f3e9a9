// Layout probe: calls, through the project's IIS declarations (test/win32/iis-declarations),
// every IIS method the module (binding/iis) calls and every method IIS calls on the module, so
// that clang in MSVC mode (-fdump-vtable-layouts) prints the vtable of each interface.
// scripts/win32/iis-layout.sh compiles it and checks each slot against
// test/win32/iis-vtable-slots.json. Compiled only, never run.
#include <httpserv.h>

// What the module asks of IIS.
HRESULT probe_module_calls(IHttpContext* context, IHttpCompletionInfo* completion, IHttpModuleRegistrationInfo* info,
                           IHttpModuleFactory* factory, HTTP_DATA_CHUNK* chunk, IHttpServer* server) {
  IHttpRequest* request = context->GetRequest();
  IHttpResponse* response = context->GetResponse();
  HRESULT hr = S_OK;
  DWORD bytes = 0;
  BOOL pending = FALSE;
  USHORT length = 0;

  // IHttpRequest
  if (request->GetRawHttpRequest() == nullptr) return E_FAIL;
  if (request->GetHttpMethod() == nullptr) return E_FAIL;
  if (request->GetHeader("X-Probe", &length) != nullptr) return E_FAIL;
  hr |= request->SetHeader("X-Probe", "1", 1, TRUE);
  hr |= request->DeleteHeader("X-Probe");
  bytes += request->GetRemainingEntityBytes();
  hr |= request->ReadEntityBody(&bytes, sizeof bytes, TRUE, &bytes, &pending);
  hr |= request->InsertEntityBody(&bytes, sizeof bytes);
  USHORT major = 0;
  USHORT minor = 0;
  request->GetHttpVersion(&major, &minor);

  // IHttpResponse
  response->Clear();
  hr |= response->SetStatus(500, "Internal Server Error", 0, S_OK, nullptr, TRUE);
  hr |= response->SetHeader("Content-Type", "application/json", 16, TRUE);
  hr |= response->WriteEntityChunks(chunk, 1, FALSE, FALSE, &bytes);
  response->SetNeedDisconnect();
  response->DisableKernelCache(11);

  // IHttpContext
  if (context->AllocateRequestMemory(16) == nullptr) return E_OUTOFMEMORY;
  hr |= context->PostCompletion(0);
  hr |= context->CancelIo();

  // IHttpCompletionInfo
  hr |= completion->GetCompletionStatus();
  bytes += completion->GetCompletionBytes();

  // IHttpModuleRegistrationInfo
  hr |= info->SetRequestNotifications(factory, RQ_BEGIN_REQUEST, 0);

  // IHttpServer
  server->RecycleProcess(L"probe");
  return hr;
}

// What IIS asks of the module, and the interfaces it hands the module along the way.
REQUEST_NOTIFICATION_STATUS probe_iis_calls(IHttpModuleFactory* factory, IModuleAllocator* allocator,
                                            IHttpContext* context, IHttpEventProvider* provider,
                                            IHttpCompletionInfo* completion) {
  CHttpModule* module = nullptr;
  if (FAILED(factory->GetHttpModule(&module, allocator))) return RQ_NOTIFICATION_FINISH_REQUEST;
  if (allocator->AllocateMemory(16) == nullptr) provider->SetErrorStatus(E_OUTOFMEMORY);
  REQUEST_NOTIFICATION_STATUS status = module->OnBeginRequest(context, provider);
  if (status == RQ_NOTIFICATION_PENDING)
    status = module->OnAsyncCompletion(context, RQ_BEGIN_REQUEST, FALSE, provider, completion);
  module->Dispose();
  factory->Terminate();
  return status;
}
