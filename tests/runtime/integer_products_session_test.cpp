// The integer products inside a session: a model with QLinearConv, ConvInteger, MatMulInteger and
// QLinearMatMul over constant weights (packed once, oneDNN's int8 kernels where the CPU has VNNI)
// gives exactly the outputs of the same model with its weights as inputs (the plain loops), and
// analysis predicts what the run did: the arena it obtained, every value's extents and bytes,
// the packed weights and the peak of the buffers preparing holds.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <vector>

#include "footprint/analysis/model_program.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/graph/model.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "footprint/runtime/shape_check.hpp"
#include "graph/infer_builder.hpp"
#include "runtime/prepared_kernel_run.hpp"

namespace footprint {
namespace {

using testing::attr;
using testing::node_with;
using testing::random_ints;
using testing::raw_tensor;
using testing::Wire;
using Ints = std::vector<int64_t>;

struct Weight {
  std::string name;
  DType dtype;
  Ints dims;
  std::vector<std::byte> bytes;
};

template <class T>
Weight weight(std::string name, DType dtype, Ints dims, const std::vector<T>& v) {
  const auto b = std::as_bytes(std::span<const T>(v));
  return {std::move(name), dtype, std::move(dims), {b.begin(), b.end()}};
}

// The weights of the four products, and the small parameters (always initializers).
std::vector<Weight> weights() {
  return {weight("w1", DType::int8, {32, 32, 3, 3},
                 random_ints<int8_t>(size_t{32} * 32 * 9, 1, -40, 40)),
          weight("w2", DType::uint8, {16, 16, 3, 3},
                 random_ints<uint8_t>(size_t{16} * 16 * 9, 2, 0, 255)),
          weight("b3", DType::int8, {40, 70}, random_ints<int8_t>(size_t{40} * 70, 3, -128, 127)),
          weight("b4", DType::uint8, {40, 24}, random_ints<uint8_t>(size_t{40} * 24, 4, 0, 255))};
}

std::vector<Wire> parameters() {
  std::vector<float> w1_scale(32), b4_scale(24);
  for (size_t i = 0; i < 32; ++i) w1_scale[i] = 0.001F * static_cast<float>(i + 1);
  for (size_t i = 0; i < 24; ++i) b4_scale[i] = 0.0005F * static_cast<float>(i + 1);
  return {raw_tensor("sx", DType::float32, {}, std::vector<float>{0.05F}),
          raw_tensor("zx", DType::uint8, {}, std::vector<uint8_t>{120}),
          raw_tensor("sw1", DType::float32, {32}, w1_scale),
          raw_tensor("zw1", DType::int8, {32}, std::vector<int8_t>(32, 0)),
          raw_tensor("sy1", DType::float32, {}, std::vector<float>{0.25F}),
          raw_tensor("zy1", DType::uint8, {}, std::vector<uint8_t>{90}),
          raw_tensor("bias1", DType::int32, {32}, random_ints<int32_t>(32, 5, -500, 500)),
          raw_tensor("zw2", DType::uint8, {16}, random_ints<uint8_t>(16, 6, 120, 136)),
          raw_tensor("za", DType::uint8, {}, std::vector<uint8_t>{128}),
          raw_tensor("zb3", DType::int8, {70}, random_ints<int8_t>(70, 7, -5, 5)),
          raw_tensor("sa", DType::float32, {}, std::vector<float>{0.1F}),
          raw_tensor("sb4", DType::float32, {24}, b4_scale),
          raw_tensor("zb4", DType::uint8, {24}, random_ints<uint8_t>(24, 8, 100, 150)),
          raw_tensor("sy4", DType::float32, {}, std::vector<float>{0.5F}),
          raw_tensor("zy4", DType::uint8, {}, std::vector<uint8_t>{128})};
}

// x [1, 32, 7, 9] -> QLinearConv 3x3 pad 1 -> ConvInteger 3x3 stride 2, 2 groups (its input's
// zero point zy1); a [6, 40] -> MatMulInteger, and -> QLinearMatMul. The weights are
// initializers, or graph inputs with `weights_as_inputs`.
std::vector<std::byte> model_bytes(bool weights_as_inputs) {
  Wire g;
  g.msg(1, node_with("QLinearConv", {"x", "sx", "zx", "w1", "sw1", "zw1", "sy1", "zy1", "bias1"},
                     {"q1"}, {attr("pads", Ints{1, 1, 1, 1})}, "qconv"));
  g.msg(1, node_with("ConvInteger", {"q1", "w2", "zy1", "zw2"}, {"c2"},
                     {attr("strides", Ints{2, 2}), attr("group", int64_t{2})}, "convint"));
  g.msg(1, testing::node("MatMulInteger", {"a", "b3", "za", "zb3"}, {"m3"}, "mmi"));
  g.msg(1, testing::node("QLinearMatMul", {"a", "sa", "za", "b4", "sb4", "zb4", "sy4", "zy4"},
                         {"m4"}, "qmm"));
  g.str(2, "g");
  for (const Wire& p : parameters()) g.msg(5, p);
  g.msg(11, testing::tensor_info("x", DType::uint8, {1, 32, 7, 9}));
  g.msg(11, testing::tensor_info("a", DType::uint8, {6, 40}));
  for (const Weight& w : weights()) {
    if (weights_as_inputs) {
      std::vector<testing::DimSpec> dims(w.dims.begin(), w.dims.end());
      g.msg(11, testing::tensor_info(w.name, w.dtype, dims));
    } else {
      Wire t;
      for (int64_t d : w.dims) t.int_field(1, d);
      t.int_field(2, static_cast<int64_t>(w.dtype));
      t.str(8, w.name);
      t.bytes_field(9, w.bytes);
      g.msg(5, t);
    }
  }
  for (const char* out : {"c2", "m3", "m4"}) g.msg(12, testing::output(out));
  Wire m;
  m.int_field(1, 8).msg(7, g).msg(8, Wire().int_field(2, 13));
  return m.bytes();
}

std::vector<runtime::Tensor> inputs(bool with_weights) {
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::uint8, Ints{1, 32, 7, 9});
  in.emplace_back("a", DType::uint8, Ints{6, 40});
  for (runtime::Tensor& t : in) {
    const auto v = random_ints<uint8_t>(t.ref().numel(), 9, 0, 255);
    std::memcpy(t.ref().data, v.data(), v.size());
  }
  if (with_weights) {
    for (const Weight& w : weights()) {
      in.emplace_back(w.name, w.dtype, w.dims);
      std::memcpy(in.back().ref().data, w.bytes.data(), w.bytes.size());
    }
  }
  return in;
}

TEST(IntegerProductsSession, PackedWeightsGiveThePlainLoopsOutputsAsAnalysisPredicts) {
  const auto packed_bytes = model_bytes(false);
  const auto plain_bytes = model_bytes(true);
  auto model = std::make_shared<const graph::Model>(
      graph::load_model(onnx::ModelSource::borrow(packed_bytes, "packed.onnx")));
  const graph::Model plain_model =
      graph::load_model(onnx::ModelSource::borrow(plain_bytes, "plain.onnx"));

  runtime::Session packed(*model);
  const auto in = inputs(false);
  const auto got = packed.run(in);
  runtime::Session plain(plain_model);
  const auto want = plain.run(inputs(true));
  ASSERT_EQ(got.size(), 3u);
  ASSERT_EQ(want.size(), 3u);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].ref().bytes(), want[i].ref().bytes()) << got[i].name();
    EXPECT_EQ(std::memcmp(got[i].ref().data, want[i].ref().data, got[i].ref().bytes()), 0)
        << got[i].name() << ": the packed and the plain kernels differ";
  }

  // What analysis predicts, at the extents the session ran.
  analysis::ModelProgramOptions options;
  options.dims = packed.prepared().dims;
  for (const runtime::Tensor& t : in) options.shapes.emplace(t.name(), t.dims());
  options.subgraph_arena = analysis::subgraph_arena("auto");
  const analysis::ModelProgram predicted =
      analysis::build_model_program(model, runtime::op_registry(), options);
  const runtime::PreparedStats& p = packed.prepared();
  EXPECT_EQ(packed.last_run().arena_bytes, p.planned_arena_bytes);
  const runtime::ShapeCheck c = runtime::check_shapes(predicted, packed);
  EXPECT_EQ(c.difference, "");
  EXPECT_EQ(predicted.program.packed_bytes, p.packed_weights_bytes);
  EXPECT_EQ(predicted.prepare.peak_bytes, p.prepare_buffers_peak_bytes);
  EXPECT_EQ(predicted.prepare.kept_bytes, p.prepare_buffers_kept_bytes);
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto vnni = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_vnni);
  if ((isa & vnni) == vnni) {
    // The three products oneDNN runs here hold their weights packed (ConvInteger's 3 x 3 of 8
    // channels a group runs on oneDNN too when its kernels take it).
    EXPECT_GT(p.packed_weights_bytes, uint64_t{32 * 32 * 9 + 40 * 70 + 40 * 24});
  }
}

}  // namespace
}  // namespace footprint
