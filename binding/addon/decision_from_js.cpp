#include "decision_from_js.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../core/bytes.h"
#include "js_bytes.h"

namespace gh {
namespace {

/** A decision read from JavaScript, owning its bytes (the other way round from gh::OwnedDecision, a host's copy of a
 * decision). */
struct JsDecision final : DecisionOwner {
  gh_decision decision{};
  std::vector<std::string> text;
  std::vector<gh_bytes> remove;
  std::vector<gh_header> headers;
  std::string body;
};

std::unique_ptr<JsDecision> decision_from(const Napi::Value& value) {
  Napi::Env env = value.Env();
  if (!value.IsObject()) throw Napi::TypeError::New(env, "the interceptor must return a decision object");
  Napi::Object object = value.As<Napi::Object>();
  auto owned = std::make_unique<JsDecision>();
  const std::string kind = object.Get("kind").ToString().Utf8Value();
  auto pairs = [&](const char* key) {
    std::vector<std::pair<size_t, size_t>> at;
    Napi::Value list = object.Get(key);
    if (list.IsUndefined()) return at;
    if (!list.IsArray()) throw Napi::TypeError::New(env, std::string(key) + " must be an array of [name, value]");
    Napi::Array array = list.As<Napi::Array>();
    for (uint32_t i = 0; i < array.Length(); ++i) {
      Napi::Value pair = array.Get(i);
      if (!pair.IsArray() || pair.As<Napi::Array>().Length() != 2)
        throw Napi::TypeError::New(env, std::string(key) + " must be an array of [name, value]");
      owned->text.push_back(bytes_from_js(pair.As<Napi::Array>().Get(0u)));
      owned->text.push_back(bytes_from_js(pair.As<Napi::Array>().Get(1u)));
      at.emplace_back(owned->text.size() - 2, owned->text.size() - 1);
    }
    return at;
  };
  if (kind == "continue") {
    std::vector<size_t> removed;
    Napi::Value remove = object.Get("remove");
    if (!remove.IsUndefined()) {
      if (!remove.IsArray()) throw Napi::TypeError::New(env, "remove must be an array of names");
      Napi::Array array = remove.As<Napi::Array>();
      for (uint32_t i = 0; i < array.Length(); ++i) {
        owned->text.push_back(bytes_from_js(array.Get(i)));
        removed.push_back(owned->text.size() - 1);
      }
    }
    auto set = pairs("set");
    owned->text.shrink_to_fit();  // no more growth: views can be taken now
    for (size_t i : removed) owned->remove.push_back(bytes_of(owned->text[i]));
    for (auto [n, v] : set) owned->headers.push_back(gh_header{bytes_of(owned->text[n]), bytes_of(owned->text[v])});
    owned->decision.kind = GH_DECISION_CONTINUE;
    owned->decision.remove_headers = owned->remove.data();
    owned->decision.remove_count = owned->remove.size();
    owned->decision.set_headers = owned->headers.data();
    owned->decision.set_count = owned->headers.size();
    return owned;
  }
  if (kind == "respond") {
    const int status = object.Get("status").ToNumber().Int32Value();
    if (status < 100 || status > 599) throw Napi::RangeError::New(env, "status must be 100-599");
    auto headers = pairs("headers");
    Napi::Value body = object.Get("body");
    if (body.IsTypedArray()) {
      Napi::Uint8Array array = body.As<Napi::Uint8Array>();
      owned->body.assign(reinterpret_cast<const char*>(array.Data()), array.ByteLength());
    } else if (body.IsString()) {
      owned->body = body.As<Napi::String>().Utf8Value();
    }
    for (auto [n, v] : headers) owned->headers.push_back(gh_header{bytes_of(owned->text[n]), bytes_of(owned->text[v])});
    owned->decision.kind = GH_DECISION_RESPOND;
    owned->decision.status = status;
    owned->decision.response_headers = owned->headers.data();
    owned->decision.response_header_count = owned->headers.size();
    owned->decision.body = bytes_of(owned->body);
    return owned;
  }
  throw Napi::TypeError::New(env, "decision.kind must be \"continue\" or \"respond\"");
}

}  // namespace

Completion completion_from_js(gh_pending* pending, const Napi::Value& result) {
  Completion c;
  c.pending = pending;
  try {
    auto decision = decision_from(result);
    c.decision = &decision->decision;
    c.owner = std::move(decision);
  } catch (const Napi::Error&) {
    c.failure = "The authentication layer returned an invalid decision.";
  }
  return c;
}

}  // namespace gh
