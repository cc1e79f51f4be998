#include "footprint/analysis/dim_fit.hpp"

#include <algorithm>
#include <map>

#include "footprint/core/error.hpp"

namespace footprint::analysis {

const char* figure_name(FitFigure f) {
  switch (f) {
    case FitFigure::total_peak:
      return "total peak";
    case FitFigure::activations_peak:
      return "activations peak";
    case FitFigure::arena:
      return "arena lower bound";
  }
  return "";
}

uint64_t figure_of(const Timeline& t, FitFigure f) {
  switch (f) {
    case FitFigure::total_peak:
      return t.total_peak_bytes;
    case FitFigure::activations_peak:
      return t.activations_peak_bytes;
    case FitFigure::arena:
      return t.lower_bound_arena_bytes;
  }
  return 0;
}

DimFit fit_dim(const std::function<Timeline(int64_t)>& timeline_at, const std::string& dim,
               FitFigure figure, uint64_t budget_bytes, int64_t low, int64_t limit) {
  if (low < 0 || limit < low) throw UsageError("fit: the values must run from 0 or more upward");
  DimFit fit;
  fit.dim = dim;
  fit.figure = figure;
  fit.budget_bytes = budget_bytes;
  std::map<int64_t, std::optional<uint64_t>> seen;  // value -> figure, for the growth check
  // The figure at v, or nullopt where the analysis refuses v; every probe is recorded.
  auto probe = [&](int64_t v) -> std::optional<uint64_t> {
    FitProbe p{v, std::nullopt, ""};
    try {
      p.bytes = figure_of(timeline_at(v), figure);
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      p.refused = e.what();
    }
    fit.probes.push_back(p);
    seen[v] = p.bytes;
    // Growth: each figure at least the one at the largest smaller value analysed, at most the
    // one at the smallest larger value.
    auto falling = [&](int64_t v1, uint64_t b1, int64_t v2, uint64_t b2) {
      std::string text = "fit: the ";
      text += figure_name(figure);
      text += " falls as " + dim + " grows (";
      text += std::to_string(b1) + " B at " + dim;
      text += "=" + std::to_string(v1) + ", ";
      text += std::to_string(b2) + " B at " + std::to_string(v2);
      text += "): the largest value that fits is not one bisection away";
      return Error(text);
    };
    const auto it = seen.find(v);
    for (auto before = it; p.bytes && before != seen.begin();) {
      --before;
      if (!before->second) continue;
      if (*p.bytes < *before->second) throw falling(before->first, *before->second, v, *p.bytes);
      break;
    }
    for (auto after = std::next(it); p.bytes && after != seen.end(); ++after) {
      if (!after->second) continue;
      if (*p.bytes > *after->second) throw falling(v, *p.bytes, after->first, *after->second);
      break;
    }
    return p.bytes;
  };
  auto fits = [&](const std::optional<uint64_t>& b) { return b && *b <= budget_bytes; };

  const std::optional<uint64_t> first = probe(low);
  if (!fits(first)) {
    fit.above = low;
    fit.bytes_above = first;
    fit.refused = fit.probes.back().refused;
    return fit;
  }
  // Doubling: lo fits, hi does not (or is past the limit).
  int64_t lo = low;
  uint64_t lo_bytes = *first;
  int64_t hi = 0;
  std::optional<uint64_t> hi_bytes;
  std::string hi_refused;
  bool past_limit = false;
  for (int64_t step = 1;; step *= 2) {
    const int64_t v = limit - lo < step ? limit : lo + step;
    if (v == lo) {
      past_limit = true;
      break;
    }
    const std::optional<uint64_t> b = probe(v);
    if (!fits(b)) {
      hi = v;
      hi_bytes = b;
      hi_refused = fit.probes.back().refused;
      break;
    }
    lo = v;
    lo_bytes = *b;
  }
  if (past_limit) {
    fit.largest = lo;
    fit.bytes_at_largest = lo_bytes;
    fit.at_limit = true;
    return fit;
  }
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    const std::optional<uint64_t> b = probe(mid);
    if (fits(b)) {
      lo = mid;
      lo_bytes = *b;
    } else {
      hi = mid;
      hi_bytes = b;
      hi_refused = fit.probes.back().refused;
    }
  }
  fit.largest = lo;
  fit.bytes_at_largest = lo_bytes;
  fit.above = hi;
  fit.bytes_above = hi_bytes;
  fit.refused = hi_refused;
  return fit;
}

void check_fit_dim(const ModelProgram& m, const std::string& dim) {
  std::vector<std::string> named;
  for (const onnx::ValueInfoProto& v : m.model->onnx().graph().inputs) {
    if (v.type == nullptr) continue;
    for (const onnx::DimensionProto& d : v.type->shape) {
      if (d.has_param && std::find(named.begin(), named.end(), d.param) == named.end())
        named.emplace_back(d.param);
    }
  }
  if (std::find(named.begin(), named.end(), dim) != named.end() || !m.rebatched.empty()) return;
  std::string list;
  for (const std::string& n : named) list += (list.empty() ? "" : ", ") + n;
  throw UsageError("--solve " + dim + ": no input of the model has a dim of that name" +
                   (list.empty() ? std::string(" (it names none)") : " (it names " + list + ")"));
}

}  // namespace footprint::analysis
