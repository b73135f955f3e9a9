// JSON string literals as JavaScript's JSON.stringify writes them, for every
// piece of JSON native code builds (the principal, its own error bodies), so
// they come out byte for byte as the TypeScript side would write them.
#ifndef GATEHOUSE_JSON_STRING_H
#define GATEHOUSE_JSON_STRING_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace gh {

/**
 * Appends `text` as a quoted JSON string: the two-character escapes where they
 * exist, \u00xx (lower-case hex) for other control characters, everything else
 * (non-ASCII included) as is.
 */
inline void append_json_string(std::string& out, const uint8_t* text, size_t length) {
  static const char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (size_t i = 0; i < length; ++i) {
    const char c = static_cast<char>(text[i]);
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

}  // namespace gh

#endif
