#pragma once
// Loading an ONNX model without copying its weights.
//
//   auto model = footprint::onnx::load(footprint::onnx::ModelSource::map_file("net.onnx"));
//   for (const auto& t : model.graph().initializers) use(t.raw_data);  // spans into the mapping
//
// Every length, count, offset and dim in the file is checked against the bytes that remain and
// against overflow before it is used, nesting is bounded, and external data may not leave the
// model's folder. A failure throws footprint::Error with one line: file, byte offset, field path,
// and what was expected. The source passed in is moved into the model only when loading succeeds.
#include <cstdint>
#include <filesystem>
#include <memory_resource>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "footprint/core/bump_arena.hpp"
#include "footprint/onnx/model_source.hpp"
#include "footprint/onnx/proto.hpp"

namespace footprint::onnx {

struct LoadOptions {
  // Where the parsed tree and bookkeeping are allocated (nullptr: the default resource). Tensor
  // payloads are never allocated: they stay in the source or in mapped external files.
  std::pmr::memory_resource* memory = nullptr;
  // Messages nested deeper than this (graphs in attributes, types in types) are an error.
  int max_depth = 64;
};

class Model {
 public:
  Model(Model&&) noexcept = default;
  Model& operator=(Model&&) noexcept = default;

  const ModelProto& proto() const { return *proto_; }
  // The main graph; an empty graph when the model has none.
  const GraphProto& graph() const;
  const ModelSource& source() const { return source_; }
  // Opset version imported for `domain` ("" and "ai.onnx" are the same), 0 when not imported.
  int64_t opset_version(std::string_view domain) const;
  // Bytes the parsed tree occupies (arena chunks from the memory resource).
  size_t tree_bytes() const { return arena_.reserved_bytes(); }
  // The files external data was read from, relative to the model's folder.
  std::vector<std::filesystem::path> external_files() const;
  // Every file the model's bytes are read from, as opened: the model's own when it is mapped,
  // then its external data files. What a command that writes files must not write over.
  std::vector<std::filesystem::path> files() const;

 private:
  friend Model load(ModelSource&& source, const LoadOptions& options);
  using ExternalFile = std::pair<std::string_view, MappedFile>;
  Model(ModelSource&& source, BumpArena&& arena, const ModelProto* proto,
        std::pmr::vector<ExternalFile>&& externals);

  ModelSource source_;
  BumpArena arena_;
  const ModelProto* proto_;
  std::pmr::vector<ExternalFile> externals_;
};

Model load(ModelSource&& source, const LoadOptions& options = {});
inline Model load_file(const std::filesystem::path& path, const LoadOptions& options = {}) {
  return load(ModelSource::map_file(path), options);
}

}  // namespace footprint::onnx
