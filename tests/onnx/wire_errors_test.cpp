// The reader's contract for malformed bytes: one line naming the source, the byte offset and
// the field path, and no allocation a length or count merely claims.
#include <gtest/gtest.h>

#include <string>

#include "footprint/core/counting_resource.hpp"
#include "footprint/core/error.hpp"
#include "footprint/onnx/model.hpp"
#include "wire_builder.hpp"

namespace footprint {
namespace {

using testing::Wire;

std::string load_error(const std::vector<std::byte>& bytes, CountingResource* memory = nullptr) {
  try {
    onnx::load(onnx::ModelSource::borrow(bytes, "bad.onnx"), {.memory = memory});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Wire relu_graph() {
  Wire g;
  g.msg(1, testing::node("Relu", {"x"}, {"y"}, "relu"));
  g.str(2, "g");
  g.msg(11, testing::float_value_info("x", {4}));
  g.msg(12, testing::float_value_info("y", {4}));
  return g;
}

TEST(WireErrors, ValidMinimalModelLoads) {
  const auto bytes = testing::model(relu_graph()).bytes();
  auto m = onnx::load(onnx::ModelSource::borrow(bytes, "ok.onnx"));
  ASSERT_EQ(m.graph().nodes.size(), 1u);
  EXPECT_EQ(m.graph().nodes[0].op_type, "Relu");
  EXPECT_EQ(m.proto().ir_version, 8);
  EXPECT_EQ(m.opset_version(""), 13);
}

TEST(WireErrors, EmptyInputHasNoGraph) {
  const std::string err = load_error({});
  EXPECT_NE(err.find("bad.onnx: offset 0"), std::string::npos) << err;
  EXPECT_NE(err.find("no graph"), std::string::npos) << err;
}

TEST(WireErrors, TruncationNamesOffsetAndPath) {
  Wire m;
  m.int_field(1, 8).msg(8, Wire().int_field(2, 13)).msg(7, relu_graph());
  // The graph now claims 3 bytes more than remain.
  const std::vector<std::byte> bytes(m.bytes().begin(), m.bytes().end() - 3);
  const std::string err = load_error(bytes);
  EXPECT_EQ(err.rfind("bad.onnx: offset ", 0), 0u) << err;
  EXPECT_NE(err.find("remain"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << "one line";
}

TEST(WireErrors, HugeLengthClaimAllocatesNothing) {
  // graph (field 7) claims 700 MB in a 12-byte file.
  Wire m;
  m.int_field(1, 8).tag(7, 2).varint(700'000'000).raw({0x0a, 0x00});
  CountingResource memory;
  const std::string err = load_error(m.bytes(), &memory);
  EXPECT_NE(err.find("claims 700000000 bytes"), std::string::npos) << err;
  EXPECT_NE(err.find("offset 2"), std::string::npos) << err;
  EXPECT_LE(memory.largest_request(), 4096u);
}

TEST(WireErrors, FieldPathReachesIntoNodes) {
  Wire bad_attr;
  bad_attr.str(1, "axis").tag(3, 2).varint(1).raw({0x01});  // `i` must be a varint
  Wire n = testing::node("Softmax", {"x"}, {"y"});
  n.msg(5, bad_attr);
  Wire g;
  g.msg(1, testing::node("Relu", {"x"}, {"r"})).msg(1, n);
  const std::string err = load_error(testing::model(g).bytes());
  EXPECT_NE(err.find("graph.node[1].attribute[0]"), std::string::npos) << err;
  EXPECT_NE(err.find("i (field 3) has wire type length-delimited, expected varint"),
            std::string::npos)
      << err;
}

TEST(WireErrors, GroupsAndInvalidWireTypesAreRejected) {
  EXPECT_NE(load_error(Wire().raw({0x0b}).bytes()).find("group"), std::string::npos);
  EXPECT_NE(load_error(Wire().raw({0x0e}).bytes()).find("invalid wire type"), std::string::npos);
  EXPECT_NE(load_error(Wire().raw({0x00}).bytes()).find("invalid field number 0"),
            std::string::npos);
}

TEST(WireErrors, OverlongVarintIsRejected) {
  Wire m;
  m.tag(1, 0).raw({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f});
  EXPECT_NE(load_error(m.bytes()).find("overflows 64 bits"), std::string::npos);
  Wire t;
  t.tag(1, 0).raw({0x80, 0x80});
  EXPECT_NE(load_error(t.bytes()).find("truncated varint"), std::string::npos);
}

TEST(WireErrors, NestingDepthIsBounded) {
  // A graph whose node holds a graph attribute whose node holds a graph attribute ... 200 deep.
  Wire g = relu_graph();
  for (int i = 0; i < 200; ++i) {
    Wire attr;
    attr.str(1, "then_branch").msg(6, g).int_field(20, 5);
    Wire n = testing::node("If", {"c"}, {"o"});
    n.msg(5, attr);
    Wire outer;
    outer.msg(1, n);
    g = outer;
  }
  const std::string err = load_error(testing::model(g).bytes());
  EXPECT_NE(err.find("nested more than 64 messages deep"), std::string::npos) << err.substr(0, 300);
}

TEST(WireErrors, TensorPayloadMustMatchDims) {
  Wire g = relu_graph();
  g.msg(5, testing::float_tensor("w", {2, 3}, {1, 2, 3, 4, 5}));
  const std::string err = load_error(testing::model(g).bytes());
  EXPECT_NE(err.find("graph.initializer[0]"), std::string::npos) << err;
  EXPECT_NE(err.find("raw_data holds 20 bytes; a float tensor of 6 elements needs 24"),
            std::string::npos)
      << err;
}

TEST(WireErrors, NegativeAndOverflowingDims) {
  Wire neg = relu_graph();
  neg.msg(5, testing::float_tensor("w", {-1}, {}));
  EXPECT_NE(load_error(testing::model(neg).bytes()).find("dims[0] is -1"), std::string::npos);
  Wire big = relu_graph();
  big.msg(5, testing::float_tensor("w", {1LL << 40, 1LL << 40}, {}));
  EXPECT_NE(load_error(testing::model(big).bytes()).find("overflows 64 bits"), std::string::npos);
}

TEST(WireErrors, TypedPayloadCountIsChecked) {
  Wire t;
  t.int_field(1, 3).int_field(2, 7).str(8, "i");  // int64[3]
  t.tag(7, 2).varint(2).raw({0x01, 0x02});        // only two packed values
  Wire g = relu_graph();
  g.msg(5, t);
  const std::string err = load_error(testing::model(g).bytes());
  EXPECT_NE(err.find("typed data holds 2 values; a int64 tensor of 3 elements needs 3"),
            std::string::npos)
      << err;
}

TEST(WireErrors, UnknownDataTypeIsRejected) {
  Wire t;
  t.int_field(1, 1).int_field(2, 99).str(8, "w").bytes_field(9, std::vector<std::byte>(4));
  Wire g = relu_graph();
  g.msg(5, t);
  EXPECT_NE(load_error(testing::model(g).bytes()).find("data_type 99"), std::string::npos);
}

TEST(WireErrors, UnknownFieldsAreSkipped) {
  Wire g = relu_graph();
  g.str(999, "from a future ONNX version");
  Wire m = testing::model(g);
  m.int_field(1000, 5);
  EXPECT_NO_THROW(onnx::load(onnx::ModelSource::borrow(m.bytes())));
}

}  // namespace
}  // namespace footprint
