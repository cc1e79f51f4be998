#include "footprint/report/analysis_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "footprint/core/error.hpp"
#include "footprint/report/model_summary_report.hpp"

namespace footprint::report {
namespace {

nlohmann::json fit_json(const analysis::LinearFit& f) {
  return {{"linear", f.linear}, {"slope", f.slope}, {"intercept", f.intercept}};
}

nlohmann::json piece_json(const analysis::PeakPiece& p, const std::string& dim, bool range) {
  nlohmann::json coefficients = nlohmann::json::array();
  for (const auto& c : p.coefficients) coefficients.push_back(c.to_string());
  nlohmann::json j = {
      {"step", p.step}, {"coefficients", coefficients}, {"polynomial", p.to_string(dim)}};
  if (range) {
    j["from"] = p.from;
    j["to"] = p.to;
  }
  return j;
}

nlohmann::json law_json(const analysis::PeakLaw& law, const std::string& dim) {
  nlohmann::json j = {{"exact", law.exact}, {"max_degree", analysis::PeakLaw::kMaxPeakDegree}};
  if (!law.exact) {
    j["why_not"] = law.why_not;
    return j;
  }
  nlohmann::json pieces = nlohmann::json::array();
  for (const auto& p : law.pieces) pieces.push_back(piece_json(p, dim, true));
  j["pieces"] = pieces;
  j["dominant"] = piece_json(law.dominant, dim, false);
  return j;
}

}  // namespace

std::vector<std::string> bound_lines(const std::vector<analysis::BoundedTensor>& bounded,
                                     size_t max_lines) {
  std::vector<std::pair<std::string, size_t>> counts;
  for (const auto& b : bounded) {
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&](const auto& c) { return c.first == b.bound_by; });
    if (it == counts.end()) {
      counts.emplace_back(b.bound_by, 1);
    } else {
      ++it->second;
    }
  }
  std::stable_sort(counts.begin(), counts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> out;
  for (size_t i = 0; i < counts.size() && i < max_lines; ++i) {
    out.push_back(fmt::format("{} tensor{} bounded by {}", counts[i].second,
                              counts[i].second == 1 ? "" : "s", counts[i].first));
  }
  if (counts.size() > max_lines) {
    out.push_back(
        fmt::format("... and {} more bounding ops (see --json)", counts.size() - max_lines));
  }
  return out;
}

AnalysisReport analysis_report(const analysis::ModelProgram& m, std::string model) {
  AnalysisReport r;
  r.model = std::move(model);
  r.order = m.order;
  r.stored_lower_bound_bytes = m.stored_lower_bound_bytes;
  r.inputs_policy = m.options.inputs == analysis::InputsPolicy::donated ? "donated" : "caller";
  r.timeline = &m.timeline;
  r.dims = m.options.dims;
  for (const auto& d : m.program.unbound_dims) r.dims[d] = 1;
  r.unbound_dims = m.program.unbound_dims;
  r.warnings = m.inference.warnings;
  r.warnings.insert(r.warnings.end(), m.program.warnings.begin(), m.program.warnings.end());
  r.subgraphs = m.program.subgraphs;
  r.bounded = m.program.bounded;
  for (const auto& [name, value] : m.values) r.values_of.push_back(name);
  r.constant_nodes = m.program.constant_nodes;
  r.fused = m.fused.fused;
  r.patterns = m.fused.patterns;
  r.channels_last = m.channels_last;
  r.carried = m.carried;
  r.packed_bytes = m.program.packed_bytes;
  r.prepare = m.prepare;
  return r;
}

nlohmann::json to_json(const AnalysisReport& r) {
  const analysis::Timeline& t = *r.timeline;
  nlohmann::json j;
  j["model"] = r.model;
  j["order"] = r.order;
  j["inputs"] = r.inputs_policy;
  j["bytes"] = {{"weights", t.weights_bytes},
                {"prepare_only_weights", t.prepare_only_weights_bytes},
                {"inputs", t.inputs_bytes},
                {"activations_peak", t.activations_peak_bytes},
                {"workspace_peak", t.workspace_peak_bytes},
                {"outputs", t.outputs_bytes},
                {"total_peak", t.total_peak_bytes}};
  j["lower_bound_bytes"] = t.lower_bound_bytes;
  j["lower_bound_arena_bytes"] = t.lower_bound_arena_bytes;
  if (r.stored_lower_bound_bytes) j["stored_lower_bound_bytes"] = *r.stored_lower_bound_bytes;
  j["peak_step"] = t.peak_step;
  j["peak_node"] = t.peak_step >= 0 ? t.steps[t.peak_step].node : "";
  j["after_bytes"] = t.after_bytes;
  j["alive_at_peak"] = nlohmann::json::array();
  for (const auto& a : t.alive_at_peak) {
    j["alive_at_peak"].push_back({{"tensor", a.tensor},
                                  {"bytes", a.bytes},
                                  {"category", std::string(analysis::category_name(a.category))},
                                  {"producer", a.producer},
                                  {"last_consumer", a.last_consumer},
                                  {"why", a.why},
                                  {"bound_by", a.bound_by}});
  }
  j["steps"] = nlohmann::json::array();
  for (const auto& s : t.steps) {
    j["steps"].push_back({{"index", s.index},
                          {"node", s.node},
                          {"op", s.op},
                          {"alloc_bytes", s.alloc_bytes},
                          {"free_bytes", s.free_bytes},
                          {"workspace_bytes", s.workspace_bytes},
                          {"live_bytes", s.live_bytes},
                          {"total_bytes", s.total_bytes}});
  }
  j["dims"] = nlohmann::json::object();
  for (const auto& [name, v] : r.dims) j["dims"][name] = v;
  j["unbound_dims"] = r.unbound_dims;
  if (!r.values_of.empty()) j["planned_for_values_of"] = r.values_of;
  j["warnings"] = r.warnings;
  j["constant_nodes"] = r.constant_nodes;
  j["fused"] = r.fused;
  j["patterns"] = r.patterns;
  j["channels_last"] = {{"nodes", r.channels_last.nodes},
                        {"layout_changes", r.channels_last.layout_changes}};
  j["float32_carriers"] = carried_json(r.carried);
  j["bytes"]["packed"] = r.packed_bytes;
  // The buffers preparing declares; the heap it takes is at least peak_bytes (lower_bound).
  j["prepare"] = {{"copied_weights_bytes", r.prepare.copied_weights_bytes},
                  {"constants_bytes", r.prepare.constants_bytes},
                  {"packed_bytes", r.prepare.packed_bytes},
                  {"peak_bytes", r.prepare.peak_bytes},
                  {"kept_bytes", r.prepare.kept_bytes},
                  {"lower_bound", true}};
  // Figures that include a tensor of data-dependent size are its upper bounds.
  j["bounded"] = !r.bounded.empty();
  j["bounded_tensors"] = nlohmann::json::array();
  for (const auto& b : r.bounded)
    j["bounded_tensors"].push_back({{"tensor", b.tensor}, {"bound_by", b.bound_by}});
  j["subgraphs"] = nlohmann::json::array();
  for (const auto& s : r.subgraphs) {
    j["subgraphs"].push_back({{"node", s.node},
                              {"attribute", s.attribute},
                              {"lower_bound_bytes", s.lower_bound_bytes},
                              {"total_peak_bytes", s.total_peak_bytes},
                              {"arena_bytes", s.arena_bytes},
                              {"arena_planned", s.planned}});
  }
  if (r.sweep) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : r.sweep->points) {
      points.push_back({{"value", p.value},
                        {"total_peak_bytes", p.total_peak_bytes},
                        {"lower_bound_bytes", p.lower_bound_bytes}});
    }
    j["sweep"] = {{"dim", r.sweep->dim},
                  {"points", points},
                  {"total_peak", fit_json(r.sweep->total_peak)},
                  {"lower_bound", fit_json(r.sweep->lower_bound)},
                  {"total_peak_law", law_json(r.sweep->total_peak_law, r.sweep->dim)}};
  }
  return j;
}

std::string to_text(const AnalysisReport& r, size_t max_alive_rows) {
  const analysis::Timeline& t = *r.timeline;
  std::string out;
  auto line = [&]<class... Args>(fmt::format_string<Args...> f, Args&&... args) {
    out += fmt::format(f, std::forward<Args>(args)...);
    out += '\n';
  };
  line("model        {}   (order: {}, inputs: {})", r.model, r.order, r.inputs_policy);
  if (!r.dims.empty()) {
    std::string dims;
    for (const auto& [name, v] : r.dims)
      dims += fmt::format("{}{}={}", dims.empty() ? "" : ", ", name, v);
    line("dims         {}", dims);
  }
  // With a tensor of data-dependent size, every figure but the weights is an upper bound.
  const bool bounded = !r.bounded.empty();
  auto at_most = [bounded](uint64_t bytes) {
    return bounded ? "<= " + human_bytes(bytes) : human_bytes(bytes);
  };
  line("weights      {:>12}{}", human_bytes(t.weights_bytes),
       t.prepare_only_weights_bytes == 0
           ? std::string()
           : "   and " + human_bytes(t.prepare_only_weights_bytes) +
                 " read only while preparing (constants are computed from them, then they are "
                 "released)");
  line("inputs       {:>12}", human_bytes(t.inputs_bytes));
  line("activations  {:>12}   at their peak", at_most(t.activations_peak_bytes));
  line("workspace    {:>12}   at its peak", at_most(t.workspace_peak_bytes));
  line("outputs      {:>12}", at_most(t.outputs_bytes));
  line("total peak   {:>12}   at step {} ({})", at_most(t.total_peak_bytes), t.peak_step,
       t.peak_step >= 0 ? t.steps[t.peak_step].node : "-");
  line("lower bound  {:>12}   ({} with 64-byte buffers): no arena for this order is smaller{}",
       at_most(t.lower_bound_bytes), human_bytes(t.lower_bound_arena_bytes),
       bounded ? " when every bounded tensor is at its bound" : "");
  if (r.stored_lower_bound_bytes) {
    line("stored order {:>12}   (lower bound in the model's own order)",
         at_most(*r.stored_lower_bound_bytes));
  }
  line("after run    {:>12}   (outputs and what the caller holds)", at_most(t.after_bytes));
  if (bounded) {
    line("bounded      {} tensors have sizes known only when running, counted at their bounds:",
         r.bounded.size());
    for (const std::string& b : bound_lines(r.bounded)) line("               {}", b);
  }
  if (!r.values_of.empty()) {
    std::string names;
    for (const std::string& n : r.values_of) names += (names.empty() ? "'" : ", '") + n + "'";
    line(
        "planned for  the values of {} (--data-dir): extents depend on them, other values give "
        "other figures",
        names);
  }
  if (r.constant_nodes > 0)
    line("constants    {} nodes computed once at prepare time", r.constant_nodes);
  if (r.packed_bytes > 0) {
    line(
        "packed       {:>12}   weights the kernels keep in their own layouts, on the heap beside "
        "the plan (convolutions in oneDNN's weight layouts, large matrix products as 1x1 "
        "convolutions, recurrent "
        "gates transposed)",
        human_bytes(r.packed_bytes));
  }
  if (r.prepare.peak_bytes > 0) {
    line(
        "prepare      {:>12}   on the heap while preparing: {} of weights copied "
        "(misaligned or typed in the model), {} computed, {} packed, each original released once "
        "its copy is made; {} kept (oneDNN's primitives come on top)",
        ">= " + human_bytes(r.prepare.peak_bytes), human_bytes(r.prepare.copied_weights_bytes),
        human_bytes(r.prepare.constants_bytes), human_bytes(r.prepare.packed_bytes),
        human_bytes(r.prepare.kept_bytes));
  }
  if (!r.fused.empty() || !r.patterns.empty()) line("{}", fused_line(r.fused, r.patterns));
  if (r.channels_last.nodes > 0) {
    line("{}", layout_line(r.channels_last.nodes, r.channels_last.layout_changes));
  }
  if (r.carried.values > 0) line("{}", carried_line(r.carried));
  for (const auto& s : r.subgraphs) {
    line("subgraph     {}/{}: lower bound {}, peak {}, arena {}{}", s.node, s.attribute,
         human_bytes(s.lower_bound_bytes), human_bytes(s.total_peak_bytes),
         human_bytes(s.arena_bytes), s.planned ? " (planned)" : " (at least: not planned)");
  }
  if (!t.alive_at_peak.empty()) {
    line("");
    line("alive at the peak ({} tensors):", t.alive_at_peak.size());
    for (size_t i = 0; i < t.alive_at_peak.size() && i < max_alive_rows; ++i) {
      const auto& a = t.alive_at_peak[i];
      line("  {:>10}  {:<28} {}{}", a.bound_by.empty() ? human_bytes(a.bytes) : at_most(a.bytes),
           a.tensor, a.why, a.bound_by.empty() ? "" : " (bounded by " + a.bound_by + ")");
    }
    if (t.alive_at_peak.size() > max_alive_rows) {
      line("  ... {} more (see --json)", t.alive_at_peak.size() - max_alive_rows);
    }
  }
  if (r.sweep) {
    line("");
    line("sweep over {}:", r.sweep->dim);
    for (const auto& p : r.sweep->points) {
      line("  {}={:<8} total peak {:>12}   lower bound {:>12}", r.sweep->dim, p.value,
           human_bytes(p.total_peak_bytes), human_bytes(p.lower_bound_bytes));
    }
    const auto& f = r.sweep->total_peak;
    if (f.linear) {
      line("  total peak = {:.0f} + {:.0f} x {} bytes", f.intercept, f.slope, r.sweep->dim);
    } else {
      line("  total peak is not linear in {}", r.sweep->dim);
    }
    const analysis::PeakLaw& law = r.sweep->total_peak_law;
    const std::string& dim = r.sweep->dim;
    if (law.exact) {
      line("  total peak in bytes, exact at every value above (each step's total is a polynomial");
      line("  of degree <= {} through all of them):", analysis::PeakLaw::kMaxPeakDegree);
      for (const auto& p : law.pieces) {
        const std::string range = p.from == p.to ? fmt::format("{}={}", dim, p.from)
                                                 : fmt::format("{} in [{}, {}]", dim, p.from, p.to);
        line("    {}: {}   (step {})", range, p.to_string(dim), in_quotes(p.step));
      }
      line("    as {} grows: {}   (step {})", dim, law.dominant.to_string(dim),
           in_quotes(law.dominant.step));
    } else if (!law.why_not.empty()) {
      line("  no polynomial law: {}", law.why_not);
    }
  }
  return out;
}

}  // namespace footprint::report
