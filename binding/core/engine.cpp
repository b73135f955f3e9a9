// The interception engine of the C ABI: requests are deep-copied into
// reference-counted pending objects, handed to a policy, and completed
// exactly once, from whatever thread decides, possibly long after the
// submitting call returned. Shutdown answers every pending request with 503
// (error_response.h).
#include <atomic>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_set>
#include <vector>

#include "bytes.h"
#include "error_response.h"
#include "gh_core.h"

namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_set<gh_pending*> pending;
  bool shut_down = false;
};

}  // namespace

struct gh_pending {
  std::atomic<int> references{2};  // the registry's and the policy's
  std::atomic<bool> completed{false};
  std::shared_ptr<Registry> registry;
  gh_completion_fn done = nullptr;
  void* host_data = nullptr;

  // The deep copy the view points into.
  std::string method, scheme, host, path, query, remote_address, body;
  std::vector<std::string> header_text;
  std::vector<gh_header> headers;
  gh_request_view request{};
};

struct gh_engine {
  gh_policy_fn policy = nullptr;
  void* policy_data = nullptr;
  std::shared_ptr<Registry> registry = std::make_shared<Registry>();
};

namespace {

gh_pending* copy_request(const gh_request_view& source) {
  auto* pending = new (std::nothrow) gh_pending();
  if (pending == nullptr) return nullptr;
  try {
    pending->method = gh::text_of(source.method);
    pending->scheme = gh::text_of(source.scheme);
    pending->host = gh::text_of(source.host);
    pending->path = gh::text_of(source.path);
    pending->query = gh::text_of(source.query);
    pending->remote_address = gh::text_of(source.remote_address);
    pending->header_text.reserve(source.header_count * 2);
    for (size_t i = 0; i < source.header_count; ++i) {
      pending->header_text.push_back(gh::text_of(source.headers[i].name));
      pending->header_text.push_back(gh::text_of(source.headers[i].value));
    }
    // Views are taken only once the strings have stopped moving.
    pending->headers.reserve(source.header_count);
    for (size_t i = 0; i < source.header_count; ++i) {
      pending->headers.push_back(
          gh_header{gh::bytes_of(pending->header_text[2 * i]), gh::bytes_of(pending->header_text[2 * i + 1])});
    }
    gh_request_view& request = pending->request;
    request.method = gh::bytes_of(pending->method);
    request.scheme = gh::bytes_of(pending->scheme);
    request.host = gh::bytes_of(pending->host);
    request.path = gh::bytes_of(pending->path);
    request.query = gh::bytes_of(pending->query);
    request.remote_address = gh::bytes_of(pending->remote_address);
    request.headers = pending->headers.data();
    request.header_count = pending->headers.size();
    if (source.body.ptr != nullptr) {
      pending->body = gh::text_of(source.body);
      request.body = gh::bytes_of(pending->body);
    }
  } catch (const std::bad_alloc&) {
    delete pending;
    return nullptr;
  }
  return pending;
}

}  // namespace

extern "C" {

gh_status gh_engine_new(gh_policy_fn policy, void* policy_data, gh_engine** out) {
  if (policy == nullptr || out == nullptr) return GH_ERR_INVALID_ARGUMENT;
  auto* engine = new (std::nothrow) gh_engine();
  if (engine == nullptr) return GH_ERR_OUT_OF_MEMORY;
  engine->policy = policy;
  engine->policy_data = policy_data;
  *out = engine;
  return GH_OK;
}

gh_status gh_engine_submit(gh_engine* engine, const gh_request_view* request, gh_completion_fn done, void* host_data) {
  if (engine == nullptr || request == nullptr || done == nullptr) return GH_ERR_INVALID_ARGUMENT;
  if (request->header_count > 0 && request->headers == nullptr) return GH_ERR_INVALID_ARGUMENT;
  bool closed = false;
  {
    std::lock_guard<std::mutex> lock(engine->registry->mutex);
    closed = engine->registry->shut_down;
  }
  if (closed) {
    // Answered at once, outside the lock (the host's callback may call back into the engine).
    gh::answer_error(done, host_data, 503, "The authentication layer is shutting down.");
    return GH_ERR_SHUT_DOWN;
  }
  gh_pending* pending = copy_request(*request);
  if (pending == nullptr) return GH_ERR_OUT_OF_MEMORY;
  pending->registry = engine->registry;
  pending->done = done;
  pending->host_data = host_data;
  {
    std::lock_guard<std::mutex> lock(engine->registry->mutex);
    closed = engine->registry->shut_down;
    if (!closed) engine->registry->pending.insert(pending);
  }
  if (closed) {
    // Shut down while copying: never registered, so only the policy's reference exists.
    pending->references = 1;
    gh_pending_fail(pending, 503, "The authentication layer is shutting down.");
    gh_pending_release(pending);
    return GH_ERR_SHUT_DOWN;
  }
  engine->policy(engine->policy_data, pending);
  return GH_OK;
}

const gh_request_view* gh_pending_request(const gh_pending* pending) {
  return pending == nullptr ? nullptr : &pending->request;
}

gh_status gh_pending_complete(gh_pending* pending, const gh_decision* decision) {
  if (pending == nullptr || decision == nullptr) return GH_ERR_INVALID_ARGUMENT;
  if (pending->completed.exchange(true)) return GH_ERR_ALREADY_COMPLETED;
  bool registered = false;
  {
    std::lock_guard<std::mutex> lock(pending->registry->mutex);
    registered = pending->registry->pending.erase(pending) > 0;
  }
  pending->done(pending->host_data, decision);
  if (registered) gh_pending_release(pending);  // the registry's reference
  return GH_OK;
}

gh_status gh_pending_fail(gh_pending* pending, int status, const char* message) {
  if (pending == nullptr || status < 100 || status > 599) return GH_ERR_INVALID_ARGUMENT;
  try {
    const gh::ErrorResponse response(status, message);
    return gh_pending_complete(pending, response.decision());
  } catch (const std::bad_alloc&) {
    return GH_ERR_OUT_OF_MEMORY;
  }
}

void gh_pending_retain(gh_pending* pending) {
  if (pending != nullptr) pending->references.fetch_add(1, std::memory_order_relaxed);
}

void gh_pending_release(gh_pending* pending) {
  if (pending != nullptr && pending->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete pending;
}

size_t gh_engine_pending_count(const gh_engine* engine) {
  if (engine == nullptr) return 0;
  std::lock_guard<std::mutex> lock(engine->registry->mutex);
  return engine->registry->pending.size();
}

void gh_engine_shutdown(gh_engine* engine) {
  if (engine == nullptr) return;
  std::vector<gh_pending*> left;
  {
    std::lock_guard<std::mutex> lock(engine->registry->mutex);
    engine->registry->shut_down = true;
    left.assign(engine->registry->pending.begin(), engine->registry->pending.end());
    // Hold each one across the unlock: the policy may complete and release it meanwhile.
    for (gh_pending* pending : left) gh_pending_retain(pending);
  }
  for (gh_pending* pending : left) {
    gh_pending_fail(pending, 503, "The authentication layer is shutting down.");
    gh_pending_release(pending);
  }
}

void gh_engine_free(gh_engine* engine) {
  if (engine == nullptr) return;
  gh_engine_shutdown(engine);
  delete engine;
}

}  // extern "C"
