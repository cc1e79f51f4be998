#pragma once
// Reading a memory trace from any framework: the JSON format of docs/TRACE_FORMAT.md.
//
//   MemoryProgram p = read_trace_file("examples/traces/seed_mul_list.json");
//   Timeline t = simulate(p);
#include <filesystem>
#include <string>
#include <string_view>

#include "footprint/analysis/memory_program.hpp"

namespace footprint::analysis {

struct Trace {
  std::string name;
  MemoryProgram program;
};

// Throws footprint::Error "<source>: <json path>: <what>" for malformed traces.
Trace parse_trace(std::string_view json_text, const std::string& source_name);
Trace read_trace_file(const std::filesystem::path& path);

}  // namespace footprint::analysis
