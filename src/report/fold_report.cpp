#include "footprint/report/fold_report.hpp"

#include <fmt/format.h>

namespace footprint::report {

nlohmann::json fold_json(const FoldRun& r) {
  const graph::FoldReport& f = r.fold;
  return {{"model", r.model},
          {"output", r.output},
          {"folded_nodes", f.folded_nodes},
          {"kept_nodes", f.kept_nodes},
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
  return fmt::format(
      "folded       {} nodes into {} initializers ({} bytes); {} nodes kept\n"
      "weights      {} bytes{}\n"
      "peak heap    {} bytes   peak RSS {} bytes   {:.0f} ms\n"
      "wrote        {}\n",
      f.folded_nodes, f.folded_initializers, f.folded_bytes, f.kept_nodes, f.weight_bytes,
      f.data_file.empty() ? "" : "  (external: " + f.data_file.string() + ")", r.peak_heap_bytes,
      r.peak_rss_bytes, r.ms, r.output);
}

}  // namespace footprint::report
