#include "request_json.h"

#include <cstring>
#include <string>
#include <utility>

#include "../core/json_string.h"
#include "json_text.h"

namespace gh {
namespace {

// The request as a JSON object: method, scheme, host, path, query, remoteAddress, headers.
void append_request_json(std::string& json, const gh_request_view& r) {
  const std::pair<const char*, gh_bytes> fields[] = {
      {"{\"method\":", r.method}, {",\"scheme\":", r.scheme}, {",\"host\":", r.host},
      {",\"path\":", r.path},     {",\"query\":", r.query},   {",\"remoteAddress\":", r.remote_address},
  };
  size_t size = 32;  // ",\"headers\":[" and the closing "]}"
  for (const auto& [key, value] : fields) size += std::strlen(key) + value.len + 2;
  for (size_t i = 0; i < r.header_count; ++i) size += r.headers[i].name.len + r.headers[i].value.len + 8;
  json.reserve(json.size() + size + size / 8);  // room for some escapes
  for (const auto& [key, value] : fields) {
    json += key;
    append_json_bytes(json, value);
  }
  json += ",\"headers\":[";
  for (size_t i = 0; i < r.header_count; ++i) {
    if (i > 0) json.push_back(',');
    json.push_back('[');
    append_json_bytes(json, r.headers[i].name);
    json.push_back(',');
    append_json_bytes(json, r.headers[i].value);
    json.push_back(']');
  }
  json += "]}";
}

void attach_body(Napi::Env env, Napi::Object object, const gh_request_view& r) {
  if (r.body.ptr != nullptr) object.Set("body", Napi::Buffer<uint8_t>::Copy(env, r.body.ptr, r.body.len));
}

}  // namespace

Napi::Object request_to_js(Napi::Env env, const gh_request_view& r) {
  std::string json;
  append_request_json(json, r);
  Napi::Object object = from_json_text(env, json).As<Napi::Object>();
  attach_body(env, object, r);
  return object;
}

Napi::Array requests_to_js(Napi::Env env, const std::vector<gh_pending*>& batch) {
  std::string json = "[";
  for (size_t i = 0; i < batch.size(); ++i) {
    if (i > 0) json.push_back(',');
    append_request_json(json, *gh_pending_request(batch[i]));
  }
  json.push_back(']');
  Napi::Array requests = from_json_text(env, json).As<Napi::Array>();
  for (size_t i = 0; i < batch.size(); ++i) {
    const gh_request_view& r = *gh_pending_request(batch[i]);
    if (r.body.ptr != nullptr) attach_body(env, requests.Get(static_cast<uint32_t>(i)).As<Napi::Object>(), r);
  }
  return requests;
}

}  // namespace gh
