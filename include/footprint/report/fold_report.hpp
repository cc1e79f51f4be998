#pragma once
// `footprint fold` output: what folding produced (graph::FoldReport) and what it cost in heap,
// resident memory and time, as JSON and as a readable summary.
//
//   report::FoldRun r;
//   r.fold = graph::fold_model(model, runtime::op_registry(), "out.onnx");
//   std::printf("%s", report::fold_text(r).c_str());  // or fold_json(r).dump(2)
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "footprint/graph/fold.hpp"

namespace footprint::report {

struct FoldRun {
  std::string model;
  std::string output;
  bool external_data = false;
  graph::FoldReport fold;
  uint64_t peak_heap_bytes = 0;  // counting allocator, above what the heap held before loading
  uint64_t peak_rss_bytes = 0;   // VmHWM; 0 where /proc is unavailable
  double ms = 0;                 // loading, folding and writing
};

nlohmann::json fold_json(const FoldRun& r);
std::string fold_text(const FoldRun& r);

}  // namespace footprint::report
