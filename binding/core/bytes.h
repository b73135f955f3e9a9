// Between owned strings and the ABI's borrowed byte ranges; used by the core
// and by the addon, so every side converts the same way.
#ifndef GATEHOUSE_BYTES_H
#define GATEHOUSE_BYTES_H

#include <string>

#include "gh_core.h"

namespace gh {

/** A borrowed view of a string's bytes (valid while the string lives unchanged). */
inline gh_bytes bytes_of(const std::string& text) {
  return gh_bytes{reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

/** A range's bytes as an owned string; an absent range (NULL) is empty. */
inline std::string text_of(gh_bytes bytes) {
  return bytes.ptr == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(bytes.ptr), bytes.len);
}

}  // namespace gh

#endif
