// A request view (gh_request_view) as JavaScript receives it: JSON text parsed by JSON.parse in
// one call (json_text.h), built property by property, each header cost about six Node-API
// calls. A batch is one JSON array of such objects, one parse. The body, when the host handed
// one over, goes on the parsed object as a Buffer.
#ifndef GATEHOUSE_ADDON_REQUEST_JSON_H
#define GATEHOUSE_ADDON_REQUEST_JSON_H

#include <napi.h>

#include <string>

#include "../core/gh_core.h"

namespace gh {

/** Appends the request as a JSON object: method, scheme, host, path, query, remoteAddress, headers. */
void append_request_json(std::string& json, const gh_request_view& r);

/** Sets `body` on the parsed object, when the request has one. */
void attach_body(Napi::Env env, Napi::Object object, const gh_request_view& r);

/** One request as a JavaScript object, with its body. */
Napi::Object request_to_js(Napi::Env env, const gh_request_view& r);

}  // namespace gh

#endif
