#include "footprint/graph/model.hpp"

#include <cstdint>
#include <cstring>
#include <span>
#include <utility>

#include "footprint/core/error.hpp"

namespace footprint::graph {
namespace {

// A FlatBuffer starts with the root table's offset (4 bytes, little-endian) and, for a file with
// an identifier, the identifier in the next 4; TensorFlow Lite's is "TFL3". A ModelProto could
// hold these bytes only as a producer name beginning "TFL3" in a file whose first four bytes, read
// as that offset, point past its end, so the offset is checked too.
bool is_tflite(std::span<const std::byte> bytes) {
  if (bytes.size() < 8 || std::memcmp(bytes.data() + 4, "TFL3", 4) != 0) return false;
  uint32_t root = 0;
  for (size_t i = 0; i < 4; ++i) root |= std::to_integer<uint32_t>(bytes[i]) << (8 * i);
  return root < bytes.size();
}

}  // namespace

Model load_model(onnx::ModelSource&& source, const onnx::LoadOptions& options) {
  if (is_tflite(source.bytes())) {
    throw Error(source.name() +
                ": a TensorFlow Lite model (FlatBuffer \"TFL3\"): not supported yet, footprint "
                "reads ONNX models");
  }
  return Model(onnx::load(std::move(source), options));
}

Model load_model(const std::filesystem::path& path, const onnx::LoadOptions& options) {
  return load_model(onnx::ModelSource::map_file(path), options);
}

}  // namespace footprint::graph
