#include "footprint/core/shape.hpp"

namespace footprint {

Shape Shape::of(std::vector<int64_t> extents) {
  Shape s;
  s.ranked = true;
  s.dims.reserve(extents.size());
  for (int64_t e : extents) s.dims.push_back(Dim::known(e));
  return s;
}

bool Shape::is_static() const {
  if (!ranked) return false;
  for (const Dim& d : dims) {
    if (!d.is_known()) return false;
  }
  return true;
}

std::optional<uint64_t> Shape::numel() const {
  if (!is_static()) return std::nullopt;
  uint64_t n = 1;
  for (const Dim& d : dims) {
    if (*d.value < 0) return std::nullopt;
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(*d.value), &n)) return std::nullopt;
  }
  return n;
}

std::string Shape::to_string() const {
  if (!ranked) return "?";
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) out += ',';
    const Dim& d = dims[i];
    if (d.value) {
      out += std::to_string(*d.value);
    } else if (!d.symbol.empty()) {
      out += d.symbol;
    } else {
      out += '?';
    }
  }
  out += ']';
  return out;
}

std::optional<uint64_t> checked_numel(const int64_t* dims, size_t rank) {
  uint64_t n = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) return std::nullopt;
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(dims[i]), &n)) return std::nullopt;
  }
  return n;
}

}  // namespace footprint
