// Writes a large, valid ONNX model for the load benchmarks (bench/load_big_model.sh):
//
//   x: float[N,D] -> L x { MatMul(W_i: float[D,D]) -> Add(b_i: float[D]) -> Relu -> Add(residual) }
//     -> [K x Identity] -> y: float[N,D]
//
// opset 13, ir_version 8, standard ops only, so ONNX Runtime can create a session and run it.
// D is the smallest multiple of 16 with L*D*D*4 >= --mb MiB of weight bytes (12 layers and
// 512 MiB: D = 3360, 45.2 MB per matrix, 542 MB of initializers).
//
// Weights are seeded LCG values (deterministic, never all zero, so every page is real). They
// are generated through one 1 MiB buffer into a scratch file next to the output, which is then
// mapped read-only and unlinked; the model's initializers are views into that mapping and the
// writer streams them into the output. No payload is held twice in memory.
//
//   make_big_model OUT.onnx [--mb 512] [--layers 12] [--extra-nodes 0] [--seed 1]
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "footprint/core/bump_arena.hpp"
#include "footprint/core/dtype.hpp"
#include "footprint/core/error.hpp"
#include "footprint/onnx/model_source.hpp"
#include "footprint/onnx/proto.hpp"
#include "footprint/onnx/tensor_file.hpp"
#include "footprint/onnx/writer.hpp"
#include "footprint/version.hpp"

namespace {

namespace fs = std::filesystem;
namespace onnx = footprint::onnx;
using footprint::BumpArena;
using footprint::DType;
using footprint::Error;
using footprint::UsageError;

struct Options {
  fs::path out;
  uint64_t mb = 512;
  uint64_t layers = 12;
  uint64_t extra_nodes = 0;
  uint32_t seed = 1;
};

uint64_t parse_count(std::string_view flag, const char* text, uint64_t min, uint64_t max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || v < min || v > max) {
    throw UsageError(std::string(flag) + ": expected an integer in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "], got '" + text + "'");
  }
  return v;
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) throw UsageError(std::string(arg) + ": missing value");
      return argv[++i];
    };
    if (arg == "--mb") {
      o.mb = parse_count(arg, value(), 1, 1u << 20);
    } else if (arg == "--layers") {
      o.layers = parse_count(arg, value(), 1, 100000);
    } else if (arg == "--extra-nodes") {
      o.extra_nodes = parse_count(arg, value(), 0, 10000000);
    } else if (arg == "--seed") {
      o.seed = static_cast<uint32_t>(parse_count(arg, value(), 0, UINT32_MAX));
    } else if (arg == "-h" || arg == "--help") {
      std::printf(
          "usage: make_big_model OUT.onnx [--mb MIB] [--layers L] [--extra-nodes K] [--seed S]\n"
          "  --mb           MiB of float32 weights at least (default 512)\n"
          "  --layers       MatMul+Add+Relu+Add blocks, one DxD weight each (default 12)\n"
          "  --extra-nodes  Identity nodes appended after the last block (default 0)\n"
          "  --seed         LCG seed of the weights (default 1)\n");
      std::exit(0);
    } else if (!arg.empty() && arg[0] == '-') {
      throw UsageError("unknown flag " + std::string(arg));
    } else if (o.out.empty()) {
      o.out = arg;
    } else {
      throw UsageError("more than one output path");
    }
  }
  if (o.out.empty()) throw UsageError("usage: make_big_model OUT.onnx [--mb MIB] [--layers L]");
  return o;
}

// Smallest multiple of 16 with layers * d * d * 4 >= mb MiB.
uint64_t hidden_dim(const Options& o) {
  const double want = static_cast<double>(o.mb) * 1048576.0 / 4.0 / static_cast<double>(o.layers);
  auto d = static_cast<uint64_t>(std::ceil(std::sqrt(want) / 16.0)) * 16;
  while (o.layers * d * d * 4 < o.mb * 1048576ull) d += 16;
  return d;
}

// Deterministic floats in [-scale, scale) from a 32-bit LCG, written through one buffer.
class WeightStream {
 public:
  explicit WeightStream(std::FILE* f) : f_(f), buf_(kChunk) {}

  // Appends `count` values; returns the byte offset where they start.
  uint64_t append(uint64_t count, float scale, uint32_t seed) {
    const uint64_t start = offset_;
    uint32_t state = seed * 2654435761u + 12345u;
    while (count > 0) {
      const size_t n = count < kChunk ? static_cast<size_t>(count) : kChunk;
      for (size_t i = 0; i < n; ++i) {
        state = state * 1664525u + 1013904223u;
        buf_[i] = (static_cast<float>(state >> 8) / 16777216.0f * 2.0f - 1.0f) * scale;
      }
      if (std::fwrite(buf_.data(), sizeof(float), n, f_) != n) {
        throw Error("cannot write the scratch weights file");
      }
      offset_ += n * sizeof(float);
      count -= n;
    }
    return start;
  }

 private:
  static constexpr size_t kChunk = size_t{1} << 18;  // 1 MiB of floats
  std::FILE* f_;
  std::vector<float> buf_;
  uint64_t offset_ = 0;
};

onnx::NodeProto make_node(BumpArena& arena, std::string_view op, std::string_view name,
                          std::initializer_list<std::string_view> inputs, std::string_view output) {
  onnx::NodeProto n;
  n.op_type = op;
  n.name = name;
  auto in = arena.make_array<std::string_view>(inputs.size());
  std::copy(inputs.begin(), inputs.end(), in.begin());
  auto out = arena.make_array<std::string_view>(1);
  out[0] = output;
  n.inputs = onnx::array_of(in);
  n.outputs = onnx::array_of(out);
  return n;
}

const onnx::TypeProto* float_nd(BumpArena& arena, uint64_t d) {
  auto* t = arena.make<onnx::TypeProto>();
  t->kind = onnx::TypeProto::Kind::tensor;
  t->elem_type = static_cast<int32_t>(DType::float32);
  t->has_shape = true;
  auto dims = arena.make_array<onnx::DimensionProto>(2);
  dims[0].has_param = true;
  dims[0].param = "N";
  dims[1].has_value = true;
  dims[1].value = static_cast<int64_t>(d);
  t->shape = onnx::array_of(dims);
  return t;
}

int run(const Options& o) {
  const uint64_t d = hidden_dim(o);
  const uint64_t weight_count = d * d;

  // 1. Weights and biases, streamed into a scratch file through one buffer.
  const fs::path scratch = o.out.string() + ".weights.tmp";
  std::vector<uint64_t> w_off(o.layers), b_off(o.layers);
  {
    std::FILE* f = std::fopen(scratch.c_str(), "wb");
    if (f == nullptr) throw Error(scratch.string() + ": cannot create");
    try {
      WeightStream ws(f);
      const float w_scale = 1.0f / std::sqrt(static_cast<float>(d));
      for (uint64_t i = 0; i < o.layers; ++i) {
        w_off[i] = ws.append(weight_count, w_scale, o.seed + static_cast<uint32_t>(2 * i));
        b_off[i] = ws.append(d, 0.05f, o.seed + static_cast<uint32_t>(2 * i + 1));
      }
    } catch (...) {
      std::fclose(f);
      fs::remove(scratch);
      throw;
    }
    if (std::fclose(f) != 0) {
      fs::remove(scratch);
      throw Error(scratch.string() + ": cannot write");
    }
  }
  // 2. Map it read-only and unlink it: the mapping keeps the pages until it is closed.
  onnx::MappedFile weights = onnx::MappedFile::open(scratch);
  fs::remove(scratch);
  const std::span<const std::byte> wbytes = weights.bytes();

  // 3. The model: every initializer is a view into the mapping.
  BumpArena arena;
  auto inits = arena.make_array<onnx::TensorProto>(2 * o.layers);
  const uint64_t node_count = 4 * o.layers + o.extra_nodes;
  auto nodes = arena.make_array<onnx::NodeProto>(node_count);
  const std::vector<int64_t> w_dims{static_cast<int64_t>(d), static_cast<int64_t>(d)};
  const std::vector<int64_t> b_dims{static_cast<int64_t>(d)};
  auto name = [&](const std::string& s) { return arena.copy(s); };

  std::string_view x = "x";
  size_t k = 0;
  for (uint64_t i = 0; i < o.layers; ++i) {
    const std::string p = "layer" + std::to_string(i);
    const std::string_view w = name(p + ".weight");
    const std::string_view b = name(p + ".bias");
    inits[2 * i] = onnx::make_tensor_view(arena, w, DType::float32, w_dims,
                                          wbytes.subspan(w_off[i], weight_count * 4));
    inits[2 * i + 1] =
        onnx::make_tensor_view(arena, b, DType::float32, b_dims, wbytes.subspan(b_off[i], d * 4));
    const std::string_view mm = name(p + ".matmul");
    const std::string_view add = name(p + ".add");
    const std::string_view relu = name(p + ".relu");
    const std::string_view res = name(p + ".residual");
    nodes[k++] = make_node(arena, "MatMul", mm, {x, w}, mm);
    nodes[k++] = make_node(arena, "Add", add, {mm, b}, add);
    nodes[k++] = make_node(arena, "Relu", relu, {add}, relu);
    nodes[k++] = make_node(arena, "Add", res, {relu, x}, res);
    x = res;
  }
  for (uint64_t i = 0; i < o.extra_nodes; ++i) {
    const std::string_view out = name("extra" + std::to_string(i));
    nodes[k++] = make_node(arena, "Identity", out, {x}, out);
    x = out;
  }
  // The last node writes the graph output.
  nodes[k - 1].outputs = [&] {
    auto out = arena.make_array<std::string_view>(1);
    out[0] = "y";
    return onnx::array_of(out);
  }();

  auto inputs = arena.make_array<onnx::ValueInfoProto>(1);
  inputs[0].name = "x";
  inputs[0].type = float_nd(arena, d);
  auto outputs = arena.make_array<onnx::ValueInfoProto>(1);
  outputs[0].name = "y";
  outputs[0].type = float_nd(arena, d);

  onnx::GraphProto graph;
  graph.name = "big_mlp";
  graph.nodes = onnx::array_of(nodes);
  graph.initializers = onnx::array_of(inits);
  graph.inputs = onnx::array_of(inputs);
  graph.outputs = onnx::array_of(outputs);

  auto opsets = arena.make_array<onnx::OperatorSetId>(1);
  opsets[0].version = 13;
  onnx::ModelProto model;
  model.ir_version = 8;
  model.producer_name = "footprint make_big_model";
  model.producer_version = footprint::kVersion;
  model.opset_import = onnx::array_of(opsets);
  model.graph = &graph;

  // 4. Stream it out (temporary name + rename, so no truncated model is left behind).
  onnx::write_model_file(model, o.out);

  const uint64_t file_bytes = fs::file_size(o.out);
  const uint64_t init_bytes = wbytes.size();
  std::printf(
      "wrote %s: file_bytes=%llu initializer_bytes=%llu nodes=%llu initializers=%llu "
      "layers=%llu dim=%llu matrix_bytes=%llu\n",
      o.out.c_str(), static_cast<unsigned long long>(file_bytes),
      static_cast<unsigned long long>(init_bytes), static_cast<unsigned long long>(node_count),
      static_cast<unsigned long long>(2 * o.layers), static_cast<unsigned long long>(o.layers),
      static_cast<unsigned long long>(d), static_cast<unsigned long long>(weight_count * 4));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "make_big_model: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_big_model: error: %s\n", e.what());
    return 1;
  }
}
