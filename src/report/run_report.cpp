#include "footprint/report/run_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "footprint/report/model_summary_report.hpp"

namespace footprint::report {

namespace {

double steps_ms(const RunProfile& p) {
  double total = 0;
  for (const StepTime& s : p.steps) total += s.ms;
  return total;
}

double share(double ms, double total) {
  return total > 0 ? ms / total : 0;
}

// What a later run (the arena kept) took on the heap beyond the outputs it allocated: outputs
// written into tensors handed back (Session::run(inputs, outputs)) were not allocated by it.
int64_t later_run_overhead(const RunReport& r) {
  const uint64_t allocated = r.prepared.outputs_bytes - r.last_run.reused_output_bytes;
  return static_cast<int64_t>(r.last_run.peak_heap_bytes) - static_cast<int64_t>(allocated);
}

nlohmann::json profile_json(const RunProfile& p) {
  using nlohmann::json;
  const double total = steps_ms(p);
  json by_op = json::array();
  for (const OpTime& o : time_by_op(p)) {
    by_op.push_back(
        {{"op", o.op}, {"steps", o.steps}, {"ms", o.ms}, {"share", share(o.ms, total)}});
  }
  json steps = json::array();
  for (const StepTime& s : p.steps) steps.push_back({{"name", s.name}, {"op", s.op}, {"ms", s.ms}});
  return {{"runs", p.runs}, {"steps_ms", total}, {"by_op", by_op}, {"steps", steps}};
}

// The op table, then the dearest steps: where a run's time goes, for a reader deciding what to
// speed up.
std::string profile_text(const RunProfile& p, double median_ms) {
  constexpr size_t kDearest = 10;
  const double total = steps_ms(p);
  std::string t = fmt::format(
      "profile      median step times over {} runs: {:.3f} ms in steps, of a {:.3f} ms median "
      "run\n",
      p.runs, total, median_ms);
  t += fmt::format("  {:<24} {:>6} {:>10} {:>7}\n", "op", "steps", "ms", "share");
  for (const OpTime& o : time_by_op(p)) {
    t += fmt::format("  {:<24} {:>6} {:>10.3f} {:>6.1f}%\n", o.op, o.steps, o.ms,
                     100 * share(o.ms, total));
  }
  std::vector<const StepTime*> dearest;
  for (const StepTime& s : p.steps) dearest.push_back(&s);
  const size_t n = std::min(kDearest, dearest.size());
  std::partial_sort(dearest.begin(), dearest.begin() + static_cast<std::ptrdiff_t>(n),
                    dearest.end(),
                    [](const StepTime* a, const StepTime* b) { return a->ms > b->ms; });
  t += fmt::format("  the {} dearest steps:\n", n);
  for (size_t i = 0; i < n; ++i) {
    t += fmt::format("  {:>10.3f} ms {:>6.1f}%  {} ({})\n", dearest[i]->ms,
                     100 * share(dearest[i]->ms, total), dearest[i]->name, dearest[i]->op);
  }
  return t;
}

}  // namespace

std::vector<OpTime> time_by_op(const RunProfile& p) {
  std::map<std::string, OpTime> by_name;
  for (const StepTime& s : p.steps) {
    OpTime& o = by_name[s.op];
    o.op = s.op;
    ++o.steps;
    o.ms += s.ms;
  }
  std::vector<OpTime> out;
  out.reserve(by_name.size());
  for (auto& [name, o] : by_name) out.push_back(std::move(o));
  std::stable_sort(out.begin(), out.end(),
                   [](const OpTime& a, const OpTime& b) { return a.ms > b.ms; });
  return out;
}

nlohmann::json run_json(const RunReport& r) {
  using nlohmann::json;
  const auto& p = r.prepared;
  const uint64_t predicted_run = p.planned_arena_bytes + p.outputs_bytes;
  json outputs = json::array();
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    json item = {{"name", r.outputs[i].name()},
                 {"shape", r.outputs[i].dims()},
                 {"dtype", std::string(dtype_name(r.outputs[i].dtype()))}};
    if (i < r.output_files.size()) item["file"] = r.output_files[i];
    outputs.push_back(std::move(item));
  }
  json j = {
      {"model", r.model},
      {"inputs", r.input_source},
      {"threads", r.threads},
      {"dims", p.dims},
      {"rebatched", p.rebatched},
      {"fused", p.fused},
      {"patterns", p.patterns},
      {"channels_last", {{"nodes", p.channels_last_nodes}, {"layout_changes", p.layout_changes}}},
      {"float32_carriers", carried_json(p.carried)},
      {"predicted",
       {{"arena_bytes", p.planned_arena_bytes},
        {"lower_bound_bytes", p.lower_bound_bytes},
        {"activations_peak_bytes", p.activations_peak_bytes},
        {"workspace_peak_bytes", p.workspace_peak_bytes},
        {"outputs_bytes", p.outputs_bytes},
        {"weights_bytes", p.weights_bytes},
        {"run_heap_bytes", predicted_run},
        {"total_peak_bytes", p.total_peak_bytes},
        {"planner", p.planner}}},
      {"measured",
       {{"arena_bytes", r.first_run.arena_bytes},
        {"peak_heap_bytes", r.first_run.peak_heap_bytes},
        {"run_overhead_bytes",
         static_cast<int64_t>(r.first_run.peak_heap_bytes) - static_cast<int64_t>(predicted_run)},
        {"last_run_peak_heap_bytes", r.last_run.peak_heap_bytes},
        {"last_run_reused_output_bytes", r.last_run.reused_output_bytes},
        {"last_run_overhead_bytes", later_run_overhead(r)},
        {"load_peak_heap_bytes", r.load_peak_heap_bytes},
        {"prepare_peak_heap_bytes", p.prepare_peak_heap_bytes},
        {"prepare_buffers_peak_bytes", p.prepare_buffers_peak_bytes},
        {"prepare_buffers_kept_bytes", p.prepare_buffers_kept_bytes},
        {"constant_bytes", p.constant_bytes},
        {"packed_weights_bytes", p.packed_weights_bytes},
        {"released_constant_bytes", p.released_constant_bytes},
        {"released_mapped_bytes", p.released_mapped_bytes}}},
      {"latency_ms",
       {{"min", r.latency_ms.min},
        {"median", r.latency_ms.median},
        {"p90", r.latency_ms.p90},
        {"runs", r.latency_ms.runs}}},
      {"outputs", outputs},
      {"load_ms", r.load_ms},
      {"prepare_ms", r.prepare_ms},
  };
  if (r.end) {
    j["measured"]["peak_rss_bytes"] = r.end->peak_rss_bytes;
    j["measured"]["private_bytes"] = r.end->private_bytes;
    j["measured"]["file_backed_bytes"] = r.end->file_backed_bytes;
  }
  if (r.after_prepare)
    j["measured"]["peak_rss_after_prepare_bytes"] = r.after_prepare->peak_rss_bytes;
  if (r.profile) j["profile"] = profile_json(*r.profile);
  if (p.bounded_values > 0) {
    j["bounded"] = {{"values", p.bounded_values},
                    {"planned_bytes", p.bounded_bytes},
                    {"last_run_bytes", r.last_run.bounded_used_bytes},
                    {"by", p.bounded_by}};
  }
  if (!p.bound_by_value.empty()) j["planned_for_values_of"] = p.bound_by_value;
  if (r.shape_check) {
    j["check_shapes"] = {{"values", r.shape_check->values},
                         {"difference", r.shape_check->difference}};
  }
  if (r.check) {
    j["match"] = r.check->match;
    j["max_abs_error"] = r.check->max_abs_error;
    j["max_rel_error"] = r.check->max_rel_error;
    j["rtol"] = r.rtol;
    j["atol"] = r.atol;
    j["atol_of_peak"] = r.atol_of_peak;
    j["atol_used"] = r.check->atol_used;
    j["tolerance_rule"] = r.tolerance_rule;
    if (!r.check->problem.empty()) j["mismatch"] = r.check->problem;
  }
  return j;
}

// 'a', 'b' and 'c'.
std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

// Which tensors are planned at a bound, what decides them, and what the last run used of it.
std::string bounded_line(const runtime::PreparedStats& p, const runtime::RunStats& last) {
  constexpr size_t kNamed = 3;
  std::string by;
  for (size_t i = 0; i < p.bounded_by.size() && i < kNamed; ++i)
    by += (i > 0 ? ", " : "") + p.bounded_by[i];
  if (p.bounded_by.size() > kNamed) by += fmt::format(" and {} more", p.bounded_by.size() - kNamed);
  return fmt::format(
      "bounded      {} values with extents that depend on values, each planned at its bound "
      "(their buffers sum to {} there, of which the last run's data filled {}); decided by {}\n",
      p.bounded_values, human_bytes(p.bounded_bytes), human_bytes(last.bounded_used_bytes), by);
}

std::string run_text(const RunReport& r) {
  const auto& p = r.prepared;
  const uint64_t predicted_run = p.planned_arena_bytes + p.outputs_bytes;
  std::string t = fmt::format("model        {}   (inputs: {}, threads {})\n", r.model,
                              r.input_source, r.threads);
  t += fmt::format("load         {:.1f} ms, prepare {:.1f} ms\n", r.load_ms, r.prepare_ms);
  t += fmt::format("steps        {} per run, {} constant nodes evaluated when preparing\n", p.steps,
                   p.constant_nodes);
  if (!p.fused.empty() || !p.patterns.empty()) t += fused_line(p.fused, p.patterns) + "\n";
  if (p.channels_last_nodes > 0) {
    t += layout_line(p.channels_last_nodes, p.layout_changes) + "\n";
  }
  if (p.carried.values > 0) t += carried_line(p.carried) + "\n";
  t += fmt::format("arena        planned {} B ({}), obtained {} B   [{}; lower bound {} B]\n",
                   p.planned_arena_bytes, human_bytes(p.planned_arena_bytes),
                   r.first_run.arena_bytes, p.planner, p.lower_bound_bytes);
  if (p.bounded_values > 0) t += bounded_line(p, r.last_run);
  if (!p.bound_by_value.empty()) {
    t += fmt::format(
        "planned for  the values of {} (extents depend on them; other values prepare again)\n",
        quoted_list(p.bound_by_value));
  }
  t += fmt::format(
      "run heap     first run: predicted {} (arena + outputs), measured {} (+{} B); later runs "
      "(arena kept): +{} B over the outputs\n",
      human_bytes(predicted_run), human_bytes(r.first_run.peak_heap_bytes),
      static_cast<int64_t>(r.first_run.peak_heap_bytes) - static_cast<int64_t>(predicted_run),
      later_run_overhead(r));
  t += fmt::format("weights      {} ({} computed when preparing)\n", human_bytes(p.weights_bytes),
                   human_bytes(p.constant_bytes));
  if (p.packed_weights_bytes > 0) {
    t += fmt::format(
        "packed       {} of weights in their kernels' layouts (convolutions in oneDNN's, large "
        "matrix products as 1x1 convolutions, recurrent gates transposed)\n",
        human_bytes(p.packed_weights_bytes));
  }
  if (p.released_constant_bytes + p.released_mapped_bytes > 0) {
    t += fmt::format(
        "released     weights no run reads (packed, copied for alignment, or read only to compute "
        "others): {} from the heap, {} of mapped pages\n",
        human_bytes(p.released_constant_bytes), human_bytes(p.released_mapped_bytes));
  }
  if (p.prepare_peak_heap_bytes > 0) {
    t += fmt::format(
        "prepare      heap peak {} (counting allocator); of it {} in weight copies, constants and "
        "packed weights at once, as analyze predicts ({} kept)\n",
        human_bytes(p.prepare_peak_heap_bytes), human_bytes(p.prepare_buffers_peak_bytes),
        human_bytes(p.prepare_buffers_kept_bytes));
  }
  if (r.end) {
    t += fmt::format("peak RSS     {} (private {}, file-backed {})\n",
                     human_bytes(r.end->peak_rss_bytes), human_bytes(r.end->private_bytes),
                     human_bytes(r.end->file_backed_bytes));
  }
  t += fmt::format("latency      median {:.3f} ms, min {:.3f}, p90 {:.3f} over {} runs\n",
                   r.latency_ms.median, r.latency_ms.min, r.latency_ms.p90, r.latency_ms.runs);
  if (r.profile) t += profile_text(*r.profile, r.latency_ms.median);
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    std::string shape;
    for (int64_t d : r.outputs[i].dims()) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    t += fmt::format("output       {} {}[{}]{}\n", r.outputs[i].name(),
                     dtype_name(r.outputs[i].dtype()), shape,
                     i < r.output_files.size() ? "  -> " + r.output_files[i] : "");
  }
  if (r.shape_check) {
    t += r.shape_check->difference.empty()
             ? fmt::format("check-shapes {} values: dtype, extents and bytes as analyze predicts\n",
                           r.shape_check->values)
             : fmt::format("check-shapes DIFFERS: {}\n", r.shape_check->difference);
  }
  if (r.check) {
    t += fmt::format(
        "match        {}   max abs error {:.3g}, max rel error {:.3g} (rtol {}, atol {}{}){}\n",
        r.check->match ? "yes" : "NO", r.check->max_abs_error, r.check->max_rel_error, r.rtol,
        r.check->atol_used > r.atol ? fmt::format("{:.3g}: {} of the largest expected magnitude",
                                                  r.check->atol_used, r.atol_of_peak)
                                    : fmt::format("{}", r.atol),
        r.tolerance_rule.empty() ? "" : "; " + r.tolerance_rule + " defaults",
        r.check->problem.empty() ? "" : "   " + r.check->problem);
  }
  return t;
}

}  // namespace footprint::report
