// Text checks for what ends up in a result file: JSON must be valid UTF-8.
#pragma once

#include <string>

namespace gbasim {

// Whether `text` is well-formed UTF-8 (no stray continuation bytes, no overlong or truncated
// sequences, nothing beyond U+10FFFF, no surrogates).
inline bool valid_utf8(const std::string& text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    size_t length = 0;
    unsigned lowest = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
      lowest = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      lowest = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      lowest = 0x10000;
    } else {
      return false;
    }
    if (i + length > n) return false;
    unsigned code = c & (0xFF >> (length + 1));
    for (size_t k = 1; k < length; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      code = (code << 6) | (s[i + k] & 0x3F);
    }
    if (code < lowest || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += length;
  }
  return true;
}

}  // namespace gbasim
