#include "principal.h"

namespace gh {
namespace {

// JSON.stringify's string escaping: the two-character escapes where they
// exist, \u00xx (lower-case hex) for other control characters, everything
// else (non-ASCII included) as is.
void append_json_string(std::string& out, gh_bytes text) {
  static const char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (size_t i = 0; i < text.len; ++i) {
    const char c = static_cast<char>(text.ptr[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out.push_back(kHex[(c >> 4) & 0xf]);
          out.push_back(kHex[c & 0xf]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

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
