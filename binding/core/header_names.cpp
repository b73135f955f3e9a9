#include "header_names.h"

#include <cstring>

namespace gh {
namespace {

char upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

bool is_alnum(uint8_t c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

std::string canonical_header_name(gh_bytes name) {
  std::string out(reinterpret_cast<const char*>(name.ptr), name.len);
  for (char& c : out) {
    c = (c == '_' || c == '.') ? '-' : upper(c);
  }
  return out;
}

bool is_header_token(gh_bytes name) {
  if (name.len == 0) return false;
  static const char kSpecials[] = "!#$%&'*+-.^_`|~";
  for (size_t i = 0; i < name.len; ++i) {
    uint8_t c = name.ptr[i];
    if (!is_alnum(c) && (c == 0 || std::strchr(kSpecials, c) == nullptr)) return false;
  }
  return true;
}

namespace {

bool names_identity_under(const std::string& canonical, const std::string& prefix) {
  return starts_with(canonical, prefix + "CLIENT-PRINCIPAL") || starts_with(canonical, prefix + "TOKEN-");
}

// App Service's own names: an app written for App Service trusts them, whatever prefix
// gatehouse is configured with, so a client must never be able to send them.
const std::string kAppServicePrefix = "X-MS-";

}  // namespace

bool is_identity_alias(gh_bytes name, const std::string& canonical_prefix) {
  const std::string canonical = canonical_header_name(name);
  return names_identity_under(canonical, canonical_prefix) || names_identity_under(canonical, kAppServicePrefix);
}

std::string provider_header_part(gh_bytes provider) {
  std::string out(reinterpret_cast<const char*>(provider.ptr), provider.len);
  for (char& c : out) {
    c = is_alnum(static_cast<uint8_t>(c)) ? upper(c) : '-';
  }
  return out;
}

bool has_forbidden_value_character(gh_bytes value) {
  if (value.len == 0) return false;
  // Three memchr scans (vectorized by the C library) beat one byte-by-byte loop on token-sized values.
  return std::memchr(value.ptr, '\r', value.len) != nullptr || std::memchr(value.ptr, '\n', value.len) != nullptr ||
         std::memchr(value.ptr, '\0', value.len) != nullptr;
}

}  // namespace gh
