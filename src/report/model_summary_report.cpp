#include "footprint/report/model_summary_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace footprint::report {
namespace {

nlohmann::json shape_json(const Shape& shape) {
  if (!shape.ranked) return nullptr;
  nlohmann::json dims = nlohmann::json::array();
  for (const Dim& d : shape.dims) {
    if (d.is_known()) {
      dims.push_back(*d.value());
    } else if (!d.is_unknown()) {
      dims.push_back(d.to_string());
    } else {
      dims.push_back(nullptr);
    }
  }
  return dims;
}

nlohmann::json signature_json(const analysis::TensorSignature& t) {
  return {{"name", t.name},
          {"dtype", std::string(dtype_name(t.dtype))},
          {"shape", shape_json(t.shape)},
          {"type", t.type_text}};
}

std::string domain_name(const std::string& d) {
  return d.empty() ? "ai.onnx" : d;
}

}  // namespace

std::string human_bytes(uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, kUnits[unit]);
}

std::string fused_line(const std::vector<std::string>& activations,
                       const std::vector<std::string>& patterns) {
  std::vector<std::string> parts;
  if (!activations.empty()) {
    const size_t n = activations.size();
    parts.push_back(fmt::format("{} {} inside the node before {}", n,
                                n == 1 ? "activation runs" : "activations run",
                                n == 1 ? "it" : "them"));
  }
  if (!patterns.empty()) {
    // Each line starts with the op the pattern became.
    std::map<std::string, size_t> ops;
    for (const std::string& p : patterns) ++ops[p.substr(0, p.find(' '))];
    std::vector<std::string> counts;
    counts.reserve(ops.size());
    for (const auto& [op, k] : ops) counts.push_back(fmt::format("{} {}", op, k));
    parts.push_back(fmt::format("{} {} as one op each ({})", patterns.size(),
                                patterns.size() == 1 ? "pattern runs" : "patterns run",
                                fmt::join(counts, ", ")));
  }
  return fmt::format("fused        {} (--no-fuse: apart)", fmt::join(parts, "; "));
}

std::string layout_line(size_t nodes, size_t changes) {
  return fmt::format(
      "layout       {} {} channels-last (NHWC), {} layout {} to and from NCHW (--no-fuse: all "
      "NCHW)",
      nodes, nodes == 1 ? "node runs" : "nodes run", changes, changes == 1 ? "change" : "changes");
}

std::string carried_line(const graph::CarryReport& r) {
  const std::string type(dtype_name(r.rounds_to));
  return fmt::format(
      "16-bit       {} {} activation{} stored as float32 between kernels that compute in float32 "
      "(+{}, no conversion scratch) (--keep-16bit: as stored)",
      r.values, type, r.values == 1 ? "" : "s",
      human_bytes(static_cast<uint64_t>(std::max<int64_t>(r.extra_bytes, 0))));
}

nlohmann::json carried_json(const graph::CarryReport& r) {
  return {{"values", r.values},
          {"extra_bytes", r.extra_bytes},
          {"rounds_to", r.values > 0 ? std::string(dtype_name(r.rounds_to)) : std::string()}};
}

nlohmann::json to_json(const analysis::ModelSummary& s) {
  nlohmann::json j;
  j["model"] = s.model;
  j["file_bytes"] = s.file_bytes;
  j["ir_version"] = s.ir_version;
  j["producer"] = {{"name", s.producer_name}, {"version", s.producer_version}};
  nlohmann::json opsets = nlohmann::json::object();
  for (const auto& [domain, version] : s.opsets) opsets[domain_name(domain)] = version;
  j["opsets"] = opsets;
  j["graph_inputs"] = nlohmann::json::array();
  for (const auto& t : s.inputs) j["graph_inputs"].push_back(signature_json(t));
  j["graph_outputs"] = nlohmann::json::array();
  for (const auto& t : s.outputs) j["graph_outputs"].push_back(signature_json(t));
  j["nodes"] = s.nodes;
  j["subgraphs"] = s.subgraphs;
  j["subgraph_nodes"] = s.subgraph_nodes;
  j["ops"] = s.ops;
  j["subgraph_ops"] = s.subgraph_ops;
  j["unknown_ops"] = s.unknown_ops;
  j["initializers"] = s.initializers;
  j["initializer_bytes"] = s.initializer_bytes;
  j["constant_nodes"] = s.constant_nodes;
  j["constant_bytes"] = s.constant_bytes;
  j["weight_bytes"] = s.weight_bytes;
  j["weights"] = {{"mapped_bytes", s.residence.mapped},
                  {"borrowed_bytes", s.residence.borrowed},
                  {"heap_bytes", s.residence.heap}};
  j["external_files"] = s.external_files;
  j["tree_bytes"] = s.tree_bytes;
  return j;
}

std::string to_text(const analysis::ModelSummary& s) {
  std::string out;
  auto line = [&]<class... Args>(fmt::format_string<Args...> f, Args&&... args) {
    out += fmt::format(f, std::forward<Args>(args)...);
    out += '\n';
  };
  line("model      {} ({})", s.model, human_bytes(s.file_bytes));
  line("ir_version {}   producer {} {}", s.ir_version,
       s.producer_name.empty() ? "-" : s.producer_name, s.producer_version);
  std::string opsets;
  for (const auto& [domain, version] : s.opsets) {
    opsets += fmt::format("{}{} {}", opsets.empty() ? "" : ", ", domain_name(domain), version);
  }
  line("opsets     {}", opsets.empty() ? "-" : opsets);
  line("");
  auto signatures = [&](const char* title, const auto& list) {
    line("{} ({})", title, list.size());
    size_t width = 4;
    for (const auto& t : list) width = std::max(width, t.name.size());
    for (const auto& t : list) line("  {:<{}}  {}", t.name, width, t.type_text);
  };
  signatures("inputs", s.inputs);
  signatures("outputs", s.outputs);
  line("");
  line("nodes      {}{}", s.nodes,
       s.subgraphs == 0 ? std::string()
                        : fmt::format("  (+{} in {} subgraphs)", s.subgraph_nodes, s.subgraphs));
  std::vector<std::pair<std::string, size_t>> ops(s.ops.begin(), s.ops.end());
  for (const auto& entry : s.subgraph_ops) {
    const std::string& op = entry.first;
    auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& p) { return p.first == op; });
    if (it == ops.end()) ops.emplace_back(op, 0);
  }
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  for (const auto& [op, n] : ops) {
    auto sub = s.subgraph_ops.find(op);
    line("  {:<24} {:>6}{}", op, n,
         sub == s.subgraph_ops.end() ? std::string()
                                     : fmt::format("  (+{} in subgraphs)", sub->second));
  }
  if (!s.unknown_ops.empty()) {
    std::string names;
    for (const auto& op : s.unknown_ops) names += (names.empty() ? "" : ", ") + op;
    line("  not in the op registry: {}", names);
  }
  line("");
  line("weights    {}  ({} initializers: {}; {} Constant nodes: {})", human_bytes(s.weight_bytes),
       s.initializers, human_bytes(s.initializer_bytes), s.constant_nodes,
       human_bytes(s.constant_bytes));
  line("  mapped {}   borrowed {}   heap {}", human_bytes(s.residence.mapped),
       human_bytes(s.residence.borrowed), human_bytes(s.residence.heap));
  for (const auto& f : s.external_files) line("  external data: {}", f);
  line("parsed tree {}", human_bytes(s.tree_bytes));
  return out;
}

nlohmann::json to_json(const analysis::ModelSummary& s, const LoadFigures& load) {
  nlohmann::json j = to_json(s);
  nlohmann::json l = {{"source", load.source}, {"ms", load.ms}};
  if (load.heap_peak_bytes) l["heap_peak_bytes"] = *load.heap_peak_bytes;
  if (load.heap_retained_bytes) l["heap_retained_bytes"] = *load.heap_retained_bytes;
  if (load.process) {
    l["peak_rss_bytes"] = load.process->peak_rss_bytes;
    l["private_bytes"] = load.process->private_bytes;
    l["file_backed_bytes"] = load.process->file_backed_bytes;
  }
  j["load"] = l;
  return j;
}

std::string to_text(const analysis::ModelSummary& s, const LoadFigures& load) {
  std::string text = to_text(s);
  // Milliseconds cut (not rounded) to three decimals, then to six characters.
  text += "loaded in " +
          std::to_string(static_cast<int64_t>(load.ms * 1000) / 1000.0).substr(0, 6) + " ms";
  if (load.heap_peak_bytes) text += ", heap peak " + human_bytes(*load.heap_peak_bytes);
  if (load.process) text += ", peak RSS " + human_bytes(load.process->peak_rss_bytes);
  return text;
}

}  // namespace footprint::report
