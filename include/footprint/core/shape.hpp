#pragma once
// Tensor shapes whose dims are either known integers or named symbols ("N", "seq_len").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace footprint {

struct Dim {
  // Exactly one of these is meaningful: a known extent (>= 0), or a symbol; an unknown dim with
  // neither is an anonymous dynamic extent.
  std::optional<int64_t> value;
  std::string symbol;

  static Dim known(int64_t v) { return Dim{v, {}}; }
  static Dim named(std::string s) { return Dim{std::nullopt, std::move(s)}; }
  static Dim unknown() { return Dim{}; }
  bool is_known() const { return value.has_value(); }
  friend bool operator==(const Dim&, const Dim&) = default;
};

struct Shape {
  // A shape of unknown rank has `ranked == false` and no dims.
  bool ranked = false;
  std::vector<Dim> dims;

  static Shape unranked() { return Shape{}; }
  static Shape of(std::vector<int64_t> extents);
  bool is_static() const;
  // Number of elements when every dim is known; nullopt when not static or on overflow.
  std::optional<uint64_t> numel() const;
  // "[1,3,N,224]", "[]" for a scalar, "?" when unranked.
  std::string to_string() const;
  friend bool operator==(const Shape&, const Shape&) = default;
};

// Product of extents with overflow detection; negative extents are rejected.
std::optional<uint64_t> checked_numel(const int64_t* dims, size_t rank);

}  // namespace footprint
