// Between JavaScript strings and byte ranges, for the addon and the native
// test host. Request and header bytes travel as latin1 strings (one character
// per byte), as Node's HTTP layer has them and as normalizeHeaders returns
// them: no re-encoding on either side.
#ifndef GATEHOUSE_JS_BYTES_H
#define GATEHOUSE_JS_BYTES_H

#include <napi.h>

#include <string>

#include "../core/bytes.h"
#include "../core/gh_core.h"

namespace gh {

inline Napi::String js_string(Napi::Env env, gh_bytes b) {
  napi_value out;
  NAPI_THROW_IF_FAILED(
      env,
      napi_create_string_latin1(
          env, reinterpret_cast<const char*>(b.ptr == nullptr ? reinterpret_cast<const uint8_t*>("") : b.ptr), b.len,
          &out),
      Napi::String());
  return Napi::String(env, out);
}

inline Napi::String js_string(Napi::Env env, const std::string& text) { return js_string(env, bytes_of(text)); }

inline std::string bytes_from_js(const Napi::Value& value) {
  Napi::Env env = value.Env();
  napi_value text = value.ToString();
  size_t length = 0;
  NAPI_THROW_IF_FAILED(env, napi_get_value_string_latin1(env, text, nullptr, 0, &length), std::string());
  std::string out(length, '\0');
  NAPI_THROW_IF_FAILED(env, napi_get_value_string_latin1(env, text, out.data(), length + 1, &length), std::string());
  return out;
}

}  // namespace gh

#endif
