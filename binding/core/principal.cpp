#include "principal.h"

#include "json_string.h"

namespace gh {

std::string base64_encode(const std::string& bytes) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out((bytes.size() + 2) / 3 * 4, '=');
  char* o = out.data();  // written in place: the size is known, no per-character growth checks
  const auto* in = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) | in[i + 2];
    *o++ = kAlphabet[(n >> 18) & 63];
    *o++ = kAlphabet[(n >> 12) & 63];
    *o++ = kAlphabet[(n >> 6) & 63];
    *o++ = kAlphabet[n & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {  // the padding '=' is already there
    uint32_t n = uint32_t{in[i]} << 16;
    if (rest == 2) n |= uint32_t{in[i + 1]} << 8;
    *o++ = kAlphabet[(n >> 18) & 63];
    *o++ = kAlphabet[(n >> 12) & 63];
    if (rest == 2) *o = kAlphabet[(n >> 6) & 63];
  }
  return out;
}

std::string encode_principal(const gh_identity& identity) {
  std::string json = "{\"auth_typ\":";
  append_json_bytes(json, identity.auth_typ);
  json += ",\"claims\":[";
  for (size_t i = 0; i < identity.claim_count; ++i) {
    if (i > 0) json.push_back(',');
    json += "{\"typ\":";
    append_json_bytes(json, identity.claims[i].typ);
    json += ",\"val\":";
    append_json_bytes(json, identity.claims[i].val);
    json.push_back('}');
  }
  json += "],\"name_typ\":";
  append_json_bytes(json, identity.name_typ);
  json += ",\"role_typ\":";
  append_json_bytes(json, identity.role_typ);
  json.push_back('}');
  return base64_encode(json);
}

}  // namespace gh
