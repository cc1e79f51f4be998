#include "footprint/analysis/dim_sweep.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include "footprint/analysis/timeline.hpp"
#include "footprint/core/error.hpp"

namespace footprint::analysis {
namespace {
// Products of two byte counts overflow 64 bits; GCC and clang have a 128-bit integer.
__extension__ typedef __int128 Wide;

Wide gcd(Wide a, Wide b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    const Wide r = a % b;
    a = b;
    b = r;
  }
  return a;
}

// An exact rational in 128 bits; any operation that would overflow leaves it invalid, and an
// invalid number makes no law (the peak's law is then "not found", never a wrong one).
struct Q {
  Wide n = 0;
  Wide d = 1;
  bool ok = true;

  static Q of(Wide v) { return {v, 1, true}; }
  static Q bad() { return {0, 1, false}; }
  Q reduced() const {
    if (!ok) return *this;
    const Wide g = gcd(n, d);
    Q r{n / g, d / g, true};
    if (r.d < 0) {
      r.n = -r.n;
      r.d = -r.d;
    }
    return r;
  }
  friend Q operator+(const Q& a, const Q& b) {
    Wide x = 0;
    Wide y = 0;
    Wide z = 0;
    Wide w = 0;
    if (!a.ok || !b.ok || __builtin_mul_overflow(a.n, b.d, &x) ||
        __builtin_mul_overflow(b.n, a.d, &y) || __builtin_add_overflow(x, y, &z) ||
        __builtin_mul_overflow(a.d, b.d, &w))
      return bad();
    return Q{z, w, true}.reduced();
  }
  friend Q operator-(const Q& a, const Q& b) { return a + Q{-b.n, b.d, b.ok}; }
  friend Q operator*(const Q& a, const Q& b) {
    Wide x = 0;
    Wide y = 0;
    if (!a.ok || !b.ok || __builtin_mul_overflow(a.n, b.n, &x) ||
        __builtin_mul_overflow(a.d, b.d, &y))
      return bad();
    return Q{x, y, true}.reduced();
  }
  friend Q operator/(const Q& a, const Q& b) {
    if (!b.ok || b.n == 0) return bad();
    return a * Q{b.d, b.n, true}.reduced();
  }
  friend bool operator==(const Q& a, const Q& b) {
    return a.ok && b.ok && a.n == b.n && a.d == b.d;
  }
};

// The monomial coefficients of the polynomial of least degree <= max_degree through every
// point (xs ascending and distinct), found through the first degree + 1 points and checked at
// the rest, with at least `spare` points left to check; nullopt when there is none.
std::optional<std::vector<Q>> polynomial_through(const std::vector<int64_t>& xs,
                                                 const std::vector<uint64_t>& ys, size_t max_degree,
                                                 size_t spare) {
  for (size_t degree = 0; degree <= max_degree && degree + 1 + spare <= xs.size(); ++degree) {
    // Newton's divided differences through the first degree + 1 points.
    std::vector<Q> diff;
    for (size_t k = 0; k <= degree; ++k) diff.push_back(Q::of(static_cast<Wide>(ys[k])));
    for (size_t level = 1; level <= degree; ++level) {
      for (size_t k = degree; k >= level; --k) {
        diff[k] = (diff[k] - diff[k - 1]) / Q::of(static_cast<Wide>(xs[k]) - xs[k - level]);
      }
    }
    // To monomials: p(x) = diff[0] + (x - x0)(diff[1] + (x - x1)(diff[2] + ...)), by Horner.
    std::vector<Q> coef{diff[degree]};
    for (size_t k = degree; k-- > 0;) {
      std::vector<Q> next(coef.size() + 1, Q::of(0));
      for (size_t i = 0; i < coef.size(); ++i) {
        next[i + 1] = next[i + 1] + coef[i];
        next[i] = next[i] - coef[i] * Q::of(xs[k]);
      }
      next[0] = next[0] + diff[k];
      coef = std::move(next);
    }
    bool fits = std::all_of(coef.begin(), coef.end(), [](const Q& q) { return q.ok; });
    for (size_t k = 0; fits && k < xs.size(); ++k) {
      Q value = Q::of(0);
      for (size_t i = coef.size(); i-- > 0;) value = value * Q::of(xs[k]) + coef[i];
      fits = value == Q::of(static_cast<Wide>(ys[k]));
    }
    if (fits) {
      while (coef.size() > 1 && coef.back().n == 0) coef.pop_back();
      return coef;
    }
  }
  return std::nullopt;
}

std::optional<std::vector<Fraction>> as_fractions(const std::vector<Q>& qs) {
  std::vector<Fraction> out;
  for (const Q& q : qs) {
    if (!q.ok || q.n > INT64_MAX || q.n < INT64_MIN || q.d > INT64_MAX) return std::nullopt;
    out.push_back({static_cast<int64_t>(q.n), static_cast<int64_t>(q.d)});
  }
  return out;
}

// Which of two polynomials is larger for every large enough x: the sign of the highest
// coefficient where they differ (> 0: a, < 0: b, 0: equal).
int grows_faster(const std::vector<Q>& a, const std::vector<Q>& b) {
  for (size_t i = std::max(a.size(), b.size()); i-- > 0;) {
    const Q x = i < a.size() ? a[i] : Q::of(0);
    const Q y = i < b.size() ? b[i] : Q::of(0);
    const Q d = x - y;
    if (!d.ok) return 0;
    if (d.n != 0) return d.n > 0 ? 1 : -1;
  }
  return 0;
}

}  // namespace

std::string Fraction::to_string() const {
  return den == 1 ? std::to_string(num) : std::to_string(num) + "/" + std::to_string(den);
}

std::string PeakPiece::to_string(const std::string& dim) const {
  std::string out;
  for (size_t i = 0; i < coefficients.size(); ++i) {
    const Fraction& c = coefficients[i];
    if (c.num == 0 && coefficients.size() > 1) continue;
    const bool negative = c.num < 0;
    const Fraction magnitude{negative ? -c.num : c.num, c.den};
    out += out.empty() ? (negative ? "-" : "") : (negative ? " - " : " + ");
    out += magnitude.to_string();
    if (i >= 1) out += "*" + dim;
    if (i >= 2) out += "^" + std::to_string(i);
  }
  return out;
}

PeakLaw peak_law(const std::vector<int64_t>& values, const std::vector<Timeline>& timelines) {
  PeakLaw law;
  if (timelines.empty() || timelines.front().steps.empty()) {
    law.why_not = "no steps";
    return law;
  }
  const size_t steps = timelines.front().steps.size();
  for (const Timeline& t : timelines) {
    bool same = t.steps.size() == steps;
    for (size_t s = 0; same && s < steps; ++s) same = t.steps[s].node == timelines[0].steps[s].node;
    if (!same) {
      law.why_not = "the steps differ between the swept values";
      return law;
    }
  }
  constexpr size_t kSpare = 2;
  std::vector<std::vector<Q>> polys;
  for (size_t s = 0; s < steps; ++s) {
    std::vector<uint64_t> ys;
    std::vector<uint64_t> without_workspace;
    for (const Timeline& t : timelines) {
      ys.push_back(t.steps[s].total_bytes);
      without_workspace.push_back(t.steps[s].total_bytes - t.steps[s].workspace_bytes);
    }
    auto p = polynomial_through(values, ys, PeakLaw::kMaxPeakDegree, kSpare);
    if (!p && polynomial_through(values, without_workspace, PeakLaw::kMaxPeakDegree, kSpare)) {
      // The kernel's workspace follows its own thresholds (packing, blocking), not the shapes.
      std::string seen;
      for (size_t k = 0; k < values.size(); ++k) {
        seen += (k ? ", " : "") + std::to_string(timelines[k].steps[s].workspace_bytes) + " B at " +
                std::to_string(values[k]);
      }
      law.why_not = "the workspace of step " + in_quotes(timelines[0].steps[s].node) +
                    " is no polynomial in the dim (" + seen +
                    ": its kernel chooses by thresholds), though the rest of its total is";
      return law;
    }
    if (!p) {
      // n values test degrees up to n - 1 - kSpare.
      const size_t tested = values.size() < kSpare + 1
                                ? 0
                                : std::min(PeakLaw::kMaxPeakDegree, values.size() - 1 - kSpare);
      law.why_not =
          values.size() < kSpare + 1
              ? "too few values (a law needs " + std::to_string(kSpare + 1) + " or more)"
              : "step " + in_quotes(timelines[0].steps[s].node) +
                    " fits no polynomial of degree <= " + std::to_string(tested) + " through the " +
                    std::to_string(values.size()) + " values with " + std::to_string(kSpare) +
                    " to spare" +
                    (tested < PeakLaw::kMaxPeakDegree ? " (more values test higher degrees)" : "");
      return law;
    }
    polys.push_back(std::move(*p));
  }
  // The peak at each value is its timeline's largest step (the first of equals), as simulate
  // finds it; runs of values with the same peak step are the pieces.
  auto piece = [&](size_t s) -> std::optional<PeakPiece> {
    auto c = as_fractions(polys[s]);
    if (!c) return std::nullopt;
    return PeakPiece{0, 0, timelines[0].steps[s].node, std::move(*c)};
  };
  for (size_t k = 0; k < timelines.size(); ++k) {
    const auto& st = timelines[k].steps;
    size_t best = 0;
    for (size_t s = 1; s < steps; ++s) {
      if (st[s].total_bytes > st[best].total_bytes) best = s;
    }
    if (!law.pieces.empty() && law.pieces.back().step == st[best].node) {
      law.pieces.back().to = values[k];
      continue;
    }
    auto p = piece(best);
    if (!p) {
      law.why_not = "the arithmetic outgrew 64-bit fractions";
      law.pieces.clear();
      return law;
    }
    p->from = p->to = values[k];
    law.pieces.push_back(std::move(*p));
  }
  size_t dominant = 0;
  for (size_t s = 1; s < steps; ++s) {
    if (grows_faster(polys[s], polys[dominant]) > 0) dominant = s;
  }
  if (steps > 0) {
    auto p = piece(dominant);
    if (!p) {
      law.why_not = "the arithmetic outgrew 64-bit fractions";
      law.pieces.clear();
      return law;
    }
    law.dominant = std::move(*p);
  }
  law.exact = steps > 0;
  return law;
}

LinearFit fit_line(const std::vector<int64_t>& xs, const std::vector<uint64_t>& ys) {
  LinearFit fit;
  if (xs.size() < 2 || xs.front() == xs.back()) return fit;
  // Exact integer collinearity: (y_i - y_0)(x_n - x_0) == (y_n - y_0)(x_i - x_0).
  const auto x0 = static_cast<Wide>(xs.front());
  const auto y0 = static_cast<Wide>(ys.front());
  const auto dx = static_cast<Wide>(xs.back()) - x0;
  const auto dy = static_cast<Wide>(ys.back()) - y0;
  fit.linear = true;
  for (size_t i = 1; i + 1 < xs.size(); ++i) {
    const Wide lhs = (static_cast<Wide>(ys[i]) - y0) * dx;
    const Wide rhs = dy * (static_cast<Wide>(xs[i]) - x0);
    fit.linear = fit.linear && lhs == rhs;
  }
  fit.slope = static_cast<double>(dy) / static_cast<double>(dx);
  fit.intercept = static_cast<double>(y0) - fit.slope * static_cast<double>(x0);
  return fit;
}

DimSweep sweep_dim(const graph::Graph& g, const GraphProgramOptions& base, const std::string& dim,
                   const std::vector<int64_t>& values) {
  return sweep_dim(
      [&](int64_t v) {
        GraphProgramOptions options = base;
        options.dims[dim] = v;
        return simulate(build_program(g, options).program);
      },
      dim, values);
}

DimSweep sweep_dim(const std::function<Timeline(int64_t)>& timeline_at, const std::string& dim,
                   const std::vector<int64_t>& values) {
  DimSweep sweep;
  sweep.dim = dim;
  std::vector<uint64_t> totals;
  std::vector<uint64_t> bounds;
  std::vector<Timeline> timelines;
  for (int64_t v : values) {
    Timeline t = timeline_at(v);
    sweep.points.push_back({v, t.total_peak_bytes, t.lower_bound_bytes});
    totals.push_back(t.total_peak_bytes);
    bounds.push_back(t.lower_bound_bytes);
    timelines.push_back(std::move(t));
  }
  sweep.total_peak = fit_line(values, totals);
  sweep.lower_bound = fit_line(values, bounds);
  std::vector<int64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() || sorted != values) {
    sweep.total_peak_law.why_not = "the values are not ascending and distinct";
  } else {
    sweep.total_peak_law = peak_law(values, timelines);
  }
  return sweep;
}

}  // namespace footprint::analysis
