#pragma once
// `.pb` tensor files: one serialized TensorProto, as the ONNX backend tests store inputs and
// expected outputs. Read with the same checks as models; data stays a view of the file.
//
//   auto input = onnx::TensorFile::load_file("input_0.pb");
//   auto bytes = onnx::tensor_bytes(input.tensor());
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "footprint/core/bump_arena.hpp"
#include "footprint/core/dtype.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/model_source.hpp"
#include "footprint/onnx/proto.hpp"

namespace footprint::onnx {

class TensorFile {
 public:
  static TensorFile load(ModelSource&& source, const LoadOptions& options = {});
  static TensorFile load_file(const std::filesystem::path& path, const LoadOptions& options = {}) {
    return load(ModelSource::map_file(path), options);
  }

  TensorFile(TensorFile&&) noexcept = default;
  TensorFile& operator=(TensorFile&&) noexcept = default;

  // The file as a SequenceProto or an OptionalProto of tensors (the .pb of a sequence or optional
  // input or output; its declared type says which).
  static TensorFile load_value(ModelSource&& source, ValueFileProto::Kind kind,
                               const LoadOptions& options = {});

  // A tensor file's tensor (not for a sequence or optional file).
  const TensorProto& tensor() const { return *tensor_; }
  // A sequence or optional file's contents (nullptr for a tensor file).
  const ValueFileProto* value() const { return value_; }
  const ModelSource& source() const { return source_; }

 private:
  TensorFile(ModelSource&& source, BumpArena&& arena, const TensorProto* tensor,
             const ValueFileProto* value)
      : source_(std::move(source)), arena_(std::move(arena)), tensor_(tensor), value_(value) {}

  ModelSource source_;
  BumpArena arena_;
  const TensorProto* tensor_;
  const ValueFileProto* value_;
};

// A TensorProto that views caller-owned data as raw_data (dims are copied into `arena`).
TensorProto make_tensor_view(BumpArena& arena, std::string_view name, DType dtype,
                             std::span<const int64_t> dims, std::span<const std::byte> data);

void write_tensor_file(const std::filesystem::path& path, const TensorProto& tensor);

}  // namespace footprint::onnx
