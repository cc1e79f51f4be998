#include "footprint/onnx/tensor_file.hpp"

#include <algorithm>

#include "footprint/core/error.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/onnx/writer.hpp"
#include "proto_parser.hpp"

namespace footprint::onnx {

TensorFile TensorFile::load(ModelSource&& source, const LoadOptions& options) {
  std::pmr::memory_resource* memory =
      options.memory != nullptr ? options.memory : std::pmr::get_default_resource();
  BumpArena arena(memory, 512);
  detail::ProtoParser parser(source, arena, options.max_depth, nullptr);
  const TensorProto* tensor = parser.parse_tensor_file();
  return TensorFile(std::move(source), std::move(arena), tensor, nullptr);
}

TensorFile TensorFile::load_value(ModelSource&& source, ValueFileProto::Kind kind,
                                  const LoadOptions& options) {
  std::pmr::memory_resource* memory =
      options.memory != nullptr ? options.memory : std::pmr::get_default_resource();
  BumpArena arena(memory, 512);
  detail::ProtoParser parser(source, arena, options.max_depth, nullptr);
  const ValueFileProto* value = parser.parse_value_file(kind);
  return TensorFile(std::move(source), std::move(arena), nullptr, value);
}

TensorProto make_tensor_view(BumpArena& arena, std::string_view name, DType dtype,
                             std::span<const int64_t> dims, std::span<const std::byte> data) {
  TensorProto t;
  t.name = arena.copy(name);
  t.data_type = static_cast<int32_t>(dtype);
  auto d = arena.make_array<int64_t>(dims.size());
  std::copy(dims.begin(), dims.end(), d.begin());
  t.dims = Array<int64_t>{d.data(), static_cast<uint32_t>(d.size())};
  t.has_raw_data = true;
  t.raw_data = data;
  if (tensor_storage_bytes(t) != data.size()) {
    throw Error("tensor " + in_quotes(name) + ": " + std::to_string(data.size()) +
                " bytes do not match its dtype and dims (" +
                std::to_string(tensor_storage_bytes(t)) + " bytes)");
  }
  return t;
}

void write_tensor_file(const std::filesystem::path& path, const TensorProto& tensor) {
  write_file_atomically(path, [&](std::ostream& out) { write_tensor(tensor, out); });
}

}  // namespace footprint::onnx
