// JavaScript values built from JSON text with one call of JSON.parse, for
// results with many short strings (a request's headers): set one by one,
// every string and every property costs a Node-API call or more, about 2.4 µs
// per header pair. (For few, long strings it gains nothing: JSON.parse scans
// every character.) The text is handed over as latin1 (one
// character per byte), and JSON escapes only quote, backslash and control
// characters, so every string comes out with the bytes as its characters,
// exactly as js_string would have made it.
#ifndef GATEHOUSE_JSON_TEXT_H
#define GATEHOUSE_JSON_TEXT_H

#include <napi.h>

#include <string>

#include "js_bytes.h"

namespace gh {

/** Per Node environment (main thread, each worker): the JSON.parse found at load. */
struct AddonData {
  Napi::FunctionReference json_parse;
};

/** At module load, before anything below is used in this environment. */
inline void init_json_text(Napi::Env env) {
  auto* data = new AddonData();
  data->json_parse = Napi::Persistent(env.Global().Get("JSON").As<Napi::Object>().Get("parse").As<Napi::Function>());
  env.SetInstanceData(data);
}

/** `json`: JSON text whose strings were written by append_json_bytes (json_string.h). */
inline Napi::Value from_json_text(Napi::Env env, const std::string& json) {
  return env.GetInstanceData<AddonData>()->json_parse.Call({js_string(env, json)});
}

}  // namespace gh

#endif
