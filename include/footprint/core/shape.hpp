#pragma once
// Tensor shapes whose dims are known integers, named symbols ("N", "seq_len"), expressions of
// them ("N*3", "floor((H+2-3)/2)+1") built by shape inference, or data-dependent extents with an
// upper bound (NonZero's count is at most its input's element count: "<=N*4507").
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace footprint {

// Values given to named dims, e.g. from `--dim N=8`.
using DimBindings = std::map<std::string, int64_t, std::less<>>;

// An immutable symbolic extent. A default-constructed Dim is unknown: a dynamic extent nothing
// can be said about (arithmetic with it stays unknown).
class Dim {
 public:
  struct Node;

  Dim() = default;
  static Dim known(int64_t v);
  static Dim named(std::string_view name);
  static Dim unknown() { return Dim(); }
  // An extent known only when running (how many elements are non-zero, how many boxes survive
  // suppression), between 0 and `upper`. `origin` names what produces it (the node and output)
  // and tells it apart from every other such extent: two NonZero counts with the same bound are
  // not equal. Unknown when `upper` is.
  static Dim bounded(const Dim& upper, std::string_view origin);

  bool is_known() const;
  bool is_unknown() const { return node_ == nullptr; }
  std::optional<int64_t> value() const;
  // The value under `bindings`; nullopt when a symbol is unbound or the dim is unknown.
  std::optional<int64_t> evaluate(const DimBindings& bindings) const;
  // Every symbol the expression mentions (those of data-dependent extents' bounds included).
  void collect_symbols(std::vector<std::string>& out) const;
  // Whether the expression mentions a data-dependent extent (Dim::bounded).
  bool is_data_dependent() const;
  // Provably >= 0 whatever its symbols are (symbols and data-dependent extents are extents):
  // Equal(Shape(x), -1) in the exporter's Expand idiom is false without knowing x.
  bool is_nonnegative() const;
  // The smallest and largest value under `bindings`, data-dependent extents ranging over
  // [0, bound]; equal for an exact dim. nullopt when a symbol is unbound or a part is unknown;
  // SizeOverflow when the arithmetic overflows int64.
  std::optional<std::pair<int64_t, int64_t>> range(const DimBindings& bindings) const;
  // The origins of the data-dependent extents the expression mentions.
  void collect_bound_origins(std::vector<std::string>& out) const;
  // The origin of this extent when it is itself data-dependent (Dim::bounded), not an expression
  // of one. A run gives the extent its value by binding the origin like a named dim, once its op
  // has reported it: evaluate() and range() then read it (a negative value is not reported yet).
  std::optional<std::string_view> origin() const;
  // "N", "N*3", "floor((H+-1)/2)+1" style text; "?" for unknown; "<=N*64" for a data-dependent
  // extent.
  std::string to_string() const;

  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  friend Dim floor_div(const Dim& a, const Dim& b);
  friend Dim ceil_div(const Dim& a, const Dim& b);
  // a / b where a is known to be a multiple of b (an element count over some of its factors):
  // common factors cancel, so N*2048 / N is 2048. Falls back to floor(a/b) when they do not.
  friend Dim exact_div(const Dim& a, const Dim& b);
  friend Dim max(const Dim& a, const Dim& b);
  friend Dim min(const Dim& a, const Dim& b);
  // Structural equality of the simplified expressions (unknown equals nothing, itself included).
  friend bool operator==(const Dim& a, const Dim& b);

 private:
  explicit Dim(std::shared_ptr<const Node> n) : node_(std::move(n)) {}
  std::shared_ptr<const Node> node_;
};

struct Shape {
  // A shape of unknown rank has `ranked == false` and no dims.
  bool ranked = false;
  std::vector<Dim> dims;

  static Shape unranked() { return Shape{}; }
  static Shape of(const std::vector<int64_t>& extents);
  size_t rank() const { return dims.size(); }
  bool is_static() const;
  // Every dim's extent when the shape is static; nullopt otherwise.
  std::optional<std::vector<int64_t>> extents() const;
  // Number of elements when every dim is known; nullopt when not static or on overflow.
  std::optional<uint64_t> numel() const;
  // The element count as an expression (unknown when any dim is unknown or rank is unknown).
  Dim numel_expr() const;
  std::optional<uint64_t> numel(const DimBindings& bindings) const;
  // "[1,3,N,224]", "[]" for a scalar, "?" when unranked.
  std::string to_string() const;
  friend bool operator==(const Shape&, const Shape&) = default;
};

// "[1,3,224,224]": concrete extents as errors and reports print them.
std::string extents_text(std::span<const int64_t> extents);

// Product of extents with overflow detection; negative extents are rejected.
std::optional<uint64_t> checked_numel(const int64_t* dims, size_t rank);

}  // namespace footprint
