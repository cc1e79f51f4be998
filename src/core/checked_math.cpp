#include "footprint/core/checked_math.hpp"

#include <string>

namespace footprint::detail {

void throw_overflow(std::string_view what, std::string_view op, std::string a, std::string b,
                    std::string_view type) {
  std::string msg(what);
  msg += ": ";
  msg += a;
  msg += ' ';
  msg += op;
  msg += ' ';
  msg += b;
  msg += " overflows ";
  msg += type;
  throw SizeOverflow(msg);
}

}  // namespace footprint::detail
