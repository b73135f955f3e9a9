// A request view (gh_request_view) as JavaScript receives it: JSON text parsed by JSON.parse in
// one call (json_text.h); built property by property, each header would cost about six Node-API
// calls. A batch is one JSON array of such objects, one parse. The body, when the host handed
// one over, goes on the parsed object as a Buffer.
#ifndef GATEHOUSE_ADDON_REQUEST_JSON_H
#define GATEHOUSE_ADDON_REQUEST_JSON_H

#include <napi.h>

#include <vector>

#include "../core/gh_core.h"

namespace gh {

/** One request as a JavaScript object, with its body. */
Napi::Object request_to_js(Napi::Env env, const gh_request_view& r);

/** A batch of waiting requests as one JavaScript array, in order: one JSON text, one parse. */
Napi::Array requests_to_js(Napi::Env env, const std::vector<gh_pending*>& batch);

}  // namespace gh

#endif
