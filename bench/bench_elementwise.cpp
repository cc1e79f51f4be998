// Elementwise runs (footprint::Elementwise, graph::fuse) against the same ops run one node each:
// a Session over a graph of only those ops, fused and not (SessionOptions::fuse), at the
// activation sizes of the models that have them.
//
//   bench_elementwise --benchmark_filter=AddRelu
//
// Each benchmark's name says the run, its extents and fused/apart; counters: bytes_per_second
// over the output's bytes, arena_bytes (what the run obtained).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"

namespace {

namespace graph = footprint::graph;
namespace runtime = footprint::runtime;
using footprint::Dim;
using footprint::DType;
using graph::GraphBuilder;
using graph::Var;

graph::SharedValue filled(std::vector<int64_t> dims, float v) {
  auto value = graph::HostValue::make(DType::float32, std::move(dims));
  for (float& e : value->span<float>()) e = v;
  return value;
}

struct Run {
  std::string name;
  std::vector<int64_t> dims;  // of the activations
  // The ops over inputs x and r (both of `dims`).
  std::function<Var(GraphBuilder&, const Var&, const Var&)> ops;
};

std::vector<Run> runs() {
  return {
      // ResNet's residual: Add then Relu, channels-last [1, 56, 56, 64].
      {"AddRelu",
       {1, 56, 56, 64},
       [](GraphBuilder& b, const Var& x, const Var& r) { return b.relu(b.add(x, r)); }},
      // ConvNeXt's layer scale and residual: x * gamma[C] + r, [1, 56, 56, 96].
      {"MulAdd",
       {1, 56, 56, 96},
       [](GraphBuilder& b, const Var& x, const Var& r) {
         return b.add(r, b.mul(x, b.constant(filled({96}, 0.5F))));
       }},
      // A written-out activation: (x - r) * 0.5 + 1, then Sigmoid, [1, 64, 56, 56].
      {"SubMulAddSigmoid",
       {1, 64, 56, 56},
       [](GraphBuilder& b, const Var& x, const Var& r) {
         const Var half = b.constant(filled({}, 0.5F));
         const Var one = b.constant(filled({}, 1.0F));
         return b.op1("Sigmoid", {b.add(b.mul(b.sub(x, r), half), one)});
       }},
  };
}

void run_session(benchmark::State& state, const Run& run, bool fuse, int threads) {
  GraphBuilder b(runtime::op_registry());
  std::vector<Dim> dims;
  for (const int64_t d : run.dims) dims.push_back(Dim::known(d));
  const Var x = b.input("x", DType::float32, dims);
  const Var r = b.input("r", DType::float32, dims);
  b.output(run.ops(b, x, r), "y");
  const graph::BuiltGraph built = b.to_graph();
  runtime::SessionOptions options;
  options.fuse = fuse;
  options.threads = threads;
  runtime::Session session(*built.model, options);
  std::vector<runtime::Tensor> in;
  for (const char* name : {"x", "r"}) {
    in.emplace_back(name, DType::float32, run.dims);
    float v = 0.25F;
    for (float& e : in.back().ref().span<float>()) e = (v = -v * 1.01F);
  }
  size_t bytes = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark's loop
    const auto out = session.run(in);
    bytes = out.at(0).ref().bytes();
    benchmark::DoNotOptimize(out.at(0).ref().data);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["arena_bytes"] = static_cast<double>(session.last_run().arena_bytes);
}

}  // namespace

int main(int argc, char** argv) {
  for (const Run& run : runs()) {
    for (const int threads : {1, 2}) {
      for (const bool fuse : {true, false}) {
        const std::string name =
            run.name + "/threads:" + std::to_string(threads) + (fuse ? "/fused" : "/apart");
        benchmark::RegisterBenchmark(name.c_str(), [run, fuse, threads](benchmark::State& s) {
          run_session(s, run, fuse, threads);
        })->Unit(benchmark::kMicrosecond);
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
