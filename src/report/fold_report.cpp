#include "footprint/report/fold_report.hpp"

#include <fmt/format.h>

namespace footprint::report {

nlohmann::json fold_json(const FoldRun& r) {
  const graph::FoldReport& f = r.fold;
  nlohmann::json kept = nlohmann::json::array();
  for (const graph::KeptReason& k : f.kept)
    kept.push_back({{"reason", k.reason}, {"nodes", k.nodes}, {"first", k.first}});
  return {{"model", r.model},
          {"output", r.output},
          {"folded_nodes", f.folded_nodes},
          {"kept_nodes", f.kept_nodes},
          {"kept", kept},
          {"folded_initializers", f.folded_initializers},
          {"folded_bytes", f.folded_bytes},
          {"weight_bytes", f.weight_bytes},
          {"largest_in_flight_bytes", f.largest_in_flight_bytes},
          {"peak_heap_bytes", r.peak_heap_bytes},
          {"peak_rss_bytes", r.peak_rss_bytes},
          {"external_data", r.external_data},
          {"data_file", f.data_file.string()},
          {"fold_ms", r.ms}};
}

std::string fold_text(const FoldRun& r) {
  const graph::FoldReport& f = r.fold;
  // Why each kept node stays computed at run time, so folding nothing is never silent.
  std::string kept;
  for (const graph::KeptReason& k : f.kept) {
    kept += fmt::format("kept         {} node{}: {} (first {})\n", k.nodes, k.nodes == 1 ? "" : "s",
                        k.reason, k.first);
  }
  return fmt::format(
      "folded       {} nodes into {} initializers ({} bytes); {} nodes kept\n"
      "{}"
      "weights      {} bytes{}\n"
      "peak heap    {} bytes   peak RSS {} bytes   {:.0f} ms\n"
      "wrote        {}\n",
      f.folded_nodes, f.folded_initializers, f.folded_bytes, f.kept_nodes, kept, f.weight_bytes,
      f.data_file.empty() ? "" : "  (external: " + f.data_file.string() + ")", r.peak_heap_bytes,
      r.peak_rss_bytes, r.ms, r.output);
}

}  // namespace footprint::report
