#pragma once
// What `analyze`, `plan` and `report` share for a model: parse --dim / --inputs / --order, load,
// and build the analysis::ModelProgram (the same one the Python package builds).
#include <string>
#include <utility>
#include <vector>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/model_program.hpp"
#include "footprint/core/user_files.hpp"

namespace footprint::cli {

struct ModelArgs {
  std::string path;
  std::vector<std::string> dims;    // "N=8"
  std::vector<std::string> shapes;  // "audio=1x16000"
  std::string data_dir;             // its input_*.pb give inputs their extents
  std::string inputs = "caller";    // caller | donated
  std::string order = "stored";     // stored | memory
  // Plans each branch's arena, as `footprint run --planner` runs it.
  std::string planner = "auto";
  bool fuse = true;  // graph::fuse, as `footprint run` fuses unless given --no-fuse
  // graph::carry_float32, as `footprint run` carries unless given --keep-16bit
  bool carry_float32 = true;
};

using analysis::ModelProgram;

// Appended to the --dim / --sweep help of every command that binds dims (graph::rebatch_if_bound).
inline constexpr const char* kRebatchHelp =
    "; binding batch on a model stored with a fixed batch (inputs [1,...]) re-batches it";

// "N=8" -> ("N", 8); malformed text is a usage error naming the flag.
std::pair<std::string, std::string> split_binding(const std::string& text, const char* flag);
int64_t parse_dim_value(const std::string& text, const char* flag);
// "audio=1x16000" -> ("audio", {1, 16000}); a usage error naming --shape otherwise.
std::pair<std::string, std::vector<int64_t>> parse_shape(const std::string& text);
inline constexpr const char* kDataDirHelp =
    "Give the inputs the extents of DIR's input_0.pb, input_1.pb, ... (what `run --data-dir` "
    "feeds the model): by the tensor's name, or unnamed ones in the model's input order";
inline constexpr const char* kShapeHelp =
    "Give an input its extents: --shape NAME=1x16000 (repeatable); what binds an input whose "
    "dims have no name, and its named dims for every other input";
analysis::InputsPolicy policy_of(const std::string& s);
inline constexpr const char* kNoFuseHelp =
    "Keep every activation a node of its own: by default Relu, Clip, Sigmoid, SiLU (Sigmoid "
    "then Mul), HardSwish, ... after a Conv, MatMul or Gemm are folded into it (graph::fuse), "
    "and analyze, plan, report and run all see that fused graph";

inline constexpr const char* kKeep16bitHelp =
    "Keep every float16/bfloat16 activation in its own type: by default those passed between "
    "kernels that compute in float32 anyway (convolutions, products, the adds between them) are "
    "stored as float32 holding the same 16-bit values (graph::carry_float32: twice their bytes, "
    "no conversion scratch, no conversions), and analyze, plan, report and run all see that";

ModelProgram load_model_program(const ModelArgs& args);

// The files a command on `model` reads, for refuse_overwriting: the model (or trace, or
// buffer list) and, with --data-dir, its input_*.pb and output_*.pb.
std::vector<InputFile> files_read(const std::string& model, const std::string& data_dir);

}  // namespace footprint::cli
