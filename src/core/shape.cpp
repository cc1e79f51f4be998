#include "footprint/core/shape.hpp"

#include <algorithm>

#include "footprint/core/checked_math.hpp"

namespace footprint {

struct Dim::Node {
  enum class Op : uint8_t { constant, symbol, bounded, add, mul, floor_div, ceil_div, max, min };
  Op op;
  int64_t value = 0;
  std::string name;
  std::shared_ptr<const Node> a;
  std::shared_ptr<const Node> b;
};

namespace {

using Node = Dim::Node;
using Op = Dim::Node::Op;
using NodePtr = std::shared_ptr<const Node>;

NodePtr constant(int64_t v) {
  return std::make_shared<const Node>(Node{Op::constant, v, {}, {}, {}});
}

// An extent that overflows is an error, not an unknown dim: an unknown dim is later reported as
// "size unknown", which hides that the model asks for more than 2^63 elements.
constexpr std::string_view kDimArithmetic = "extent arithmetic";

bool is_const(const NodePtr& n, int64_t* v = nullptr) {
  if (n == nullptr || n->op != Op::constant) return false;
  if (v != nullptr) *v = n->value;
  return true;
}

int64_t floor_div_int(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Builds a simplified node: constants fold, identities vanish, constants gather on the right.
NodePtr make(Op op, NodePtr a, NodePtr b) {
  if (a == nullptr || b == nullptr) return nullptr;
  int64_t x = 0, y = 0;
  const bool ca = is_const(a, &x);
  const bool cb = is_const(b, &y);
  int64_t r = 0;
  switch (op) {
    case Op::add:
      if (ca && cb) return constant(add_or_throw(x, y, kDimArithmetic));
      if (ca) return make(Op::add, b, a);
      if (cb && y == 0) return a;
      if (cb && a->op == Op::add && is_const(a->b, &x)) {
        return make(Op::add, a->a, constant(add_or_throw(x, y, kDimArithmetic)));
      }
      // (x + c) + y = (x + y) + c: the constant term stays last.
      if (!cb && a->op == Op::add && is_const(a->b))
        return make(Op::add, make(Op::add, a->a, b), a->b);
      break;
    case Op::mul:
      if (ca && cb) return constant(mul_or_throw(x, y, kDimArithmetic));
      if (ca) return make(Op::mul, b, a);
      if (cb && y == 1) return a;
      if (cb && y == 0) return constant(0);
      if (cb && a->op == Op::mul && is_const(a->b, &x)) {
        return make(Op::mul, a->a, constant(mul_or_throw(x, y, kDimArithmetic)));
      }
      // (x * c) * y = (x * y) * c: the coefficient stays last.
      if (!cb && a->op == Op::mul && is_const(a->b))
        return make(Op::mul, make(Op::mul, a->a, b), a->b);
      break;
    case Op::floor_div:
    case Op::ceil_div:
      if (cb && y == 0) return nullptr;
      if (cb && y == 1) return a;
      if (ca && cb) {
        return constant(op == Op::floor_div ? floor_div_int(x, y) : -floor_div_int(-x, y));
      }
      // floor(floor(n/x)/y) = floor(n/(x*y)) for positive x, y (ceil likewise): strided layers
      // in a row read as one division.
      if (cb && y > 0 && a->op == op && is_const(a->b, &x) && x > 0 &&
          !__builtin_mul_overflow(x, y, &r)) {
        return make(op, a->a, constant(r));
      }
      break;
    case Op::max:
    case Op::min:
      if (ca && cb) return constant(op == Op::max ? std::max(x, y) : std::min(x, y));
      break;
    default:
      break;
  }
  return std::make_shared<const Node>(Node{op, 0, {}, std::move(a), std::move(b)});
}

// nullopt for an unbound symbol or an unknown dim; SizeOverflow when the bound expression
// overflows int64.
std::optional<int64_t> eval(const NodePtr& n, const DimBindings& bindings) {
  if (n == nullptr) return std::nullopt;
  switch (n->op) {
    case Op::constant:
      return n->value;
    case Op::symbol: {
      auto it = bindings.find(n->name);
      if (it == bindings.end()) return std::nullopt;
      return it->second;
    }
    case Op::bounded: {
      // Known once a run has bound its origin (see Dim::origin); negative: not reported yet.
      auto it = bindings.find(std::string_view(n->name));
      if (it == bindings.end() || it->second < 0) return std::nullopt;
      return it->second;
    }
    default:
      break;
  }
  const auto a = eval(n->a, bindings);
  const auto b = eval(n->b, bindings);
  if (!a || !b) return std::nullopt;
  switch (n->op) {
    case Op::add:
      return add_or_throw(*a, *b, kDimArithmetic);
    case Op::mul:
      return mul_or_throw(*a, *b, kDimArithmetic);
    case Op::floor_div:
      if (*b == 0) return std::nullopt;
      return floor_div_int(*a, *b);
    case Op::ceil_div:
      if (*b == 0) return std::nullopt;
      return -floor_div_int(-*a, *b);
    case Op::max:
      return std::max(*a, *b);
    case Op::min:
      return std::min(*a, *b);
    default:
      return std::nullopt;
  }
}

// `identity` renders a data-dependent extent with its origin, so that expressions compare equal
// only when they mention the same extents; without it the text is what users read.
std::string text(const NodePtr& n, bool identity = false) {
  if (n == nullptr) return "?";
  auto text = [identity](const NodePtr& c) { return ::footprint::text(c, identity); };
  auto wrapped = [&text](const NodePtr& c) {
    const std::string t = text(c);
    return c->op == Op::add || c->op == Op::bounded ? "(" + t + ")" : t;
  };
  switch (n->op) {
    case Op::constant:
      return std::to_string(n->value);
    case Op::symbol:
      return n->name;
    case Op::bounded:
      return identity ? "{" + n->name + "<=" + text(n->a) + "}" : "<=" + wrapped(n->a);
    case Op::add: {
      int64_t c = 0;
      if (is_const(n->b, &c) && c < 0) return text(n->a) + "-" + std::to_string(-c);
      if (n->b->op == Op::mul && is_const(n->b->b, &c) && c == -1) {
        return text(n->a) + "-" + wrapped(n->b->a);
      }
      return text(n->a) + "+" + text(n->b);
    }
    case Op::mul:
      return wrapped(n->a) + "*" + wrapped(n->b);
    case Op::floor_div:
      return "floor(" + wrapped(n->a) + "/" + wrapped(n->b) + ")";
    case Op::ceil_div:
      return "ceil(" + wrapped(n->a) + "/" + wrapped(n->b) + ")";
    case Op::max:
      return "max(" + text(n->a) + "," + text(n->b) + ")";
    case Op::min:
      return "min(" + text(n->a) + "," + text(n->b) + ")";
  }
  return "?";
}

void symbols(const NodePtr& n, std::vector<std::string>& out) {
  if (n == nullptr) return;
  if (n->op == Op::symbol) {
    if (std::find(out.begin(), out.end(), n->name) == out.end()) out.push_back(n->name);
    return;
  }
  symbols(n->a, out);
  symbols(n->b, out);
}

// The factors of a product: a constant coefficient and the non-constant operands.
bool factors(const NodePtr& n, int64_t& coeff, std::vector<NodePtr>& out) {
  int64_t v = 0;
  if (is_const(n, &v)) return !__builtin_mul_overflow(coeff, v, &coeff);
  if (n->op == Op::mul) return factors(n->a, coeff, out) && factors(n->b, coeff, out);
  out.push_back(n);
  return true;
}

// a / b by cancelling b's factors from a's; nullptr when b's factors are not all in a.
NodePtr cancel(const NodePtr& a, const NodePtr& b) {
  int64_t ca = 1, cb = 1;
  std::vector<NodePtr> fa, fb;
  if (!factors(a, ca, fa) || !factors(b, cb, fb) || cb == 0 || ca % cb != 0) return nullptr;
  for (const NodePtr& f : fb) {
    const std::string t = text(f, true);
    auto it =
        std::find_if(fa.begin(), fa.end(), [&](const NodePtr& g) { return text(g, true) == t; });
    if (it == fa.end()) return nullptr;
    fa.erase(it);
  }
  NodePtr out = constant(ca / cb);
  for (const NodePtr& f : fa) out = make(Op::mul, out, f);
  return out;
}

bool mentions_bounded(const NodePtr& n) {
  if (n == nullptr) return false;
  return n->op == Op::bounded || mentions_bounded(n->a) || mentions_bounded(n->b);
}

bool nonnegative(const NodePtr& n) {
  if (n == nullptr) return false;
  switch (n->op) {
    case Op::constant:
      return n->value >= 0;
    case Op::symbol:
    case Op::bounded:
      return true;
    case Op::max:
      return nonnegative(n->a) || nonnegative(n->b);
    default:
      return nonnegative(n->a) && nonnegative(n->b);
  }
}

void origins(const NodePtr& n, std::vector<std::string>& out) {
  if (n == nullptr) return;
  if (n->op == Op::bounded) {
    // The op that bounds this extent; what bounds its bound is that op's concern.
    if (std::find(out.begin(), out.end(), n->name) == out.end()) out.push_back(n->name);
    return;
  }
  origins(n->a, out);
  origins(n->b, out);
}

using Range = std::pair<int64_t, int64_t>;

// The smallest and largest of f over the corners of two ranges: right for the operations here,
// each monotonic in either argument while the other is held (a divisor's range excludes 0).
template <typename F>
Range corners(const Range& a, const Range& b, F f) {
  const int64_t v[4] = {f(a.first, b.first), f(a.first, b.second), f(a.second, b.first),
                        f(a.second, b.second)};
  return {*std::min_element(v, v + 4), *std::max_element(v, v + 4)};
}

// Interval evaluation: data-dependent extents range over [0, bound].
std::optional<Range> range_of(const NodePtr& n, const DimBindings& bindings) {
  if (n == nullptr) return std::nullopt;
  switch (n->op) {
    case Op::constant:
      return Range{n->value, n->value};
    case Op::symbol: {
      const auto v = eval(n, bindings);
      if (!v) return std::nullopt;
      return Range{*v, *v};
    }
    case Op::bounded: {
      if (const auto v = eval(n, bindings)) return Range{*v, *v};
      const auto upper = range_of(n->a, bindings);
      if (!upper) return std::nullopt;
      return Range{0, std::max<int64_t>(0, upper->second)};
    }
    default:
      break;
  }
  const auto a = range_of(n->a, bindings);
  const auto b = range_of(n->b, bindings);
  if (!a || !b) return std::nullopt;
  switch (n->op) {
    case Op::add:
      return Range{add_or_throw(a->first, b->first, kDimArithmetic),
                   add_or_throw(a->second, b->second, kDimArithmetic)};
    case Op::mul:
      return corners(*a, *b,
                     [](int64_t x, int64_t y) { return mul_or_throw(x, y, kDimArithmetic); });
    case Op::floor_div:
    case Op::ceil_div: {
      if (b->first <= 0 && b->second >= 0) return std::nullopt;
      const bool floor = n->op == Op::floor_div;
      return corners(*a, *b, [floor](int64_t x, int64_t y) {
        return floor ? floor_div_int(x, y) : -floor_div_int(-x, y);
      });
    }
    case Op::max:
      return Range{std::max(a->first, b->first), std::max(a->second, b->second)};
    case Op::min:
      return Range{std::min(a->first, b->first), std::min(a->second, b->second)};
    default:
      return std::nullopt;
  }
}

}  // namespace

Dim Dim::bounded(const Dim& upper, std::string_view origin) {
  if (upper.node_ == nullptr) return Dim();
  // At most another data-dependent extent: at most what bounds that one.
  if (upper.node_->op == Op::bounded) return bounded(Dim(upper.node_->a), origin);
  return Dim(
      std::make_shared<const Node>(Node{Op::bounded, 0, std::string(origin), upper.node_, {}}));
}

bool Dim::is_data_dependent() const {
  return mentions_bounded(node_);
}

bool Dim::is_nonnegative() const {
  return nonnegative(node_);
}

std::optional<std::pair<int64_t, int64_t>> Dim::range(const DimBindings& bindings) const {
  return range_of(node_, bindings);
}

void Dim::collect_bound_origins(std::vector<std::string>& out) const {
  origins(node_, out);
}

std::optional<std::string_view> Dim::origin() const {
  if (node_ == nullptr || node_->op != Op::bounded) return std::nullopt;
  return std::string_view(node_->name);
}

Dim Dim::known(int64_t v) {
  return Dim(constant(v));
}

Dim Dim::named(std::string_view name) {
  return Dim(std::make_shared<const Node>(Node{Op::symbol, 0, std::string(name), {}, {}}));
}

bool Dim::is_known() const {
  return is_const(node_);
}

std::optional<int64_t> Dim::value() const {
  int64_t v = 0;
  if (is_const(node_, &v)) return v;
  return std::nullopt;
}

std::optional<int64_t> Dim::evaluate(const DimBindings& bindings) const {
  return eval(node_, bindings);
}

void Dim::collect_symbols(std::vector<std::string>& out) const {
  symbols(node_, out);
}

std::string Dim::to_string() const {
  return text(node_);
}

Dim operator+(const Dim& a, const Dim& b) {
  return Dim(make(Op::add, a.node_, b.node_));
}
Dim operator-(const Dim& a, const Dim& b) {
  return Dim(make(Op::add, a.node_, make(Op::mul, b.node_, constant(-1))));
}
Dim operator*(const Dim& a, const Dim& b) {
  return Dim(make(Op::mul, a.node_, b.node_));
}
Dim floor_div(const Dim& a, const Dim& b) {
  return Dim(make(Op::floor_div, a.node_, b.node_));
}
Dim ceil_div(const Dim& a, const Dim& b) {
  return Dim(make(Op::ceil_div, a.node_, b.node_));
}
Dim exact_div(const Dim& a, const Dim& b) {
  if (a.node_ == nullptr || b.node_ == nullptr) return Dim();
  if (NodePtr q = cancel(a.node_, b.node_)) return Dim(q);
  return floor_div(a, b);
}
Dim max(const Dim& a, const Dim& b) {
  return Dim(make(Op::max, a.node_, b.node_));
}
Dim min(const Dim& a, const Dim& b) {
  return Dim(make(Op::min, a.node_, b.node_));
}

bool operator==(const Dim& a, const Dim& b) {
  if (a.node_ == nullptr || b.node_ == nullptr) return false;
  return a.node_ == b.node_ || text(a.node_, true) == text(b.node_, true);
}

Shape Shape::of(const std::vector<int64_t>& extents) {
  Shape s;
  s.ranked = true;
  s.dims.reserve(extents.size());
  for (int64_t e : extents) s.dims.push_back(Dim::known(e));
  return s;
}

bool Shape::is_static() const {
  if (!ranked) return false;
  return std::all_of(dims.begin(), dims.end(), [](const Dim& d) { return d.is_known(); });
}

std::optional<std::vector<int64_t>> Shape::extents() const {
  if (!ranked) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (const Dim& d : dims) {
    const auto v = d.value();
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::optional<uint64_t> Shape::numel() const {
  return numel(DimBindings{});
}

std::optional<uint64_t> Shape::numel(const DimBindings& bindings) const {
  if (!ranked) return std::nullopt;
  uint64_t n = 1;
  for (const Dim& d : dims) {
    const auto v = d.evaluate(bindings);
    if (!v || *v < 0) return std::nullopt;
    const auto product = checked_mul(n, static_cast<uint64_t>(*v));
    if (!product) return std::nullopt;
    n = *product;
  }
  return n;
}

Dim Shape::numel_expr() const {
  if (!ranked) return Dim::unknown();
  Dim n = Dim::known(1);
  for (const Dim& d : dims) n = n * d;
  return n;
}

std::string Shape::to_string() const {
  if (!ranked) return "?";
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) out += ',';
    out += dims[i].to_string();
  }
  out += ']';
  return out;
}

std::string extents_text(std::span<const int64_t> extents) {
  std::string s = "[";
  for (size_t i = 0; i < extents.size(); ++i) s += (i ? "," : "") + std::to_string(extents[i]);
  return s + "]";
}

std::optional<uint64_t> checked_numel(const int64_t* dims, size_t rank) {
  uint64_t n = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) return std::nullopt;
    const auto product = checked_mul(n, static_cast<uint64_t>(dims[i]));
    if (!product) return std::nullopt;
    n = *product;
  }
  return n;
}

}  // namespace footprint
