// The request-interception hook (see interceptor.cpp).
#ifndef GATEHOUSE_ADDON_INTERCEPTOR_H
#define GATEHOUSE_ADDON_INTERCEPTOR_H

#include <napi.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "../core/gh_core.h"

class Interceptor : public Napi::ObjectWrap<Interceptor> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit Interceptor(const Napi::CallbackInfo& info);
  ~Interceptor() override;

 private:
  static void OnPolicy(void* data, gh_pending* pending);
  static Napi::Value OnSettled(const Napi::CallbackInfo& info, bool failed);
  void AwaitDecision(Napi::Env env, Napi::Object promise, gh_pending* p);
  gh_pending* TakeAwaiting(uint32_t id);
  static void OnTeardown(void* data);
  void Shutdown();
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value PendingCount(const Napi::CallbackInfo& info);
  Napi::Value AttachHost(const Napi::CallbackInfo& info);
  void DetachHost();

  Napi::FunctionReference policy_;
  // Settling promised decisions (JavaScript thread only): the requests waiting, by number.
  Napi::FunctionReference settle_;
  Napi::FunctionReference fail_;
  Napi::FunctionReference bind_;  // Function.prototype.bind
  std::unordered_map<uint32_t, gh_pending*> awaiting_;
  uint32_t last_id_ = 0;
  Napi::ThreadSafeFunction tsfn_;
  gh_engine* engine_ = nullptr;
  napi_env env_ = nullptr;
  std::atomic<bool> closed_{false};
  // A web-server module this interceptor serves (binding/iis), and what it was told.
  const gh_host_link* host_ = nullptr;
  std::string body_path_prefix_;
};

#endif
