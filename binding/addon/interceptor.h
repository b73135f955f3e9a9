// The request-interception hook (see interceptor.cpp).
#ifndef GATEHOUSE_ADDON_INTERCEPTOR_H
#define GATEHOUSE_ADDON_INTERCEPTOR_H

#include <napi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "../core/gh_core.h"
#include "completer.h"
#include "pending_queue.h"

class Interceptor : public Napi::ObjectWrap<Interceptor> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit Interceptor(const Napi::CallbackInfo& info);
  ~Interceptor() override;

 private:
  static void OnPolicy(void* data, gh_pending* pending);
  static void OnWake(Napi::Env env, Napi::Function, Interceptor* self, void*);
  using Wake = Napi::TypedThreadSafeFunction<Interceptor, void, &Interceptor::OnWake>;
  void Drain(Napi::Env env);
  void DecideOne(Napi::Env env, gh_pending* p);
  void DecideBatch(Napi::Env env, const std::vector<gh_pending*>& batch);
  void Decided(Napi::Env env, const Napi::Value& result, gh_pending* p);
  void FailQueued();
  void Complete(gh::Completion c);
  static Napi::Value OnSettled(const Napi::CallbackInfo& info, bool failed);
  void AwaitDecision(Napi::Env env, Napi::Object promise, gh_pending* p);
  gh_pending* TakeAwaiting(uint32_t id);
  static void OnTeardown(void* data);
  void Shutdown();
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value PendingCount(const Napi::CallbackInfo& info);
  Napi::Value CrossingStats(const Napi::CallbackInfo& info);
  Napi::Value AttachHost(const Napi::CallbackInfo& info);
  void DetachHost();

  Napi::FunctionReference policy_;
  // Set: one call per batch, batch_policy_(requests) -> results in the same order.
  Napi::FunctionReference batch_policy_;
  // Settling promised decisions (JavaScript thread only): the requests waiting, by number.
  Napi::FunctionReference settle_;
  Napi::FunctionReference fail_;
  Napi::FunctionReference bind_;  // Function.prototype.bind
  std::unordered_map<uint32_t, gh_pending*> awaiting_;
  uint32_t last_id_ = 0;
  // The crossing: native threads queue requests; the push that finds the queue
  // empty wakes the Node thread through wake_, which then takes the whole queue.
  gh::PendingQueue queue_;
  Wake wake_;
  // The way back: decisions complete on this thread, off the JavaScript thread (completer.h).
  std::unique_ptr<gh::Completer> completer_;
  // JavaScript thread only: wakes that found requests, and the requests they carried.
  double batches_ = 0;
  double crossed_ = 0;
  double largest_batch_ = 0;
  size_t last_batch_ = 0;
  gh_engine* engine_ = nullptr;
  napi_env env_ = nullptr;
  std::atomic<bool> closed_{false};
  // A web-server module this interceptor serves (binding/iis), and what it was told.
  const gh_host_link* host_ = nullptr;
  std::string body_path_prefix_;
};

#endif
