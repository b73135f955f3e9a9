// The `gatehouse_host` binding the IIS module gives its embedded Node (node::AddLinkedBinding,
// in node_runtime.cpp): `link`, the host link the in-server core attaches its interceptor to
// (src/inserver/host.ts), and `report(message)`, a line for the module's log (boot.cjs: why
// Node is ending). Plain Node-API, no IIS headers: the Windows leg's fake IIS
// (test/win32/fake-iis) hands this very binding to the Node environment it starts in place of
// the embedding.
#ifndef GATEHOUSE_IIS_LINKED_BINDING_H
#define GATEHOUSE_IIS_LINKED_BINDING_H

#include <node_api.h>

#include <string>

#include "../core/gh_core.h"

namespace gh_iis {

/** The name JavaScript asks for: process._linkedBinding('gatehouse_host'). */
constexpr char kLinkedBindingName[] = "gatehouse_host";

/** Where report(message) goes: the module's log. */
using LinkedBindingReport = void (*)(const std::string& message);

/**
 * What the binding hands out: one module instance per worker process, so one link and one
 * report per process. Set before the environment that asks for the binding starts.
 */
void set_linked_binding_host(const gh_host_link* link, LinkedBindingReport report);

/** The binding's napi_addon_register_func: fills exports with `link` and `report`. */
napi_value init_linked_binding(napi_env env, napi_value exports);

}  // namespace gh_iis

#endif
