#include "host_link.h"

namespace gh_iis {

napi_value host_link_external(napi_env env, const gh_host_link* link) {
  static const napi_type_tag kTag = {GH_HOST_LINK_TAG_LOWER, GH_HOST_LINK_TAG_UPPER};
  napi_value external = nullptr;
  // The link is the host's, never freed by the garbage collector: no finalizer.
  if (napi_create_external(env, const_cast<gh_host_link*>(link), nullptr, nullptr, &external) != napi_ok ||
      napi_type_tag_object(env, external, &kTag) != napi_ok) {
    napi_throw_error(env, nullptr, "could not create the gatehouse host link");
    return nullptr;
  }
  return external;
}

}  // namespace gh_iis
