// Load micro-benchmarks: parse a model (graph::load_model, then its graph as `footprint info`
// does) from borrowed bytes and from a mapped path, reporting bytes/s and the
// heap the load took (when the counting malloc is linked).
//
//   bench_load                                    # example model + shared densenet121 models
//   FOOTPRINT_BENCH_MODEL=big.onnx bench_load     # adds that model (bench/load_big_model.sh)
//
// Counters per benchmark: file_bytes, nodes, heap_peak_bytes (high-water mark of the heap during
// one load, over what was live before it), heap_retained_bytes (heap still held while the model
// is alive), heap_pct_of_file (peak / file size * 100) and heap_per_node (peak / nodes).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/model.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/onnx/model_source.hpp"
#include "tiny_cnn.hpp"

#ifndef FOOTPRINT_SHARED_MODELS
#define FOOTPRINT_SHARED_MODELS "../shared/models"
#endif

namespace {

namespace fs = std::filesystem;
namespace onnx = footprint::onnx;
namespace heap = footprint::heap;

std::vector<std::byte> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const auto size = static_cast<size_t>(in.tellg());
  std::vector<std::byte> bytes(size);
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    return {};
  return bytes;
}

struct LoadFigures {
  uint64_t heap_peak = 0;
  uint64_t heap_retained = 0;
  uint64_t nodes = 0;
};

// One load as `footprint info` does it: bytes -> onnx tree -> graph IR.
template <class MakeSource>
LoadFigures load_once(MakeSource&& make_source) {
  const heap::Stats before = heap::snapshot();
  heap::reset_peak();
  const footprint::graph::Model model = footprint::graph::load_model(make_source());
  footprint::graph::Graph g = model.graph(footprint::graph::OpRegistry::builtin());
  const heap::Stats after = heap::snapshot();
  benchmark::DoNotOptimize(g);
  return {after.peak_bytes - before.current_bytes, after.current_bytes - before.current_bytes,
          g.nodes().size()};
}

template <class MakeSource>
void run_load(benchmark::State& state, uint64_t file_bytes, MakeSource make_source) {
  LoadFigures f;
  for (auto _ : state) f = load_once(make_source);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(file_bytes));
  state.counters["file_bytes"] = static_cast<double>(file_bytes);
  state.counters["nodes"] = static_cast<double>(f.nodes);
  if (heap::available()) {
    state.counters["heap_peak_bytes"] = static_cast<double>(f.heap_peak);
    state.counters["heap_retained_bytes"] = static_cast<double>(f.heap_retained);
    state.counters["heap_pct_of_file"] =
        file_bytes == 0
            ? 0.0
            : 100.0 * static_cast<double>(f.heap_peak) / static_cast<double>(file_bytes);
    state.counters["heap_per_node"] =
        f.nodes == 0 ? 0.0 : static_cast<double>(f.heap_peak) / static_cast<double>(f.nodes);
  }
}

// Registers "load_borrowed/<label>" (bytes read once, then borrowed by every load) and
// "load_mmap/<label>" (the file mapped by every load). A missing file is skipped with a note.
void register_file(const std::string& label, const fs::path& path, bool big) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    std::fprintf(stderr, "bench_load: skipping %s (%s not found)\n", label.c_str(),
                 path.string().c_str());
    return;
  }
  auto bytes = std::make_shared<std::vector<std::byte>>(read_file(path));
  if (bytes->empty()) {
    std::fprintf(stderr, "bench_load: skipping %s (cannot read %s)\n", label.c_str(),
                 path.string().c_str());
    return;
  }
  const uint64_t size = bytes->size();
  auto* b = benchmark::RegisterBenchmark(
      ("load_borrowed/" + label).c_str(), [bytes, size, label](benchmark::State& state) {
        run_load(state, size, [&] {
          return onnx::ModelSource::borrow(std::span<const std::byte>(*bytes), label);
        });
      });
  auto* m = benchmark::RegisterBenchmark(
      ("load_mmap/" + label).c_str(), [path, size](benchmark::State& state) {
        run_load(state, size, [&] { return onnx::ModelSource::map_file(path); });
      });
  for (auto* r : {b, m}) {
    r->Unit(benchmark::kMicrosecond);
    if (big) r->Iterations(20);
  }
}

void register_all() {
  auto tiny = std::make_shared<std::vector<std::byte>>(footprint::examples::make_tiny_cnn());
  benchmark::RegisterBenchmark("load_borrowed/tiny_cnn", [tiny](benchmark::State& state) {
    run_load(state, tiny->size(), [&] {
      return onnx::ModelSource::borrow(std::span<const std::byte>(*tiny), "tiny_cnn");
    });
  })->Unit(benchmark::kMicrosecond);

  const fs::path shared = FOOTPRINT_SHARED_MODELS;
  register_file("random/densenet121", shared / "random/densenet121/model.onnx", false);
  register_file("light/densenet121", shared / "light/densenet121/model.onnx", false);
  if (const char* big = std::getenv("FOOTPRINT_BENCH_MODEL"); big != nullptr && *big != '\0') {
    register_file("big:" + fs::path(big).filename().string(), big, true);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
