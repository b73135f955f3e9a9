// A policy's decision, read from JavaScript: { kind: "continue", remove?, set? } or
// { kind: "respond", status, headers?, body? } (src/native/interceptor.ts), copied into bytes
// the engine can complete a request with on any thread (completer.h).
#ifndef GATEHOUSE_ADDON_DECISION_FROM_JS_H
#define GATEHOUSE_ADDON_DECISION_FROM_JS_H

#include <napi.h>

#include "../core/gh_core.h"
#include "completer.h"

namespace gh {

/** The decision copied out of JavaScript (or a 500 if it is not one), ready to complete on any thread. */
Completion completion_from_js(gh_pending* pending, const Napi::Value& result);

}  // namespace gh

#endif
