// The IIS native module: every request, early in the pipeline (BeginRequest),
// goes to the gatehouse auth core running in Node embedded in this worker
// process, and the module applies its decision (docs/in-server-module.md).
//
// This file is what IIS loads and calls first: DllMain, RegisterModule and the module factory.
// The rest, one concern a file:
//   gatehouse_module.cpp   a request's way through the module (begin, body, decision, apply)
//   embedded_node.cpp      Node started by the first request, ended for good, stopped at Terminate
//   response_writer.cpp    the core's answer, or the module's own, written to IIS's response
//   request_edits.cpp      the identity headers edited and the body given back for the app
//   request_entity.h       IIS's entity body as the body reader reads it (body_reader.cpp)
//   event_log.cpp          the module's events in the Windows event log
//   pool_settings.cpp      the application pool's environment variables
//   module_files.cpp       where the module finds libnode.dll and Node's boot script
//   wide_text.cpp          UTF-8 and UTF-16
// and the portable parts the native test hosts run too: engine_slot, deadline_timer,
// deferred_decision, host_link.
//
// No C++ exception reaches IIS: every entry point IIS calls (the notifications, the factory,
// RegisterModule) catches everything and answers 500 (or fails the call).
//
// IIS loads it built with MSVC against the IIS SDK (httpserv.h) and libnode (see
// docs/in-server-module.md). The Windows leg runs these very files under wine, built with
// mingw-w64 into a fake IIS (test/win32/fake-iis) with the real addon and in-server core;
// only node_runtime.cpp (the embedding itself) is replaced there. That one runs on Linux against
// Debian's libnode (test/inserver/embedding.test.ts), and inside w3wp on a real IIS
// (.github/workflows/iis.yml).
#include "iis_sdk.h"

#include <new>

#include "deadline_timer.h"
#include "embedded_node.h"
#include "engine_slot.h"
#include "event_log.h"
#include "gatehouse_module.h"

namespace {

HMODULE g_module = nullptr;  // noted by DllMain, which does nothing else

// final: Terminate's `delete this` deletes exactly this type (the interface has no virtual destructor).
class GatehouseModuleFactory final : public IHttpModuleFactory {
 public:
  // Both live as long as the worker process (RegisterModule makes them, nothing destroys them).
  GatehouseModuleFactory(gh_iis::EngineSlot* slot, gh_iis::DeadlineTimer* deadlines)
      : slot_(slot), deadlines_(deadlines) {}

  HRESULT GetHttpModule(CHttpModule** module, IModuleAllocator*) override {
    if (module == nullptr) return E_POINTER;
    try {
      *module = new gh_iis::GatehouseModule(*slot_, *deadlines_);
      return S_OK;
    } catch (...) {
      *module = nullptr;
      return HRESULT_FROM_WIN32(ERROR_NOT_ENOUGH_MEMORY);
    }
  }

  // The worker process is going away: stop Node (pending requests are answered 503 by the
  // core's teardown). IIS calls this outside the loader lock, so waiting for Node's thread is safe here.
  void Terminate() override {
    gh_iis::stop_node();
    delete this;
  }

 private:
  gh_iis::EngineSlot* slot_;
  gh_iis::DeadlineTimer* deadlines_;
};

// RegisterModule's work; it may throw (allocations), RegisterModule catches.
// Node does not start here: IIS registers a global module in every worker process, also those
// that serve no site using gatehouse (see embedded_node.h).
HRESULT register_module(DWORD, IHttpModuleRegistrationInfo* info, IHttpServer* server) {
  auto* slot = new gh_iis::EngineSlot();
  auto* deadlines = new gh_iis::DeadlineTimer();
  gh_iis::prepare_embedded_node(g_module, server, slot);
  auto* factory = new GatehouseModuleFactory(slot, deadlines);
  const HRESULT hr = info->SetRequestNotifications(factory, RQ_BEGIN_REQUEST, 0);
  if (FAILED(hr)) {
    gh_iis::report_request_failure("IHttpModuleRegistrationInfo::SetRequestNotifications", hr);
    delete factory;  // IIS did not take it, so it never calls Terminate
  }
  return hr;
}

}  // namespace

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID) {
  if (reason == DLL_PROCESS_ATTACH) {
    g_module = instance;
    DisableThreadLibraryCalls(instance);
  }
  return TRUE;
}

// IIS calls this once per worker process when it loads the module.
extern "C" __declspec(dllexport) HRESULT
    __stdcall RegisterModule(DWORD version, IHttpModuleRegistrationInfo* info, IHttpServer* server) {
  try {
    return register_module(version, info, server);
  } catch (const std::bad_alloc&) {
    gh_iis::report("gatehouse: out of memory while loading the module");
    return HRESULT_FROM_WIN32(ERROR_NOT_ENOUGH_MEMORY);
  } catch (...) {
    gh_iis::report("gatehouse: an exception ended the module's registration");
    return E_FAIL;
  }
}
