// JSON string literals as JavaScript's JSON.stringify writes them, for every
// piece of JSON native code builds (the principal, its own error bodies), so
// they come out byte for byte as the TypeScript side would write them.
#ifndef GATEHOUSE_JSON_STRING_H
#define GATEHOUSE_JSON_STRING_H

#include <cstddef>
#include <cstdint>
#include <string>

#include "gh_core.h"

namespace gh {

/**
 * Appends `text` as a quoted JSON string: the two-character escapes where they
 * exist, \u00xx (lower-case hex) for other control characters, everything else
 * (non-ASCII included) as is.
 */
inline void append_json_string(std::string& out, const uint8_t* text, size_t length) {
  static const char kHex[] = "0123456789abcdef";
  out.push_back('"');
  if (length == 0) {  // text may then be null
    out.push_back('"');
    return;
  }
  size_t run = 0;  // where the bytes not yet appended begin: they need no escape, and go in one append
  for (size_t i = 0; i < length; ++i) {
    const uint8_t c = text[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(reinterpret_cast<const char*>(text) + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xf]);
    }
  }
  out.append(reinterpret_cast<const char*>(text) + run, length - run);
  out.push_back('"');
}

/** A byte range (absent: empty) as a quoted JSON string. */
inline void append_json_bytes(std::string& out, gh_bytes text) { append_json_string(out, text.ptr, text.len); }

}  // namespace gh

#endif
