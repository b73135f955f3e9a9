#include "node_options.h"

#include <algorithm>
#include <cstdlib>

namespace gh_iis {

namespace {

// The options an embedded Node may take: memory and V8 limits, and how warnings, deprecations,
// rejections, DNS and TLS behave. Names as Node spells them (V8's underscores are accepted too).
constexpr const char* kAllowed[] = {
    "--max-old-space-size",   "--max-semi-space-size", "--stack-size",           "--stack-trace-limit",
    "--trace-warnings",       "--no-warnings",         "--trace-deprecation",    "--no-deprecation",
    "--trace-uncaught",       "--enable-source-maps",  "--unhandled-rejections", "--dns-result-order",
    "--use-openssl-ca",       "--use-bundled-ca",      "--tls-min-v1.2",         "--tls-min-v1.3",
    "--max-http-header-size", "--disable-proto",       "--zero-fill-buffers",    "--frozen-intrinsics",
};

std::string allowed_list() {
  std::string out;
  for (const char* name : kAllowed) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

}  // namespace

NodeOptions parse_node_options(const std::string& text) {
  NodeOptions out;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find(' ', start), text.size());
    const std::string option = text.substr(start, end - start);
    start = end + 1;
    if (option.empty()) continue;  // several spaces in a row
    const std::size_t equals = option.find('=');
    std::string name = option.substr(0, equals);
    if (name.size() > 2 && name.compare(0, 2, "--") == 0) std::replace(name.begin() + 2, name.end(), '_', '-');
    if (std::find(std::begin(kAllowed), std::end(kAllowed), name) == std::end(kAllowed)) {
      out.refused.push_back(option.substr(0, 200) +
                            " is not an option the embedded Node takes (it may: " + allowed_list() + "); ignored");
      continue;
    }
    if (name == "--stack-size") {
      const std::string value = equals == std::string::npos ? "" : option.substr(equals + 1);
      char* rest = nullptr;
      const unsigned long kb = std::strtoul(value.c_str(), &rest, 10);
      if (value.empty() || *rest != '\0' || kb == 0 || kb > kMaxV8StackKb) {
        out.refused.push_back(option + " is more than the Node thread's stack allows (at most --stack-size=" +
                              std::to_string(kMaxV8StackKb) + " on its " +
                              std::to_string(kNodeThreadStackBytes / (1024 * 1024)) + " MB); ignored");
        continue;
      }
    }
    out.accepted.push_back(option);
  }
  return out;
}

}  // namespace gh_iis
