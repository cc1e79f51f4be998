#pragma once
// The protobuf wire-format parser behind onnx::load and tensor files (internal).
//
// Each message is read in two passes over its own bytes: the first validates every tag and
// length and counts the repeated fields, the second fills arrays allocated at their exact size.
// So the tree costs memory in proportion to the fields actually present, never to a length or
// count the file merely claims.
#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory_resource>
#include <span>
#include <string>
#include <string_view>

#include "footprint/core/bump_arena.hpp"
#include "footprint/onnx/model_source.hpp"
#include "footprint/onnx/proto.hpp"

namespace footprint::onnx::detail {

// Resolves an external-data location to mapped bytes; implemented by the owner of the mappings.
class ExternalResolver {
 public:
  virtual ~ExternalResolver() = default;
  // Returns the whole file named by `location` (already checked to stay inside the base folder).
  virtual std::span<const std::byte> file_bytes(std::string_view location) = 0;
};

// Storage for `count` elements of one repeated field, allocated in blocks no larger than the
// arena's chunk size, filled in order by the second pass.
template <class T>
struct Filler {
  Filler(BumpArena& arena, uint32_t count) : total(count) {
    if (count == 0) return;
    const size_t per_chunk = std::max<size_t>(1, arena.chunk_bytes() / sizeof(T));
    if (count <= per_chunk) {
      contiguous = arena.make_array<T>(count).data();
      return;
    }
    while ((size_t{2} << shift) <= per_chunk) ++shift;
    if (shift == 0) shift = 1;  // blocks of one element would read as "contiguous"
    const size_t per_block = size_t{1} << shift;
    const size_t n_blocks = (count + per_block - 1) / per_block;
    blocks_storage = arena.make_array<T*>(n_blocks);
    for (size_t b = 0; b < n_blocks; ++b) {
      blocks_storage[b] = arena.make_array<T>(std::min(per_block, count - b * per_block)).data();
    }
  }
  T& next() {
    const uint32_t i = used++;
    if (shift == 0) return contiguous[i];
    return blocks_storage[i >> shift][i & ((uint32_t{1} << shift) - 1)];
  }
  Array<T> done() const {
    if (used == 0) return {};
    if (shift == 0) return Array<T>{contiguous, used, 0};
    return Array<T>{reinterpret_cast<const T*>(blocks_storage.data()), used, shift};
  }

  T* contiguous = nullptr;
  std::span<T*> blocks_storage;
  uint32_t total = 0;
  uint32_t used = 0;
  uint32_t shift = 0;
};

class ProtoParser {
 public:
  ProtoParser(const ModelSource& source, BumpArena& arena, int max_depth,
              ExternalResolver* external);

  const ModelProto* parse_model();
  const TensorProto* parse_tensor_file();
  // The file as a SequenceProto or an OptionalProto (which a .pb does not say by itself: the
  // model's declared type does).
  const ValueFileProto* parse_value_file(ValueFileProto::Kind kind);

  struct Frame {
    std::string_view field;
    int64_t index;  // -1 for a singular field
  };

 private:
  struct Field {
    uint32_t number = 0;
    uint8_t wire = 0;
    uint64_t varint = 0;
    std::span<const std::byte> bytes;  // payload of a length-delimited or fixed field
    const std::byte* at = nullptr;     // where the tag starts
  };
  class Cursor;
  using Counts = std::array<uint32_t, 32>;

  // First pass: validates the message and counts occurrences per field number (< 32).
  Counts scan(std::span<const std::byte> msg);
  template <class T>
  Filler<T> array_for(const Counts& counts, uint32_t field) {
    return Filler<T>(arena_, counts[field]);
  }

  void parse_model_into(std::span<const std::byte> msg, ModelProto& out);
  void parse_graph(std::span<const std::byte> msg, GraphProto& out);
  void parse_node(std::span<const std::byte> msg, NodeProto& out);
  void parse_attribute(std::span<const std::byte> msg, AttributeProto& out);
  void parse_tensor(std::span<const std::byte> msg, TensorProto& out);
  void parse_sparse_tensor(std::span<const std::byte> msg, SparseTensorProto& out);
  void parse_type(std::span<const std::byte> msg, TypeProto& out);
  void parse_type_tensor(std::span<const std::byte> msg, TypeProto& out);
  void parse_shape(std::span<const std::byte> msg, TypeProto& out);
  void parse_dimension(std::span<const std::byte> msg, DimensionProto& out);
  void parse_value_info(std::span<const std::byte> msg, ValueInfoProto& out);
  void parse_function(std::span<const std::byte> msg, FunctionProto& out);
  void parse_training_info(std::span<const std::byte> msg, TrainingInfoProto& out);
  void parse_string_entry(std::span<const std::byte> msg, StringEntry& out);
  void parse_opset(std::span<const std::byte> msg, OperatorSetId& out);
  void parse_annotation(std::span<const std::byte> msg, TensorAnnotation& out);
  void parse_segment(std::span<const std::byte> msg, TensorProto& out);
  void parse_held(std::span<const std::byte> msg, ValueFileProto& out);

  // Sub-message helpers that maintain the field path and the depth bound.
  template <class T, class Fn>
  void nested(const Field& f, std::string_view name, int64_t index, T& out, Fn parse);
  template <class T, class Fn>
  void nested_item(const Field& f, std::string_view name, Filler<T>& filler, Fn parse);
  template <class T, class Fn>
  const T* nested_new(const Field& f, std::string_view name, Fn parse);

  void collect_scalar(RepeatedScalar& r, std::span<const std::byte> msg, const Field& f,
                      ScalarKind kind);
  void validate_tensor(TensorProto& t, const std::byte* msg_start);
  void resolve_external(TensorProto& t, uint64_t expected_bytes, const std::byte* msg_start);

  [[noreturn]] void fail(const std::byte* at, std::string_view what) const;
  void expect_wire(const Field& f, uint8_t wire, std::string_view name) const;
  uint64_t offset_of(const std::byte* p) const { return static_cast<uint64_t>(p - base_); }

  const ModelSource& source_;
  const std::byte* base_;
  BumpArena& arena_;
  int max_depth_;
  ExternalResolver* external_;
  std::array<Frame, 256> path_{};
  int path_len_ = 0;
  int depth_ = 0;
};

}  // namespace footprint::onnx::detail
