// LSTM, GRU and RNN kernels run directly, one node at a time, through a minimal KernelContext:
// against the ONNX backend test data, and against a plain reference implementation written here
// for the attributes the backend data does not cover (directions, layouts, sequence lengths,
// clip, input_forget, activations, omitted outputs). Every run gets exactly the workspace the
// op's WorkspaceFn asks for, guarded against overruns, and must not touch the heap.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/kernel.hpp"
#include "footprint/graph/node_runner.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/onnx/tensor_file.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "graph/infer_builder.hpp"

namespace footprint::testing {
namespace {

// ---- Running one node

struct HostTensor {
  DType dtype = DType::float32;
  std::vector<int64_t> dims;
  std::vector<std::byte> data;

  size_t numel() const {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    return n;
  }
  std::vector<float> floats() const {
    std::vector<float> out(data.size() / sizeof(float));
    std::memcpy(out.data(), data.data(), out.size() * sizeof(float));
    return out;
  }
  static HostTensor of(std::vector<int64_t> dims, const std::vector<float>& v) {
    HostTensor t{DType::float32, std::move(dims), {}};
    t.data.resize(v.size() * sizeof(float));
    std::memcpy(t.data.data(), v.data(), t.data.size());
    return t;
  }
  static HostTensor of_int32(std::vector<int64_t> dims, const std::vector<int32_t>& v) {
    HostTensor t{DType::int32, std::move(dims), {}};
    t.data.resize(v.size() * sizeof(int32_t));
    std::memcpy(t.data.data(), v.data(), t.data.size());
    return t;
  }
};

struct NodeResult {
  std::map<std::string, HostTensor> outputs;  // by value name
  uint64_t workspace_bytes = 0;
  uint64_t first_heap_allocations = 0;  // during the first kernel call
  uint64_t heap_allocations = 0;        // during the second
};

constexpr std::byte kGuard{0xA5};
constexpr size_t kGuardBytes = 256;

std::vector<int64_t> concrete_dims(const graph::Value& v) {
  std::vector<int64_t> dims;
  for (const Dim& d : v.shape.dims) {
    const auto known = d.value();
    if (!known) throw Error("value '" + v.name + "' has an unknown extent");
    dims.push_back(*known);
  }
  return dims;
}

// Runs the model's only node with `feeds` (by graph input name) through the runtime registry's
// kernel, with the workspace its WorkspaceFn gives. `packed`: prepared first with every input
// known, as constant weights are, so the kernel runs on W and R packed by its PrepareFn.
NodeResult run_node(const onnx::Model& model, const std::map<std::string, HostTensor>& feeds,
                    int threads = 1, bool packed = false) {
  graph::Graph g = graph::Graph::from_onnx(model, runtime::op_registry());
  graph::infer_shapes(g);
  if (g.nodes().size() != 1) throw Error("expected one node");
  const graph::Node& node = g.node(0);
  if (node.schema == nullptr || node.schema->kernel == nullptr) throw Error("no kernel");

  graph::NodeContext ctx(node, 0, model.opset_version(""));
  ctx.thread_count = threads;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == graph::kNoValue) {
      ctx.add_input(nullptr);
      continue;
    }
    const HostTensor& t = feeds.at(g.value(node.inputs[i]).name);
    const graph::TensorRef ref{t.dtype, t.dims, const_cast<std::byte*>(t.data.data())};
    ctx.add_input(&ref);
  }

  NodeResult r;
  std::vector<HostTensor> out_store(node.outputs.size());
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == graph::kNoValue) {
      ctx.add_output(nullptr);
      continue;
    }
    const graph::Value& v = g.value(node.outputs[i]);
    HostTensor& t = out_store[i];
    t.dtype = v.dtype;
    t.dims = concrete_dims(v);
    t.data.resize(t.numel() * sizeof(float));
    const graph::TensorRef ref{t.dtype, t.dims, t.data.data()};
    ctx.add_output(&ref);
  }

  r.workspace_bytes = graph::workspace_bytes(ctx);
  std::vector<std::byte> workspace(r.workspace_bytes + kGuardBytes, kGuard);
  // Garbage in the scratch: the kernel must not read what it has not written.
  std::fill(workspace.begin(), workspace.begin() + static_cast<ptrdiff_t>(r.workspace_bytes),
            std::byte{0xFF});
  ctx.scratch = std::span(workspace).first(r.workspace_bytes);
  std::unique_ptr<graph::KernelState> state;
  if (packed) {
    state = graph::prepare(ctx);
    if (state == nullptr || state->owned_bytes() == 0) {
      throw Error("constant W and R were not packed");
    }
    ctx.kernel_state = state.get();
  }

  // Twice: the first call may start OpenMP's thread team (threads > 1), which allocates once
  // per process; the second must allocate nothing and, from NaN outputs again, give the same.
  for (int call = 0; call < 2; ++call) {
    for (size_t i = 0; i < out_store.size(); ++i) {
      if (!ctx.present_outputs[i]) continue;
      const std::vector<float> nan(out_store[i].numel(), std::nanf(""));
      std::memcpy(out_store[i].data.data(), nan.data(), nan.size() * sizeof(float));
    }
    const auto before = heap::snapshot().allocations;
    graph::run(ctx);
    (call == 0 ? r.first_heap_allocations : r.heap_allocations) =
        heap::snapshot().allocations - before;
  }

  for (size_t i = r.workspace_bytes; i < workspace.size(); ++i) {
    if (workspace[i] != kGuard) throw Error("the kernel wrote past its workspace");
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == graph::kNoValue) continue;
    r.outputs[g.value(node.outputs[i]).name] = std::move(out_store[i]);
  }
  return r;
}

// |got - want| <= atol + rtol * |want| for every element (NaN never matches).
void expect_close(const std::vector<float>& got, const std::vector<float>& want,
                  const std::string& what, double rtol = 1e-3, double atol = 1e-5) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(got[i]) - want[i]);
    ASSERT_TRUE(diff <= atol + rtol * std::fabs(want[i]))
        << what << "[" << i << "]: got " << got[i] << ", want " << want[i];
  }
}

// ---- The ONNX backend test data

const std::filesystem::path kBackendData = FOOTPRINT_ONNX_TESTDATA "/node";

HostTensor read_pb(const std::filesystem::path& path) {
  const auto file = onnx::TensorFile::load_file(path);
  const onnx::TensorProto& t = file.tensor();
  HostTensor h;
  h.dtype = onnx::tensor_dtype(t);
  for (size_t i = 0; i < t.dims.count; ++i) h.dims.push_back(static_cast<int64_t>(t.dims[i]));
  const onnx::TensorBytes bytes = onnx::tensor_bytes(t);
  h.data.assign(bytes.bytes().begin(), bytes.bytes().end());
  return h;
}

class BackendCase : public ::testing::TestWithParam<std::string> {};

TEST_P(BackendCase, MatchesExpectedOutputs) {
  const std::filesystem::path dir = kBackendData / GetParam();
  if (!std::filesystem::exists(dir / "model.onnx")) GTEST_SKIP() << dir << " is not installed";
  const onnx::Model model = onnx::load_file(dir / "model.onnx");
  const graph::Graph g = graph::Graph::from_onnx(model, graph::OpRegistry::builtin());
  std::map<std::string, HostTensor> feeds;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const auto pb = dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb");
    feeds[g.value(g.inputs()[i]).name] = read_pb(pb);
  }
  const NodeResult r = run_node(model, feeds);
  EXPECT_EQ(r.first_heap_allocations, 0u);
  EXPECT_EQ(r.heap_allocations, 0u);
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const std::string name = g.value(g.outputs()[i]).name;
    const auto pb = dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb");
    const HostTensor want = read_pb(pb);
    ASSERT_TRUE(r.outputs.contains(name)) << name;
    EXPECT_EQ(r.outputs.at(name).dims, want.dims) << name;
    expect_close(r.outputs.at(name).floats(), want.floats(), name, 1e-3, 1e-7);
  }
}

INSTANTIATE_TEST_SUITE_P(Recurrent, BackendCase,
                         ::testing::Values("test_lstm_batchwise", "test_lstm_defaults",
                                           "test_lstm_with_initial_bias",
                                           "test_lstm_with_peepholes", "test_gru_batchwise",
                                           "test_gru_defaults", "test_gru_seq_length",
                                           "test_gru_with_initial_bias", "test_rnn_seq_length",
                                           "test_simple_rnn_batchwise", "test_simple_rnn_defaults",
                                           "test_simple_rnn_with_initial_bias"));

// ---- A reference implementation, written for clarity: one entry, one step, one gate at a time

enum class Cell { lstm, gru, rnn };

int gates_of(Cell c) {
  return c == Cell::lstm ? 4 : c == Cell::gru ? 3 : 1;
}

struct Act {
  std::string name;
  float alpha = 0;
  float beta = 0;
  double operator()(double x) const {
    if (name == "Sigmoid") return 1 / (1 + std::exp(-x));
    if (name == "Tanh") return std::tanh(x);
    if (name == "Relu") return std::max(x, 0.0);
    if (name == "LeakyRelu") return x >= 0 ? x : alpha * x;
    if (name == "HardSigmoid") return std::clamp(alpha * x + beta, 0.0, 1.0);
    if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
    if (name == "Softsign") return x / (1 + std::fabs(x));
    throw Error("reference lacks " + name);
  }
};

struct Spec {
  Cell cell = Cell::lstm;
  std::string direction = "forward";
  int layout = 0;
  int64_t seq = 3, batch = 2, input = 3, hidden = 4;
  bool bias = false, lens = false, init_h = false, init_c = false, peep = false;
  float clip = 0;  // 0: none
  bool input_forget = false;
  bool linear_before_reset = false;
  bool hidden_attr = true;
  bool y = true, y_h = true, y_c = true;
  std::vector<Act> acts;  // empty: defaults; per direction list (repeated for both when short)
  std::vector<int32_t> lengths;
  int threads = 1;

  int64_t dirs() const { return direction == "bidirectional" ? 2 : 1; }
  std::string op() const { return cell == Cell::lstm ? "LSTM" : cell == Cell::gru ? "GRU" : "RNN"; }
  std::vector<int64_t> x_dims() const {
    return layout ? std::vector<int64_t>{batch, seq, input} : std::vector{seq, batch, input};
  }
  std::vector<int64_t> state_dims() const {
    return layout ? std::vector<int64_t>{batch, dirs(), hidden}
                  : std::vector<int64_t>{dirs(), batch, hidden};
  }
  std::vector<int64_t> y_dims() const {
    return layout ? std::vector<int64_t>{batch, seq, dirs(), hidden}
                  : std::vector<int64_t>{seq, dirs(), batch, hidden};
  }
  Act act(int64_t d, int k) const {
    static const char* defaults[3][3] = {
        {"Sigmoid", "Tanh", "Tanh"}, {"Sigmoid", "Tanh", ""}, {"Tanh", "", ""}};
    if (acts.empty()) return {defaults[static_cast<int>(cell)][k]};
    const size_t per = cell == Cell::lstm ? 3 : cell == Cell::gru ? 2 : 1;
    return acts[(static_cast<size_t>(d) * per + static_cast<size_t>(k)) % acts.size()];
  }
};

struct Data {
  HostTensor x, w, r, b, lens, h0, c0, p;
};

std::vector<float> random_floats(std::mt19937& rng, size_t n, float scale = 1.f) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

Data make_data(const Spec& s, unsigned seed) {
  std::mt19937 rng(seed);
  const int64_t gh = gates_of(s.cell) * s.hidden;
  const int64_t states = s.dirs() * s.batch * s.hidden;
  Data d;
  d.x = HostTensor::of(s.x_dims(), random_floats(rng, s.seq * s.batch * s.input));
  d.w = HostTensor::of({s.dirs(), gh, s.input}, random_floats(rng, s.dirs() * gh * s.input, 0.6f));
  d.r =
      HostTensor::of({s.dirs(), gh, s.hidden}, random_floats(rng, s.dirs() * gh * s.hidden, 0.6f));
  d.b = HostTensor::of({s.dirs(), 2 * gh}, random_floats(rng, s.dirs() * 2 * gh, 0.5f));
  std::vector<int32_t> lengths = s.lengths;
  if (lengths.empty()) lengths.assign(s.batch, static_cast<int32_t>(s.seq));
  d.lens = HostTensor::of_int32({s.batch}, lengths);
  d.h0 = HostTensor::of(s.state_dims(), random_floats(rng, states));
  d.c0 = HostTensor::of(s.state_dims(), random_floats(rng, states));
  d.p = HostTensor::of({s.dirs(), 3 * s.hidden}, random_floats(rng, s.dirs() * 3 * s.hidden, 0.5f));
  return d;
}

struct Expected {
  std::vector<float> y, y_h, y_c;
};

// The reference: each direction, entry and step on its own, in double.
Expected reference(const Spec& s, const Data& d) {
  const int64_t H = s.hidden, I = s.input, D = s.dirs(), B = s.batch, S = s.seq;
  const int64_t G = gates_of(s.cell);
  const auto x = d.x.floats(), w = d.w.floats(), r = d.r.floats(), bias = d.b.floats();
  const auto h0 = d.h0.floats(), c0 = d.c0.floats(), p = d.p.floats();
  const auto* lens = reinterpret_cast<const int32_t*>(d.lens.data.data());
  Expected e;
  e.y.assign(S * D * B * H, 0.f);
  e.y_h.assign(D * B * H, 0.f);
  e.y_c.assign(D * B * H, 0.f);
  auto xi = [&](int64_t t, int64_t b) { return s.layout ? (b * S + t) * I : (t * B + b) * I; };
  auto yi = [&](int64_t t, int64_t dd, int64_t b) {
    return s.layout ? ((b * S + t) * D + dd) * H : ((t * D + dd) * B + b) * H;
  };
  auto si = [&](int64_t dd, int64_t b) { return s.layout ? (b * D + dd) * H : (dd * B + b) * H; };
  auto clip = [&](double v) { return s.clip > 0 ? std::clamp<double>(v, -s.clip, s.clip) : v; };
  for (int64_t dd = 0; dd < D; ++dd) {
    const bool reverse = s.direction == "reverse" || dd == 1;
    const Act f = s.act(dd, 0), g = s.cell == Cell::rnn ? Act{} : s.act(dd, 1);
    const Act h_act = s.cell == Cell::lstm ? s.act(dd, 2) : Act{};
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = s.lens ? lens[b] : S;
      std::vector<double> h(H, 0.0), c(H, 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (s.init_h) h[j] = h0[si(dd, b) + j];
        if (s.init_c) c[j] = c0[si(dd, b) + j];
      }
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        // xw[k][j] = x.W_kj + Wb_kj, hr[k][j] = h.R_kj + Rb_kj
        std::vector<std::vector<double>> xw(G, std::vector<double>(H)), hr = xw;
        for (int64_t k = 0; k < G; ++k) {
          for (int64_t j = 0; j < H; ++j) {
            const int64_t row = dd * G * H + k * H + j;
            double a = s.bias ? bias[dd * 2 * G * H + k * H + j] : 0.0;
            for (int64_t q = 0; q < I; ++q) a += double{x[xi(t, b) + q]} * w[row * I + q];
            xw[k][j] = a;
            double rr = s.bias ? bias[dd * 2 * G * H + G * H + k * H + j] : 0.0;
            for (int64_t q = 0; q < H; ++q) rr += h[q] * r[row * H + q];
            hr[k][j] = rr;
          }
        }
        std::vector<double> nh(H);
        if (s.cell == Cell::lstm) {
          const double* pp = nullptr;
          std::vector<double> pv(3 * H, 0.0);
          if (s.peep) {
            for (int64_t j = 0; j < 3 * H; ++j) pv[j] = p[dd * 3 * H + j];
          }
          pp = pv.data();
          for (int64_t j = 0; j < H; ++j) {
            const double i_g = f(clip(xw[0][j] + hr[0][j] + pp[j] * c[j]));
            const double f_g =
                s.input_forget ? 1 - i_g : f(clip(xw[2][j] + hr[2][j] + pp[2 * H + j] * c[j]));
            const double c_g = g(clip(xw[3][j] + hr[3][j]));
            c[j] = f_g * c[j] + i_g * c_g;
            const double o_g = f(clip(xw[1][j] + hr[1][j] + pp[H + j] * c[j]));
            nh[j] = o_g * h_act(c[j]);
          }
        } else if (s.cell == Cell::gru) {
          std::vector<double> z(H), rg(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = f(clip(xw[0][j] + hr[0][j]));
            rg[j] = f(clip(xw[1][j] + hr[1][j]));
          }
          for (int64_t j = 0; j < H; ++j) {
            double cand = 0;
            const int64_t row = dd * G * H + 2 * H + j;
            const double rbh = s.bias ? bias[dd * 2 * G * H + G * H + 2 * H + j] : 0.0;
            if (s.linear_before_reset) {
              cand = xw[2][j] + rg[j] * hr[2][j];
            } else {
              double acc = rbh;
              for (int64_t q = 0; q < H; ++q) acc += rg[q] * h[q] * r[row * H + q];
              cand = xw[2][j] + acc;
            }
            const double hh = g(clip(cand));
            nh[j] = (1 - z[j]) * hh + z[j] * h[j];
          }
        } else {
          for (int64_t j = 0; j < H; ++j) nh[j] = f(clip(xw[0][j] + hr[0][j]));
        }
        h = nh;
        for (int64_t j = 0; j < H; ++j) e.y[yi(t, dd, b) + j] = static_cast<float>(h[j]);
      }
      for (int64_t j = 0; j < H; ++j) {
        e.y_h[si(dd, b) + j] = static_cast<float>(h[j]);
        e.y_c[si(dd, b) + j] = static_cast<float>(c[j]);
      }
    }
  }
  return e;
}

// A model of one node as the spec describes it: every tensor input is a graph input.
std::unique_ptr<Inferred> build_model(const Spec& s) {
  OneNode m;
  const int64_t gh = gates_of(s.cell) * s.hidden;
  auto dims = [](const std::vector<int64_t>& v) {
    std::vector<DimSpec> out;
    out.reserve(v.size());
    for (int64_t x : v) out.emplace_back(static_cast<int>(x));
    return out;
  };
  m.input("X", DType::float32, dims(s.x_dims()));
  m.input("W", DType::float32, dims({s.dirs(), gh, s.input}));
  m.input("R", DType::float32, dims({s.dirs(), gh, s.hidden}));
  std::vector<std::string_view> inputs = {"X", "W", "R", "", "", "", "", ""};
  if (s.bias) {
    m.input("B", DType::float32, dims({s.dirs(), 2 * gh}));
    inputs[3] = "B";
  }
  if (s.lens) {
    m.input("L", DType::int32, dims({s.batch}));
    inputs[4] = "L";
  }
  if (s.init_h) {
    m.input("H0", DType::float32, dims(s.state_dims()));
    inputs[5] = "H0";
  }
  if (s.cell == Cell::lstm && s.init_c) {
    m.input("C0", DType::float32, dims(s.state_dims()));
    inputs[6] = "C0";
  }
  if (s.cell == Cell::lstm && s.peep) {
    m.input("P", DType::float32, dims({s.dirs(), 3 * s.hidden}));
    inputs[7] = "P";
  }
  const size_t max_inputs = s.cell == Cell::lstm ? 8 : 6;
  inputs.resize(max_inputs);
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();

  std::vector<std::string_view> outputs = {s.y ? "Y" : "", s.y_h ? "Y_h" : "",
                                           s.cell == Cell::lstm && s.y_c ? "Y_c" : ""};
  while (!outputs.empty() && outputs.back().empty()) outputs.pop_back();
  for (std::string_view o : outputs) {
    if (!o.empty()) m.output(o);
  }

  std::vector<Wire> attrs;
  if (s.hidden_attr) attrs.push_back(attr("hidden_size", s.hidden));
  if (s.direction != "forward") attrs.push_back(attr("direction", std::string_view(s.direction)));
  if (s.layout) attrs.push_back(attr("layout", int64_t{1}));
  if (s.clip > 0) attrs.push_back(attr_float("clip", s.clip));
  if (s.input_forget) attrs.push_back(attr("input_forget", int64_t{1}));
  if (s.linear_before_reset) attrs.push_back(attr("linear_before_reset", int64_t{1}));
  if (!s.acts.empty()) {
    Wire names;
    names.str(1, "activations");
    std::vector<float> alphas, betas;
    for (const Act& a : s.acts) {
      names.str(9, a.name);
      if (a.name == "LeakyRelu") alphas.push_back(a.alpha);
      if (a.name == "HardSigmoid" || a.name == "ScaledTanh") {
        alphas.push_back(a.alpha);
        betas.push_back(a.beta);
      }
    }
    attrs.push_back(names.int_field(20, 8));
    if (!alphas.empty()) attrs.push_back(attr_floats("activation_alpha", alphas));
    if (!betas.empty()) attrs.push_back(attr_floats("activation_beta", betas));
  }
  m.node(node_with(s.op(), inputs, outputs, attrs, "rec"));
  return infer(m.graph, 14);
}

NodeResult run_spec(const Spec& s, const Data& d, bool packed) {
  const auto built = build_model(s);
  std::map<std::string, HostTensor> feeds = {{"X", d.x}, {"W", d.w}, {"R", d.r}};
  if (s.bias) feeds["B"] = d.b;
  if (s.lens) feeds["L"] = d.lens;
  if (s.init_h) feeds["H0"] = d.h0;
  if (s.init_c) feeds["C0"] = d.c0;
  if (s.peep) feeds["P"] = d.p;
  return run_node(built->model, feeds, s.threads, packed);
}

// Bytes the workspace must have: every time step's input projection (one direction at a time),
// gates for the batch, GRU's extra product, and the states the node has no output for.
uint64_t expected_workspace(const Spec& s) {
  const uint64_t bh = static_cast<uint64_t>(s.batch * s.hidden);
  uint64_t n = bh * static_cast<uint64_t>(gates_of(s.cell)) * static_cast<uint64_t>(s.seq + 1);
  if (s.cell == Cell::gru) n += bh;
  if (!s.y_h) n += bh;
  if (s.cell == Cell::lstm && !s.y_c) n += bh;
  return n * sizeof(float);
}

void check_spec_as(const Spec& s, const Data& d, const Expected& e, bool packed) {
  SCOPED_TRACE(packed ? "W and R packed when preparing" : "W and R as stored");
  const NodeResult r = run_spec(s, d, packed);
  if (s.threads == 1) {
    EXPECT_EQ(r.first_heap_allocations, 0u);
  }
  EXPECT_EQ(r.heap_allocations, 0u);
  EXPECT_EQ(r.workspace_bytes, expected_workspace(s));
  if (s.y) {
    ASSERT_TRUE(r.outputs.contains("Y"));
    EXPECT_EQ(r.outputs.at("Y").dims, s.y_dims());
    expect_close(r.outputs.at("Y").floats(), e.y, "Y");
  }
  if (s.y_h) {
    ASSERT_TRUE(r.outputs.contains("Y_h"));
    EXPECT_EQ(r.outputs.at("Y_h").dims, s.state_dims());
    expect_close(r.outputs.at("Y_h").floats(), e.y_h, "Y_h");
  }
  if (s.cell == Cell::lstm && s.y_c) {
    ASSERT_TRUE(r.outputs.contains("Y_c"));
    expect_close(r.outputs.at("Y_c").floats(), e.y_c, "Y_c");
  }
}

void check_spec(const Spec& s, unsigned seed = 1) {
  const Data d = make_data(s, seed);
  const Expected e = reference(s, d);
  for (bool packed : {false, true}) check_spec_as(s, d, e, packed);
}

Spec full(Cell cell) {
  Spec s;
  s.cell = cell;
  s.bias = s.init_h = s.init_c = true;
  s.peep = cell == Cell::lstm;
  return s;
}

// ---- LSTM

TEST(LstmKernel, Defaults) {
  Spec s;
  check_spec(s);
}

TEST(LstmKernel, AllInputsForward) {
  check_spec(full(Cell::lstm));
}

TEST(LstmKernel, Reverse) {
  Spec s = full(Cell::lstm);
  s.direction = "reverse";
  check_spec(s);
}

TEST(LstmKernel, Bidirectional) {
  Spec s = full(Cell::lstm);
  s.direction = "bidirectional";
  check_spec(s);
}

TEST(LstmKernel, BidirectionalBatchFirst) {
  Spec s = full(Cell::lstm);
  s.direction = "bidirectional";
  s.layout = 1;
  s.batch = 3;
  check_spec(s);
}

TEST(LstmKernel, SequenceLengthsBothDirections) {
  Spec s = full(Cell::lstm);
  s.direction = "bidirectional";
  s.seq = 5;
  s.batch = 4;
  s.lens = true;
  s.lengths = {5, 2, 0, 3};
  check_spec(s);
  s.layout = 1;
  check_spec(s, 2);
}

TEST(LstmKernel, ClipAndInputForget) {
  Spec s = full(Cell::lstm);
  s.clip = 0.4f;
  s.input_forget = true;
  check_spec(s);
}

TEST(LstmKernel, ActivationsWithParameters) {
  Spec s = full(Cell::lstm);
  s.direction = "bidirectional";
  s.acts = {{"HardSigmoid", 0.3f, 0.4f}, {"Relu"},    {"ScaledTanh", 0.8f, 1.5f}, {"Sigmoid"},
            {"LeakyRelu", 0.1f},         {"Softsign"}};
  check_spec(s);
}

TEST(LstmKernel, OneActivationListServesBothDirections) {
  Spec s = full(Cell::lstm);
  s.direction = "bidirectional";
  s.acts = {{"Sigmoid"}, {"Relu"}, {"Tanh"}};
  check_spec(s);
}

TEST(LstmKernel, OutputsOmitted) {
  for (int mask = 1; mask < 8; ++mask) {
    Spec s = full(Cell::lstm);
    s.direction = "bidirectional";
    s.y = mask & 1;
    s.y_h = mask & 2;
    s.y_c = mask & 4;
    SCOPED_TRACE(mask);
    check_spec(s);
  }
}

TEST(LstmKernel, HiddenSizeFromR) {
  Spec s = full(Cell::lstm);
  s.hidden_attr = false;
  check_spec(s);
}

TEST(LstmKernel, LargerBatchWithThreads) {
  // Enough rows for the four-row matmul blocks plus a remainder, and threads that split columns.
  Spec s = full(Cell::lstm);
  s.direction = "bidirectional";
  s.batch = 7;
  s.input = 64;
  s.hidden = 256;
  s.seq = 4;
  s.threads = 2;
  check_spec(s);
}

// ---- GRU and RNN

TEST(GruKernel, WholeBlocksTailsAndLengthsInTheProjection) {
  // 60 gate columns: whole vector blocks and a tail; 5 rows: a four-row block and one more; the
  // reverse direction reads each entry's projected rows from its own length down.
  for (bool linear : {false, true}) {
    Spec s = full(Cell::gru);
    s.direction = "bidirectional";
    s.batch = 5;
    s.input = 9;
    s.hidden = 20;
    s.seq = 6;
    s.lens = true;
    s.lengths = {6, 3, 0, 5, 1};
    s.linear_before_reset = linear;
    check_spec(s);
  }
}

TEST(GruKernel, AllInputsBothResetModes) {
  for (bool lbr : {false, true}) {
    Spec s = full(Cell::gru);
    s.linear_before_reset = lbr;
    s.direction = "bidirectional";
    SCOPED_TRACE(lbr);
    check_spec(s);
  }
}

TEST(GruKernel, LayoutLengthsClip) {
  Spec s = full(Cell::gru);
  s.direction = "reverse";
  s.layout = 1;
  s.seq = 4;
  s.batch = 3;
  s.lens = true;
  s.lengths = {1, 4, 2};
  s.clip = 0.5f;
  s.linear_before_reset = true;
  check_spec(s);
}

TEST(GruKernel, OnlyYAndActivations) {
  Spec s;
  s.cell = Cell::gru;
  s.y_h = false;
  s.acts = {{"HardSigmoid", 0.25f, 0.5f}, {"Relu"}};
  check_spec(s);
}

TEST(RnnKernel, DirectionsAndLayouts) {
  for (const char* dir : {"forward", "reverse", "bidirectional"}) {
    for (int layout : {0, 1}) {
      Spec s = full(Cell::rnn);
      s.direction = dir;
      s.layout = layout;
      s.lens = true;
      s.lengths = {3, 1};
      SCOPED_TRACE(std::string(dir) + " layout " + std::to_string(layout));
      check_spec(s);
    }
  }
}

TEST(RnnKernel, ReluNoOutputsButYh) {
  Spec s;
  s.cell = Cell::rnn;
  s.y = false;
  s.acts = {{"Relu"}};
  check_spec(s);
}

// ---- Failures

TEST(RecurrentKernel, RejectsBadSequenceLength) {
  Spec s = full(Cell::lstm);
  s.lens = true;
  s.lengths = {1, 7};
  const Data d = make_data(s, 3);
  try {
    run_spec(s, d, false);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sequence_lens[1] = 7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'rec' (LSTM)"), std::string::npos) << e.what();
  }
}

TEST(RecurrentKernel, RejectsUnknownActivation) {
  Spec s;
  s.cell = Cell::rnn;
  s.acts = {{"Mystery"}};
  const Data d = make_data(s, 3);
  EXPECT_THROW(run_spec(s, d, false), Error);
}

}  // namespace
}  // namespace footprint::testing
