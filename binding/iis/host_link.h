// The host link as JavaScript sees it: a Node-API external holding a
// gh_host_link*, type-tagged so the addon can tell it from any other external.
// Plain Node-API (no node-addon-api, no IIS headers): the module's linked
// binding and the native test host both use it.
#ifndef GATEHOUSE_IIS_HOST_LINK_H
#define GATEHOUSE_IIS_HOST_LINK_H

#include <node_api.h>

#include "../core/gh_core.h"

namespace gh_iis {

/** A tagged external for link (which must outlive the Node environment). NULL on failure, with an exception pending. */
napi_value host_link_external(napi_env env, const gh_host_link* link);

}  // namespace gh_iis

#endif
