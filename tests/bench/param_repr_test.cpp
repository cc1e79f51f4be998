// Records keep representations of parameters, never the objects: no raw tensor data in any
// serialized record, and a 1 GB parameter is free to be released once its record exists.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "bench/run_options.hpp"
#include "footprint/bench/content_hash.hpp"
#include "footprint/bench/record_io.hpp"
#include "footprint/bench/runner.hpp"
#include "footprint/core/heap_counter.hpp"

namespace footprint::bench {

// A user type with its own representation hook.
struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;
};
template <>
struct Representation<Image> {
  static void fill(const Image& v, ParamRepr& r) {
    r.type = "image";
    r.shape = {v.height, v.width};
    r.bytes = v.pixels.size();
    r.hash = content_hash(std::as_bytes(std::span(v.pixels)));
  }
};

namespace {

runtime::Tensor filled(std::vector<int64_t> dims, float value) {
  runtime::Tensor t("t", DType::float32, std::move(dims));
  auto* p = reinterpret_cast<float*>(t.data());
  for (size_t i = 0; i < t.numel(); ++i) p[i] = value;
  return t;
}

TEST(ParamRepr, TensorsAreDescribedByDtypeShapeBytesAndHash) {
  const ParamRepr r = Param("x", filled({2, 3}, 1.0f)).represent();
  EXPECT_EQ(r.name, "x");
  EXPECT_EQ(r.type, "tensor");
  EXPECT_EQ(r.dtype, "float");
  EXPECT_EQ(r.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.bytes, 24u);
  EXPECT_EQ(r.hash.size(), 32u);
  EXPECT_EQ(r.hash, Param("y", filled({2, 3}, 1.0f)).represent().hash);  // content, not identity
  EXPECT_NE(r.hash, Param("y", filled({2, 3}, 2.0f)).represent().hash);
}

TEST(ParamRepr, UserTypesUseTheirHook) {
  const ParamRepr r = Param("img", Image{4, 2, std::vector<uint8_t>(8, 7)}).represent();
  EXPECT_EQ(r.type, "image");
  EXPECT_EQ(r.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(r.bytes, 8u);
}

TEST(ParamRepr, ScalarsKeepTheirValue) {
  EXPECT_EQ(Param("n", 8).represent().value, "8");
  EXPECT_EQ(Param("s", "abc").represent().value, "abc");
  EXPECT_EQ(Param("f", 0.25).represent().value, "0.25");
  EXPECT_EQ(Param("b", true).represent().value, "true");
}

// The tensor's elements hold a value whose text would show up if any writer dumped them.
TEST(ParamRepr, RecordsCarryNoRawTensorData) {
  Registry reg;
  const float marker = 1234.5f;
  reg.add("f", [](State& s) { (void)s.param<runtime::Tensor>("x"); })
      .parametrize("x", {Param("x", filled({64, 1024}, marker))});
  const RunRecords run = bench::run(reg, test_support::reps(2));
  const std::string jsonl = to_jsonl(run);
  const std::string gbench = to_gbench_json(run);
  for (const std::string* text : {&jsonl, &gbench}) {
    EXPECT_EQ(text->find("1234.5"), std::string::npos);
    // 256 KiB of elements; a record that carried them in any encoding would be this large.
    EXPECT_LT(text->size(), 16u * 1024);
    char raw[sizeof marker];
    std::memcpy(raw, &marker, sizeof marker);
    EXPECT_EQ(text->find(std::string(raw, sizeof raw)), std::string::npos);
  }
  EXPECT_NE(jsonl.find("\"dtype\":\"float\""), std::string::npos);
  EXPECT_NE(jsonl.find("\"shape\":[64,1024]"), std::string::npos);
}

TEST(ParamRepr, ARecordFromA1GiBParameterLetsItBeReleased) {
  if (!heap::available()) GTEST_SKIP() << "needs the counting allocator";
  constexpr int64_t kElems = (int64_t{1} << 30) / 4;
  const uint64_t before = heap::snapshot().current_bytes;
  RunRecords run;
  {
    Registry reg;
    auto big = std::make_shared<runtime::Tensor>("w", DType::float32, std::vector<int64_t>{kElems});
    std::memset(big->data(), 0, big->bytes());
    reg.add("big", [](State& s) { (void)s.param<std::shared_ptr<runtime::Tensor>>("w")->numel(); })
        .parametrize("w", {Param("w", big)});
    big.reset();  // the registry holds the only share now
    EXPECT_GE(heap::snapshot().current_bytes - before, uint64_t{1} << 30);
    run = bench::run(reg, test_support::reps(1, 0));
  }  // the registry goes: nothing else may hold the tensor
  const uint64_t after = heap::snapshot().current_bytes;
  EXPECT_LT(after - std::min(after, before), uint64_t{1} << 20)
      << "the 1 GiB parameter is still alive after the registry went";
  ASSERT_EQ(run.records.size(), 1u);
  ASSERT_EQ(run.records[0].params.size(), 1u);
  EXPECT_EQ(run.records[0].params[0].bytes, uint64_t{1} << 30);
  EXPECT_EQ(run.records[0].params[0].shape, std::vector<int64_t>{kElems});
  EXPECT_EQ(run.records[0].params[0].hash.size(), 32u);
}

}  // namespace
}  // namespace footprint::bench
