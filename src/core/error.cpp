#include "footprint/core/error.hpp"

namespace footprint {

std::string in_quotes(std::string_view text) {
  return "'" + printable(text) + "'";
}

std::string printable(std::string_view text) {
  constexpr size_t kMax = 80;
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '\\') {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kMax) out += "...";
  return out;
}

}  // namespace footprint
