// Cross-checks footprint's shape inference (graph::infer_shapes) against the official ONNX shape
// inference (onnx::shape_inference::InferShapes, Debian libonnx 1.12, with data propagation), over
//
//   - every model.onnx under ../shared/models, and
//   - every ONNX conformance case under /usr/share/libonnx-testdata/data/node/ whose ops (in
//     subgraphs too) are all in footprint's registry, and likewise the backend test's other
//     models (pytorch-converted, pytorch-operator, simple).
//
// Each model is stripped of what would give the answer away (value_info at every depth, the main
// graph's output types), then both sides infer it. For every value the official inference types
// (value_info and outputs, subgraphs included) the dtype is compared, and each dim where the
// official answer is concrete: ours must be the same number (a symbolic or unknown dim where ONNX
// knows the number counts as a mismatch too). ONNX's symbolic dims are not compared: ours may be
// an expression where ONNX invents a fresh name. Mismatches are reported per op (the producer of
// the value) and fail the test, except the few in kAllowed, each with its reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/tensor_file.hpp"
#include "oracle/official_onnx.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
namespace fg = footprint::graph;
namespace ref = ::onnx;

const fs::path kTestData = footprint::testing::kOnnxTestData;

// Known disagreements, matched on the model's label (the case or model folder) and the op that
// produced the value. Each says why the official answer is not the one to follow.
struct Allowed {
  std::string_view model;
  std::string_view op;
  std::string_view reason;
};
constexpr std::string_view kBfloat16AsUint16 =
    "the model (and the official inference) says bfloat16; the 1.12 test data stores the "
    "expected bfloat16 bits as a uint16 tensor";
constexpr std::string_view kStftOnesided =
    "ONNX 1.12's STFT inference ignores onesided (default 1): it says 16 bins for a 16-sample "
    "frame, the expected output has 16/2+1 = 9";
constexpr Allowed kAllowed[] = {
    {"test_stft", "STFT", kStftOnesided},
    {"test_stft_with_window", "STFT", kStftOnesided},
    {"test_cast_FLOAT_to_BFLOAT16", "Cast", kBfloat16AsUint16},
    {"test_castlike_FLOAT_to_BFLOAT16", "CastLike", kBfloat16AsUint16},
    {"test_castlike_FLOAT_to_BFLOAT16_expanded", "Cast", kBfloat16AsUint16},
};

bool allowed(std::string_view model, const std::string& op) {
  if (model.ends_with("+data")) model.remove_suffix(5);  // the variant with constant inputs
  return std::any_of(std::begin(kAllowed), std::end(kAllowed),
                     [&](const Allowed& a) { return a.model == model && a.op == op; });
}

struct Tally {
  size_t models = 0;
  size_t values = 0;
  size_t dims = 0;
  size_t expected_outputs = 0;               // graph outputs checked against the case's output_*.pb
  size_t known_outputs = 0;                  // of which the known contents were compared too
  std::vector<std::string> partial_outputs;  // outputs whose shape we did not fully infer
  size_t skipped_unregistered = 0;
  std::vector<std::string> official_failures;
  std::map<std::string, size_t> values_by_op;
  std::map<std::string, std::vector<std::string>> mismatches_by_op;
  std::vector<std::string> allowed_hits;

  size_t mismatch_count() const {
    size_t n = 0;
    for (const auto& [op, list] : mismatches_by_op) n += list.size();
    return n;
  }
};

// ---------------------------------------------------------------------------------------------
// Preparing a model

void strip(ref::GraphProto& g, bool main_graph) {
  g.clear_value_info();
  if (main_graph) {
    for (auto& out : *g.mutable_output()) out.clear_type();
  }
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) strip(*a.mutable_g(), false);
      for (auto& sub : *a.mutable_graphs()) strip(sub, false);
    }
  }
}

bool all_registered(const ref::GraphProto& g, std::string* missing) {
  for (const auto& n : g.node()) {
    if (fg::OpRegistry::builtin().find(n.domain(), n.op_type()) == nullptr) {
      *missing = n.domain().empty() ? n.op_type() : n.domain() + ":" + n.op_type();
      return false;
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g() && !all_registered(a.g(), missing)) return false;
      for (const auto& sub : a.graphs()) {
        if (!all_registered(sub, missing)) return false;
      }
    }
  }
  return true;
}

std::optional<ref::ModelProto> read_model(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  ref::ModelProto m;
  if (!m.ParseFromIstream(&in)) return std::nullopt;
  return m;
}

// ---------------------------------------------------------------------------------------------
// Comparing

struct Comparison {
  std::string model;
  Tally* tally;

  void mismatch(const std::string& op, const std::string& where, const std::string& what) const {
    const std::string line = model + ": " + where + ": " + what;
    if (allowed(model, op)) {
      tally->allowed_hits.push_back(line);
    } else {
      tally->mismatches_by_op[op].push_back(line);
    }
  }

  void value(const fg::Graph& ours, const ref::ValueInfoProto& theirs) const {
    if (!theirs.type().has_tensor_type()) return;
    const auto& tt = theirs.type().tensor_type();
    const std::string where = "graph '" + ours.name() + "' value '" + theirs.name() + "'";
    const auto id = ours.find(theirs.name());
    if (!id) {
      mismatch("?", where, "footprint has no such value");
      return;
    }
    const fg::Value& v = ours.value(*id);
    const std::string op = v.producer >= 0 ? ours.node(v.producer).op_type : "(graph input)";
    if (tt.elem_type() == 0 && !tt.has_shape()) return;
    ++tally->values;
    ++tally->values_by_op[op];
    if (tt.elem_type() != 0 && static_cast<int>(v.dtype) != tt.elem_type()) {
      mismatch(
          op, where,
          "dtype " + std::string(footprint::dtype_name(v.dtype)) + ", official " +
              std::string(footprint::dtype_name(static_cast<footprint::DType>(tt.elem_type()))));
    }
    if (!tt.has_shape()) return;
    const auto& shape = tt.shape();
    std::ostringstream official;
    official << "[";
    for (int i = 0; i < shape.dim_size(); ++i) {
      if (i != 0) official << ",";
      if (shape.dim(i).has_dim_value()) {
        official << shape.dim(i).dim_value();
      } else {
        official << (shape.dim(i).has_dim_param() ? shape.dim(i).dim_param() : "?");
      }
    }
    official << "]";
    const std::string versus = "shape " + v.shape.to_string() + ", official " + official.str();
    if (!v.shape.ranked) {
      mismatch(op, where, versus);
      return;
    }
    if (v.shape.rank() != static_cast<size_t>(shape.dim_size())) {
      mismatch(op, where, versus);
      return;
    }
    for (int i = 0; i < shape.dim_size(); ++i) {
      if (!shape.dim(i).has_dim_value()) continue;
      ++tally->dims;
      if (v.shape.dims[static_cast<size_t>(i)].value() != shape.dim(i).dim_value()) {
        mismatch(op, where, versus);
        return;
      }
    }
  }

  void graph(const fg::Graph& ours, const ref::GraphProto& theirs) const {
    // ONNX lists a main-graph output it typed in value_info as well: each value once.
    std::set<std::string> seen;
    for (const auto* list : {&theirs.value_info(), &theirs.output()}) {
      for (const auto& vi : *list) {
        if (seen.insert(vi.name()).second) value(ours, vi);
      }
    }
    if (static_cast<size_t>(theirs.node_size()) != ours.nodes().size()) return;
    for (int i = 0; i < theirs.node_size(); ++i) {
      const fg::Node& n = ours.node(static_cast<fg::NodeId>(i));
      size_t k = 0;
      // A subgraph that cannot run (the untaken branch of a known If condition) is not
      // inferred by footprint at all; ONNX types it anyway.
      auto compare = [&](const ref::GraphProto& sub) {
        if (k < n.subgraphs.size() && fg::subgraph_runs(ours, n, k))
          graph(*n.subgraphs[k].graph, sub);
        ++k;
      };
      for (const auto& a : theirs.node(i).attribute()) {
        if (a.has_g()) compare(a.g());
        for (const auto& sub : a.graphs()) compare(sub);
      }
    }
  }
};

// output_k.pb / input_k.pb of a case: backend cases keep them in test_data_set_0/, the shared
// models beside the model.
fs::path data_file(const fs::path& case_dir, const std::string& name) {
  const fs::path nested = case_dir / "test_data_set_0" / name;
  return fs::exists(nested) ? nested : case_dir / name;
}

// A known value we hold for an output must be the expected tensor's contents.
void check_known_value(const fg::Value& v, const fs::path& file, const std::string& op,
                       const std::string& where, const Comparison& c) {
  if (!v.known) return;
  const auto expected_file = footprint::onnx::TensorFile::load_file(file);
  const auto expected = fg::known_value_of(expected_file.tensor(), fg::KnownValue::kMaxElements,
                                           fg::KnownValue::kMaxElements);
  if (!expected) return;  // a dtype known values do not hold
  ++c.tally->known_outputs;
  const fg::KnownValue& ours = *v.known;
  if (ours.numel() != expected->numel()) {
    c.mismatch(op, where, "known value " + ours.to_string() + ", actual " + expected->to_string());
    return;
  }
  for (size_t i = 0; i < ours.numel(); ++i) {
    const auto a = ours.real(i);
    const auto b = expected->real(i);
    const bool same = a && b &&
                      (*a == *b || (std::isnan(*a) && std::isnan(*b)) ||
                       std::fabs(*a - *b) <= 1e-5 * std::max(1.0, std::fabs(*b)));
    if (!same) {
      c.mismatch(op, where,
                 "known value " + ours.to_string() + ", actual " + expected->to_string());
      return;
    }
  }
}

// The case's expected outputs are ground truth where both inferences are silent: every concrete
// dim we infer for a main-graph output must be the expected tensor's.
void check_expected_outputs(const fg::Graph& g, const fs::path& case_dir,
                            const std::vector<bool>& tensor_outputs, const Comparison& c) {
  for (size_t k = 0; k < g.outputs().size() && k < tensor_outputs.size(); ++k) {
    const fs::path file = data_file(case_dir, "output_" + std::to_string(k) + ".pb");
    if (!tensor_outputs[k] || !fs::exists(file)) continue;
    std::ifstream in(file, std::ios::binary);
    ref::TensorProto t;
    if (!t.ParseFromIstream(&in)) continue;
    const fg::Value& v = g.value(g.outputs()[k]);
    const std::string op = v.producer >= 0 ? g.node(v.producer).op_type : "(graph input)";
    const std::string where = "output '" + v.name + "' against " + file.filename().string();
    ++c.tally->expected_outputs;
    std::string actual = "[";
    for (int i = 0; i < t.dims_size(); ++i) actual += (i ? "," : "") + std::to_string(t.dims(i));
    actual += "]";
    // What we do not know (no dtype, no rank) is not wrong; what we know must be right.
    const bool dtype_differs =
        v.dtype != footprint::DType::undefined && static_cast<int>(v.dtype) != t.data_type();
    if (dtype_differs || (v.shape.ranked && v.shape.rank() != static_cast<size_t>(t.dims_size()))) {
      c.mismatch(
          op, where,
          "inferred " + std::string(footprint::dtype_name(v.dtype)) + v.shape.to_string() +
              ", actual " +
              std::string(footprint::dtype_name(static_cast<footprint::DType>(t.data_type()))) +
              actual);
      continue;
    }
    if (!v.shape.is_static())
      c.tally->partial_outputs.push_back(c.model + ": " + v.name + " " + v.shape.to_string() +
                                         " (" + op + ")");
    if (!v.shape.ranked) continue;
    bool dims_agree = true;
    for (int i = 0; i < t.dims_size() && dims_agree; ++i) {
      const auto d = v.shape.dims[static_cast<size_t>(i)].value();
      dims_agree = !d || *d == t.dims(i);
    }
    if (!dims_agree) {
      c.mismatch(op, where, "inferred " + v.shape.to_string() + ", actual " + actual);
      continue;
    }
    check_known_value(v, file, op, where, c);
  }
}

// The variant of a case whose inputs are initializers holding the case's input data: shapes
// that depend on input values (Reshape's target, Slice's starts, Resize's scales, TopK's K, ...)
// become inferable, on both sides. False when no input could be moved.
bool inputs_as_initializers(ref::ModelProto& m, const fs::path& case_dir) {
  auto* g = m.mutable_graph();
  ref::GraphProto kept;
  bool moved = false;
  for (int k = 0; k < g->input_size(); ++k) {
    const auto& in = g->input(k);
    const fs::path file = data_file(case_dir, "input_" + std::to_string(k) + ".pb");
    ref::TensorProto t;
    std::ifstream data(file, std::ios::binary);
    // The 1.12 data stores bfloat16 inputs as uint16 bits: such an input stays an input.
    if (!in.type().has_tensor_type() || !data || !t.ParseFromIstream(&data) ||
        t.data_type() != in.type().tensor_type().elem_type()) {
      *kept.add_input() = in;
      continue;
    }
    t.set_name(in.name());
    *g->add_initializer() = t;
    moved = true;
  }
  g->mutable_input()->Swap(kept.mutable_input());
  return moved;
}

// Strips, infers on both sides and compares one model (and its expected outputs, for a case
// folder with test data).
void check_model(const std::string& label, ref::ModelProto m, Tally& tally,
                 const fs::path& case_dir = {}) {
  std::vector<bool> tensor_outputs;
  for (const auto& out : m.graph().output()) tensor_outputs.push_back(out.type().has_tensor_type());
  strip(*m.mutable_graph(), true);
  std::string bytes;
  m.SerializeToString(&bytes);
  try {
    ref::shape_inference::InferShapes(
        m, ref::OpSchemaRegistry::Instance(),
        ref::ShapeInferenceOptions(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true));
  } catch (const std::exception& e) {
    tally.official_failures.push_back(label + ": " + e.what());
    return;
  }
  ++tally.models;
  const Comparison c{label, &tally};
  try {
    const std::vector<std::byte> data(
        reinterpret_cast<const std::byte*>(bytes.data()),
        reinterpret_cast<const std::byte*>(bytes.data()) + bytes.size());
    const auto model = footprint::onnx::load(footprint::onnx::ModelSource::borrow(data, label));
    fg::Graph g = fg::Graph::from_onnx(model, fg::OpRegistry::builtin());
    fg::infer_shapes(g);
    c.graph(g, m.graph());
    if (!case_dir.empty()) check_expected_outputs(g, case_dir, tensor_outputs, c);
  } catch (const footprint::Error& e) {
    c.mismatch("(error)", "infer_shapes", e.what());
  }
}

void print(const Tally& t, std::string_view corpus) {
  std::cout << "[shape oracle] " << corpus << ": " << t.models << " models compared, " << t.values
            << " values and " << t.dims << " concrete dims compared, " << t.mismatch_count()
            << " mismatches, " << t.allowed_hits.size() << " allowed, " << t.skipped_unregistered
            << " skipped (ops not registered), " << t.official_failures.size()
            << " the official inference rejects; " << t.expected_outputs
            << " outputs checked against the expected tensors (" << t.known_outputs
            << " known values compared, " << t.partial_outputs.size() << " not fully inferred)\n";
  for (const auto& [op, list] : t.mismatches_by_op) {
    std::cout << "  " << op << ": " << list.size() << " of "
              << (t.values_by_op.count(op) ? t.values_by_op.at(op) : 0) << " values\n";
    for (size_t i = 0; i < list.size() && i < 5; ++i) std::cout << "    " << list[i] << "\n";
  }
  if (const char* env = std::getenv("FOOTPRINT_ORACLE_VERBOSE"); env != nullptr) {
    for (const auto& p : t.partial_outputs) std::cout << "  not fully inferred: " << p << "\n";
  }
  for (const auto& f : t.official_failures)
    std::cout << "  official inference failed: " << f << "\n";
}

TEST(ShapeOracle, SharedModelsMatchTheOfficialInference) {
  FOOTPRINT_REQUIRE_SHARED();
  Tally tally;
  for (const auto& path : footprint::testing::shared_models()) {
    auto m = read_model(path);
    ASSERT_TRUE(m) << path;
    const std::string label =
        fs::relative(path.parent_path(), footprint::testing::shared_dir() / "models").string();
    check_model(label, std::move(*m), tally, path.parent_path());
  }
  print(tally, "shared models");
  EXPECT_GE(tally.models, 15u);
  EXPECT_EQ(tally.mismatch_count(), 0u);
}

// Every case folder under `root` whose ops are all registered, compared; the unregistered ops
// are listed.
Tally check_corpus(const fs::path& root, const std::string& prefix) {
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(root)) {
    if (fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  Tally tally;
  std::map<std::string, size_t> unregistered;
  for (const auto& dir : cases) {
    auto m = read_model(dir / "model.onnx");
    EXPECT_TRUE(m) << dir;
    if (!m) continue;
    std::string missing;
    if (!all_registered(m->graph(), &missing)) {
      ++tally.skipped_unregistered;
      ++unregistered[missing];
      continue;
    }
    ref::ModelProto with_data = *m;
    check_model(prefix + dir.filename().string(), std::move(*m), tally, dir);
    if (inputs_as_initializers(with_data, dir)) {
      check_model(prefix + dir.filename().string() + "+data", std::move(with_data), tally, dir);
    }
  }
  print(tally, root.string());
  if (!unregistered.empty()) {
    std::cout << "  not registered:";
    for (const auto& [op, n] : unregistered) std::cout << " " << op << "(" << n << ")";
    std::cout << "\n";
  }
  return tally;
}

TEST(ShapeOracle, ConformanceCasesMatchTheOfficialInference) {
  if (!fs::exists(kTestData / "node"))
    GTEST_SKIP() << kTestData << " is missing (libonnx-testdata)";
  const Tally tally = check_corpus(kTestData / "node", "");
  EXPECT_GE(tally.models, 780u);
  EXPECT_EQ(tally.mismatch_count(), 0u);
}

// The backend test's converted PyTorch modules and operators and its simple models.
TEST(ShapeOracle, OtherBackendTestModelsMatchTheOfficialInference) {
  if (!fs::exists(kTestData / "node"))
    GTEST_SKIP() << kTestData << " is missing (libonnx-testdata)";
  size_t models = 0;
  for (const char* corpus : {"pytorch-converted", "pytorch-operator", "simple"}) {
    const Tally tally = check_corpus(kTestData / corpus, std::string(corpus) + "/");
    models += tally.models;
    EXPECT_EQ(tally.mismatch_count(), 0u) << corpus;
  }
  EXPECT_GE(models, 100u);
}

}  // namespace
