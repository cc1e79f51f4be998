// runtime::Session on the project's own example model (examples/tiny_cnn): inputs are matched
// by name, their extents bind the model's named dims, a change of extents prepares again, and
// bad inputs are refused with a message naming them.
#include "footprint/runtime/session.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "footprint/core/checked_math.hpp"
#include "footprint/core/error.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/model_source.hpp"
#include "footprint/runtime/random_inputs.hpp"
#include "tiny_cnn.hpp"

using namespace footprint;

namespace {

graph::Model tiny_cnn() {
  return graph::load_model(onnx::ModelSource::adopt(examples::make_tiny_cnn()));
}

runtime::Tensor input_x(int64_t n, float value) {
  runtime::Tensor x("x", DType::float32, {n, 1, 8, 8});
  auto* p = reinterpret_cast<float*>(x.data());
  for (size_t i = 0; i < x.numel(); ++i) p[i] = value * static_cast<float>(i % 7);
  return x;
}

std::string error_of(runtime::Session& s, const std::vector<runtime::Tensor>& in) {
  try {
    (void)s.run(in);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Session, BindsNamedDimsFromTheInputsAndPreparesAgainWhenTheyChange) {
  const graph::Model model = tiny_cnn();
  runtime::Session s(model);
  std::vector<runtime::Tensor> in;
  in.push_back(input_x(2, 0.1f));
  const auto out2 = s.run(in);
  ASSERT_EQ(out2.size(), 1u);
  EXPECT_EQ(out2[0].name(), "y");
  EXPECT_EQ(out2[0].dims(), (std::vector<int64_t>{2, 10}));
  EXPECT_EQ(s.prepared().dims.at("N"), 2);
  EXPECT_EQ(s.last_run().arena_bytes, s.prepared().planned_arena_bytes);
  const uint64_t activations2 = s.prepared().activations_peak_bytes;

  in.clear();
  in.push_back(input_x(8, 0.1f));
  const auto out8 = s.run(in);
  EXPECT_EQ(out8[0].dims(), (std::vector<int64_t>{8, 10}));
  EXPECT_EQ(s.prepared().dims.at("N"), 8);
  // (The arena need not grow with N: oneDNN may pick a convolution with less scratch.)
  EXPECT_EQ(s.prepared().activations_peak_bytes, 4 * activations2);
  EXPECT_EQ(s.last_run().arena_bytes, s.prepared().planned_arena_bytes);
  // The same rows of the batch give the same outputs whatever the batch, up to rounding: oneDNN
  // may pick another convolution for another batch (its AVX2 kernels do), which sums in another
  // order.
  const auto rows8 = out8[0].ref().span<const float>();
  const auto rows2 = out2[0].ref().span<const float>();
  for (size_t i = 0; i < rows2.size(); ++i) {
    ASSERT_NEAR(rows8[i], rows2[i], 1e-5 * std::max(1.0f, std::abs(rows2[i]))) << "element " << i;
  }
}

// Outputs handed back are written in place when the run makes tensors of their name, dtype and
// extents (no allocation: a serving loop's outputs are not faulted in again every run), and
// replaced when it does not (another batch), the values as a fresh run's.
TEST(Session, WritesIntoTheOutputsHandedBackWhereTheyFit) {
  const graph::Model model = tiny_cnn();
  runtime::Session s(model);
  std::vector<runtime::Tensor> in;
  in.push_back(input_x(2, 0.1f));
  const auto fresh = s.run(in);
  std::vector<runtime::Tensor> out;
  s.run(in, out);  // nothing handed back: allocated
  EXPECT_EQ(s.last_run().reused_output_bytes, 0u);
  ASSERT_EQ(out.size(), 1u);
  const void* buffer = out[0].data();
  std::fill_n(reinterpret_cast<float*>(out[0].data()), out[0].numel(), -7.0f);
  s.run(in, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data(), buffer) << "written in place";
  EXPECT_EQ(s.last_run().reused_output_bytes, out[0].bytes());
  EXPECT_EQ(s.last_run().output_bytes, out[0].bytes());
  ASSERT_EQ(std::memcmp(out[0].data(), fresh[0].data(), fresh[0].bytes()), 0);
  const uint64_t reusing_peak = s.last_run().peak_heap_bytes;
  (void)s.run(in);
  if (s.last_run().heap_before_bytes > 0) {
    EXPECT_LE(reusing_peak + out[0].bytes(), s.last_run().peak_heap_bytes)
        << "the output was not allocated";
  }
  in.clear();
  in.push_back(input_x(4, 0.1f));
  s.run(in, out);
  EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{4, 10})) << "another batch: replaced";
  EXPECT_EQ(s.last_run().reused_output_bytes, 0u);
}

TEST(Session, ReadsAViewOfTheCallersBytesAndLeavesThemAsTheyWere) {
  const graph::Model model = tiny_cnn();
  runtime::Session s(model);
  const runtime::Tensor owned = input_x(3, 0.25f);
  // Unaligned on purpose (a float's alignment, not 64 bytes): a Python array's data.
  std::vector<float> caller(owned.numel() + 1);
  std::memcpy(caller.data() + 1, owned.data(), owned.bytes());
  const std::vector<float> before = caller;
  std::vector<runtime::Tensor> in;
  in.push_back(runtime::Tensor::view("x", DType::float32, owned.dims(),
                                     reinterpret_cast<std::byte*>(caller.data() + 1)));
  EXPECT_EQ(in[0].bytes(), owned.bytes());
  const auto from_view = s.run(in);
  std::vector<runtime::Tensor> copied;
  copied.push_back(input_x(3, 0.25f));
  const auto from_copy = s.run(copied);
  ASSERT_EQ(from_view[0].bytes(), from_copy[0].bytes());
  EXPECT_EQ(std::memcmp(from_view[0].data(), from_copy[0].data(), from_copy[0].bytes()), 0);
  EXPECT_EQ(caller, before);
  in.clear();  // the view frees nothing (ASan would report a bad free)
  EXPECT_EQ(caller, before);
}

TEST(Session, AnUnnamedInputTakesTheNextFreeSlot) {
  const graph::Model model = tiny_cnn();
  runtime::Session s(model);
  std::vector<runtime::Tensor> in;
  in.push_back(input_x(1, 0.5f));
  in.back().set_name("");
  EXPECT_EQ(s.run(in)[0].dims(), (std::vector<int64_t>{1, 10}));
}

TEST(Session, RefusesInputsThatDoNotFitTheModel) {
  const graph::Model model = tiny_cnn();
  runtime::Session s(model);
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{1, 1, 8});
  EXPECT_NE(error_of(s, in).find("input 'x': the model declares rank 4"), std::string::npos)
      << error_of(s, in);
  in.clear();
  in.emplace_back("x", DType::float32, std::vector<int64_t>{1, 3, 8, 8});
  EXPECT_NE(error_of(s, in).find("dim 1 is 1 in the model, 3 in the tensor"), std::string::npos)
      << error_of(s, in);
  in.clear();
  in.emplace_back("x", DType::float64, std::vector<int64_t>{1, 1, 8, 8});
  EXPECT_NE(error_of(s, in).find("declares float, the tensor is double"), std::string::npos)
      << error_of(s, in);
  in.clear();
  in.push_back(input_x(1, 1));
  in.emplace_back("z", DType::float32, std::vector<int64_t>{1});
  EXPECT_NE(error_of(s, in).find("input 'z' is not an input of the model"), std::string::npos);
  in.clear();
  EXPECT_NE(error_of(s, in).find("input 'x' is missing"), std::string::npos);
}

TEST(Session, RandomInputsFollowTheDeclaredShapesAndTheSeed) {
  const graph::Model model = tiny_cnn();
  runtime::Session s(model);
  const auto a = runtime::random_inputs(s.inputs(), {{"N", 3}}, 7);
  const auto b = runtime::random_inputs(s.inputs(), {{"N", 3}}, 7);
  const auto c = runtime::random_inputs(s.inputs(), {{"N", 3}}, 8);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].dims(), (std::vector<int64_t>{3, 1, 8, 8}));
  EXPECT_EQ(std::memcmp(a[0].data(), b[0].data(), a[0].bytes()), 0);
  EXPECT_NE(std::memcmp(a[0].data(), c[0].data(), a[0].bytes()), 0);
  const float* p = reinterpret_cast<const float*>(a[0].data());
  for (size_t i = 0; i < a[0].numel(); ++i) {
    EXPECT_GE(p[i], -1.0f);
    EXPECT_LE(p[i], 1.0f);
  }
}

// A tensor larger than the machine's memory and swap is refused before it is allocated (Linux
// would overcommit it and the kernel writing it would be killed), naming the tensor and the bytes;
// a string tensor says why it cannot be held.
TEST(Session, TensorsThatCannotBeHeldAreRefusedByName) {
  using runtime::Tensor;
  try {
    const Tensor t("huge", DType::float32, {int64_t{1} << 40, int64_t{1} << 20});
    FAIL() << "allocated";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("tensor 'huge': 4611686018427387904 bytes cannot be "
                                          "allocated: this machine has ",
                                          0),
              0u)
        << e.what();
  }
  try {
    const Tensor t("text", DType::string, {2});
    FAIL() << "allocated";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "tensor 'text': string elements have no fixed size; footprint's runtime holds "
                 "numeric tensors only");
  }
  EXPECT_THROW(Tensor("wrap", DType::float32, {int64_t{1} << 62, 8}), SizeOverflow);
}

}  // namespace
