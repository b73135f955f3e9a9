// The RESPOND decisions native code makes by itself, without the auth core:
// the engine's shutdown 503, gh_pending_fail, and a host's 503 while no engine
// is attached. One shape for all of them, as the core's own JSON errors have:
// `{"error": message}` as JSON (escaped as JSON.stringify would), and on 503 a `Retry-After` (the condition is
// temporary: Node starting, or the pool recycling).
#ifndef GATEHOUSE_ERROR_RESPONSE_H
#define GATEHOUSE_ERROR_RESPONSE_H

#include <cstddef>
#include <cstring>
#include <new>
#include <optional>
#include <string>

#include "bytes.h"
#include "gh_core.h"
#include "json_string.h"

namespace gh {

/** Owns the body `decision` points into: keep it alive until the decision has been handed over. */
class ErrorResponse {
 public:
  ErrorResponse(int status, const char* message) {
    const char* text = message == nullptr ? "" : message;
    body_ = "{\"error\":";
    append_json_string(body_, reinterpret_cast<const uint8_t*>(text), std::strlen(text));
    body_ += "}";
    decision_.kind = GH_DECISION_RESPOND;
    decision_.status = status;
    decision_.response_headers = kHeaders;
    decision_.response_header_count = status == 503 ? 2 : 1;  // Retry-After only where the condition passes
    decision_.body = bytes_of(body_);
  }
  // The decision points into this object's own body.
  ErrorResponse(const ErrorResponse&) = delete;
  ErrorResponse& operator=(const ErrorResponse&) = delete;

  const gh_decision* decision() const { return &decision_; }

 private:
  template <size_t N>
  static gh_bytes literal(const char (&text)[N]) {
    return gh_bytes{reinterpret_cast<const uint8_t*>(text), N - 1};
  }
  // Content-Type always; Retry-After (seconds) second, so a count of 1 leaves it out.
  static inline const gh_header kHeaders[] = {
      {literal("Content-Type"), literal("application/json; charset=utf-8")},
      {literal("Retry-After"), literal("5")},
  };

  std::string body_;
  gh_decision decision_{};
};

/**
 * Completes with this error through `done`. Never throws: if even the error
 * cannot be allocated, the bare status goes out, with no body.
 */
inline void answer_error(gh_completion_fn done, void* host_data, int status, const char* message) noexcept {
  std::optional<ErrorResponse> response;
  try {
    response.emplace(status, message);
  } catch (const std::bad_alloc&) {
  }
  gh_decision bare{};
  bare.kind = GH_DECISION_RESPOND;
  bare.status = status;
  done(host_data, response ? response->decision() : &bare);
}

}  // namespace gh

#endif
