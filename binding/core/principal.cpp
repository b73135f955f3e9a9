#include "principal.h"

#include "json_string.h"

namespace gh {
namespace {

void append_json_string(std::string& out, gh_bytes text) { gh::append_json_string(out, text.ptr, text.len); }

}  // namespace

std::string base64_encode(const std::string& bytes) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (static_cast<uint8_t>(bytes[i + 1]) << 8) | static_cast<uint8_t>(bytes[i + 2]);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(kAlphabet[(n >> 6) & 63]);
    out.push_back(kAlphabet[n & 63]);
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    if (rest == 2) n |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::string encode_principal(const gh_identity& identity) {
  std::string json = "{\"auth_typ\":";
  append_json_string(json, identity.auth_typ);
  json += ",\"claims\":[";
  for (size_t i = 0; i < identity.claim_count; ++i) {
    if (i > 0) json.push_back(',');
    json += "{\"typ\":";
    append_json_string(json, identity.claims[i].typ);
    json += ",\"val\":";
    append_json_string(json, identity.claims[i].val);
    json.push_back('}');
  }
  json += "],\"name_typ\":";
  append_json_string(json, identity.name_typ);
  json += ",\"role_typ\":";
  append_json_string(json, identity.role_typ);
  json.push_back('}');
  return base64_encode(json);
}

}  // namespace gh
