#include "linked_binding.h"

#include <atomic>

#include "host_link.h"

namespace gh_iis {

namespace {

// A napi_addon_register_func has no user data: the process's one link and report live here.
std::atomic<const gh_host_link*> g_link{nullptr};
std::atomic<LinkedBindingReport> g_report{nullptr};

// report(message): a line for the module's log. Longer messages are cut (boot.cjs sends at most 2000 characters).
napi_value report_from_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 1) return nullptr;
  char text[2048];
  size_t length = 0;
  if (napi_get_value_string_utf8(env, argv[0], text, sizeof text, &length) != napi_ok) return nullptr;
  const LinkedBindingReport report = g_report.load();
  if (report != nullptr) report(std::string(text, length));
  return nullptr;
}

}  // namespace

void set_linked_binding_host(const gh_host_link* link, LinkedBindingReport report) {
  g_link.store(link);
  g_report.store(report);
}

napi_value init_linked_binding(napi_env env, napi_value exports) {
  napi_value link = host_link_external(env, g_link.load());
  if (link == nullptr || napi_set_named_property(env, exports, "link", link) != napi_ok) return nullptr;
  napi_value report = nullptr;
  if (napi_create_function(env, "report", NAPI_AUTO_LENGTH, &report_from_js, nullptr, &report) != napi_ok ||
      napi_set_named_property(env, exports, "report", report) != napi_ok) {
    return nullptr;
  }
  return exports;
}

}  // namespace gh_iis
