#include "footprint/bench/model_benchmarks.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>

#include "footprint/graph/graph.hpp"
#include "footprint/graph/model.hpp"
#include "footprint/graph/rebatch.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/random_inputs.hpp"
#include "footprint/runtime/session.hpp"

namespace footprint::bench {
namespace {

namespace fs = std::filesystem;

// The session memo: a prepared session over a shared model, with its inputs.
struct PreparedModel {
  std::shared_ptr<graph::Model> model;  // keeps the model alive while the session uses it
  runtime::Session session;
  std::vector<runtime::Tensor> inputs;
};

std::string model_key(const fs::path& p) {
  return "model:" + p.string();
}

// Independent of the parameters' order: the key names the configuration, sorted by name.
std::string session_key(const Params& p) {
  std::map<std::string, std::string> parts;
  for (const Param& v : p.all())
    if (v.name() != "model") parts[v.name()] = v.represent().value;
  std::string key = "session:" + p.get<ModelRef>("model").path.string();
  for (const auto& [name, value] : parts) key.append("|").append(name).append("=").append(value);
  return key;
}

// The dims --dim can bind on the model: the symbols of its declared input shapes, and
// graph::kBatchDim when binding it re-batches the model (as every session of it then does; the
// note says how, and a model that cannot be re-batched fails here, before anything runs).
std::vector<std::string> bindable_dims(const fs::path& path, const std::vector<DimAxis>& axes,
                                       std::vector<std::string>& notes) {
  const graph::Model model = graph::load_model(path);
  graph::Graph g = model.graph(runtime::op_registry());
  std::vector<std::string> names;
  for (graph::ValueId id : g.inputs())
    for (const Dim& d : g.value(id).shape.dims) d.collect_symbols(names);
  const bool binds_batch = std::any_of(axes.begin(), axes.end(),
                                       [](const DimAxis& a) { return a.name == graph::kBatchDim; });
  if (binds_batch && graph::needs_rebatch(g, graph::kBatchDim)) {
    notes.push_back(path.string() + ": " + graph::rebatch(g, graph::kBatchDim).note());
    names.emplace_back(graph::kBatchDim);
  }
  return names;
}

void define_session_memo(Registry& reg, const std::string& key, const fs::path& model, int threads,
                         const DimBindings& dims, uint64_t seed) {
  reg.memo<PreparedModel>(key, [model, threads, dims, seed](MemoCache& cache) {
    auto m = cache.get_shared<graph::Model>(model_key(model));
    auto pm = std::unique_ptr<PreparedModel>(
        new PreparedModel{m, runtime::Session(*m, {.threads = threads, .dims = dims}), {}});
    pm->inputs = runtime::random_inputs(pm->session.inputs(), dims, seed);
    pm->session.prepare(pm->inputs);
    return pm;
  });
}

// Every (threads, dims...) point of the grid, to define one session memo per point.
void for_each_point(const std::vector<int>& threads, const std::vector<DimAxis>& axes,
                    const std::function<void(int, const DimBindings&)>& f) {
  std::vector<DimBindings> points(1);
  for (const DimAxis& a : axes) {
    std::vector<DimBindings> next;
    for (const DimBindings& p : points)
      for (int64_t v : a.values) {
        DimBindings q = p;
        q[a.name] = v;
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  for (int t : threads)
    for (const DimBindings& p : points) f(t, p);
}

void run_body(State& s) {
  auto& pm = s.memo<PreparedModel>(session_key(s.params()));
  (void)pm.session.run(pm.inputs);
}

void setup_hook(State& s) {
  auto& pm = s.memo<PreparedModel>(session_key(s.params()));
  const auto& prep = pm.session.prepared();
  s.set_predicted_peak_bytes(prep.total_peak_bytes);
  s.set_counter("planned_arena_bytes", static_cast<double>(prep.planned_arena_bytes));
  s.set_counter("weights_bytes", static_cast<double>(prep.weights_bytes));
  s.set_counter("constant_bytes", static_cast<double>(prep.constant_bytes));
}

}  // namespace

std::vector<std::string> add_model_benchmarks(Registry& reg, const ModelBenchOptions& o) {
  std::vector<std::string> notes;
  for (const fs::path& path : o.models) {
    const std::vector<std::string> named = bindable_dims(path, o.dims, notes);
    std::vector<DimAxis> axes;
    for (const DimAxis& a : o.dims) {
      if (std::find(named.begin(), named.end(), a.name) != named.end()) {
        axes.push_back(a);
      } else {
        notes.push_back(path.string() + ": no input dim named " + a.name +
                        " (its shapes are fixed); benchmarked at its own size");
      }
    }
    // A mapped file is not heap: its size is the memo's hint.
    reg.memo<graph::Model>(
        model_key(path),
        [path](MemoCache&) { return std::make_unique<graph::Model>(graph::load_model(path)); },
        fs::file_size(path));
    for_each_point(o.threads, axes, [&](int t, const DimBindings& dims) {
      Params p;
      p.add(Param("model", ModelRef{path}));
      p.add(Param("threads", t));
      for (const auto& [name, v] : dims) p.add(Param(name, v));
      define_session_memo(reg, session_key(p), path, t, dims, o.seed);
    });
    Benchmark& b = reg.add("run/" + path.parent_path().filename().string(), run_body);
    b.parametrize("model", {Param("model", ModelRef{path})});
    std::vector<Param> threads;
    for (int t : o.threads) threads.emplace_back("threads", t);
    b.parametrize("threads", threads);
    for (const DimAxis& a : axes) {
      std::vector<Param> values;
      for (int64_t v : a.values) values.emplace_back(a.name, v);
      b.parametrize(a.name, values);
    }
    b.tags({"model", path.parent_path().filename().string()})
        .setup(setup_hook)
        .uses([](const Params& p) {
          return std::vector<std::string>{model_key(p.get<ModelRef>("model").path), session_key(p)};
        });
  }
  return notes;
}

}  // namespace footprint::bench
