// The engine a web-server module submits to. The engine lives in the addon,
// inside the Node the module embeds; JavaScript attaches it through the host
// link (gh_host_link) once the auth core has started, and takes it away when
// it closes. Until then, and after, requests are answered 503: fail closed.
// Portable C++ (no IIS headers): the native test host runs the same code.
#ifndef GATEHOUSE_IIS_ENGINE_SLOT_H
#define GATEHOUSE_IIS_ENGINE_SLOT_H

#include <shared_mutex>
#include <string>

#include "../core/gh_core.h"

namespace gh_iis {

class EngineSlot {
 public:
  EngineSlot();
  EngineSlot(const EngineSlot&) = delete;
  EngineSlot& operator=(const EngineSlot&) = delete;

  /** What JavaScript receives (as a tagged external) to attach an interceptor. */
  const gh_host_link* link() const { return &link_; }

  /**
   * Submits through the attached engine. Without one, completes at once (on
   * this thread) with 503. Never blocks on JavaScript.
   */
  void submit(const gh_request_view& request, gh_completion_fn done, void* host_data) const;

  /** Whether a request to this raw path must carry its body (the auth routes' POSTs). */
  bool needs_body(const char* path, size_t length) const;

  bool attached() const;

 private:
  static void Attach(void* self, const gh_engine_ref* ref);
  static void Detach(void* self, const gh_engine* engine);
  void clear();  // with the lock held

  gh_host_link link_{};
  // Readers: every submission. Writer: attach/detach, which therefore waits for
  // submissions in flight through the old engine (they never wait on JavaScript).
  mutable std::shared_mutex mutex_;
  gh_engine_ref ref_{};
  bool attached_ = false;
  std::string body_prefix_;
};

}  // namespace gh_iis

#endif
