// The recurrent kernels inside the executor: the ONNX backend cases for LSTM, GRU and RNN, and
// silero_vad_legacy (LSTMs inside If branches), each run through runtime::Session against the
// expected outputs, with the arena the run obtained equal to the planned one.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "footprint/graph/graph.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/output_check.hpp"
#include "footprint/runtime/session.hpp"
#include "footprint/runtime/tensor.hpp"
#include "test_support.hpp"

namespace footprint::testing {
namespace {

// Ops of `g` and its subgraphs the runtime cannot execute, "Op" each once.
void unexecutable_ops(const graph::Graph& g, std::vector<std::string>& out) {
  for (const graph::Node& n : g.nodes()) {
    const graph::OpSchema* s = n.schema;
    if (s == nullptr || !runtime::is_executable(*s)) {
      if (std::find(out.begin(), out.end(), n.op_type) == out.end()) out.push_back(n.op_type);
    }
    for (const graph::Subgraph& sub : n.subgraphs) unexecutable_ops(*sub.graph, out);
  }
}

// Runs the model in `dir` on test_data_set_0 and compares with its expected outputs. Skips when
// an op of the model has no kernel yet (other families), so the failure is never ours to hide.
void run_case(const std::filesystem::path& dir, const std::filesystem::path& data, double rtol,
              double atol) {
  if (!std::filesystem::exists(dir / "model.onnx")) GTEST_SKIP() << dir << " is not installed";
  const graph::Model model = graph::load_model(dir / "model.onnx");
  std::vector<std::string> missing;
  unexecutable_ops(model.graph(runtime::op_registry()), missing);
  if (!missing.empty()) GTEST_SKIP() << "no kernel yet for " << missing.front();

  std::vector<runtime::Tensor> inputs;
  std::vector<std::filesystem::path> expected;
  for (int i = 0; std::filesystem::exists(data / ("input_" + std::to_string(i) + ".pb")); ++i) {
    inputs.push_back(runtime::read_tensor_file(data / ("input_" + std::to_string(i) + ".pb")));
  }
  for (int i = 0; std::filesystem::exists(data / ("output_" + std::to_string(i) + ".pb")); ++i) {
    expected.push_back(data / ("output_" + std::to_string(i) + ".pb"));
  }
  runtime::Session session(model);
  const std::vector<runtime::Tensor> got = session.run(inputs);
  const runtime::OutputCheck check = runtime::check_outputs(got, expected, rtol, atol);
  EXPECT_TRUE(check.match) << check.problem;
  EXPECT_EQ(session.last_run().arena_bytes, session.prepared().planned_arena_bytes);
  // Twice: the second run reuses what the first prepared and must agree.
  const std::vector<runtime::Tensor> again = session.run(inputs);
  EXPECT_TRUE(runtime::check_outputs(again, expected, rtol, atol).match);
}

class RecurrentBackend : public ::testing::TestWithParam<std::string> {};

TEST_P(RecurrentBackend, MatchesExpectedOutputs) {
  const std::filesystem::path dir =
      std::filesystem::path(FOOTPRINT_ONNX_TESTDATA) / "node" / GetParam();
  run_case(dir, dir / "test_data_set_0", 1e-3, 1e-7);
}

INSTANTIATE_TEST_SUITE_P(Session, RecurrentBackend,
                         ::testing::Values("test_lstm_batchwise", "test_lstm_defaults",
                                           "test_lstm_with_initial_bias",
                                           "test_lstm_with_peepholes", "test_gru_batchwise",
                                           "test_gru_defaults", "test_gru_seq_length",
                                           "test_gru_with_initial_bias", "test_rnn_seq_length",
                                           "test_simple_rnn_batchwise", "test_simple_rnn_defaults",
                                           "test_simple_rnn_with_initial_bias"));

TEST(RecurrentModels, SileroVadLegacy) {
  const std::filesystem::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "no shared models";
  const std::filesystem::path dir = shared / "models" / "real" / "silero_vad_legacy";
  run_case(dir, dir, 1e-3, 1e-5);
}

}  // namespace
}  // namespace footprint::testing
