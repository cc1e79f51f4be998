#pragma once
// `footprint info` output: the JSON contract of DESIGN.md and a human-readable table.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "footprint/analysis/model_summary.hpp"
#include "footprint/graph/carry_float32.hpp"
#include "footprint/runtime/process_memory.hpp"

namespace footprint::report {

nlohmann::json to_json(const analysis::ModelSummary& s);
std::string to_text(const analysis::ModelSummary& s);

// What loading the model cost, as `info` prints it after the summary.
struct LoadFigures {
  std::string source = "mmap";  // how the bytes were obtained: "mmap" or "read"
  double ms = 0;                // reading, parsing and checking the graph
  // Counting allocator, above what the heap held before; absent when the process lacks it.
  std::optional<uint64_t> heap_peak_bytes;
  std::optional<uint64_t> heap_retained_bytes;
  std::optional<runtime::ProcessMemory> process;  // absent where /proc is unavailable
};

// The summary with a "load" object beside it, and the text with a "loaded in" line.
nlohmann::json to_json(const analysis::ModelSummary& s, const LoadFigures& load);
std::string to_text(const analysis::ModelSummary& s, const LoadFigures& load);

// "1.5 MiB", "312 B": a byte count for people.
std::string human_bytes(uint64_t bytes);

// The "fused" line of `analyze` and `run`: the activations graph::fuse folded into the node
// before them and the patterns it ran as one op each (graph::FuseReport's lines).
std::string fused_line(const std::vector<std::string>& activations,
                       const std::vector<std::string>& patterns);
// The "layout" line of `analyze` and `run`: `nodes` run channels-last, with `changes` layout
// changes between them and the plain tensors (graph::to_channels_last; no newline).
std::string layout_line(size_t nodes, size_t changes);
// The 16-bit activations stored as float32 carriers (graph::carry_float32; no newline), and the
// same as JSON: {"values", "extra_bytes", "rounds_to"}.
std::string carried_line(const graph::CarryReport& r);
nlohmann::json carried_json(const graph::CarryReport& r);

}  // namespace footprint::report
