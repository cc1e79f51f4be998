#include "footprint/onnx/model.hpp"

#include <algorithm>
#include <system_error>

#include "footprint/core/error.hpp"
#include "proto_parser.hpp"

namespace footprint::onnx {
namespace {

// The parse tree grows with the number of messages, not with the file size (weights dominate big
// files), so chunks stay small: a quarter of a tiny file, at most 8 KiB. Each chunk wastes at
// most its tail, and arrays larger than a chunk get one of their own.
size_t arena_chunk_for(size_t file_bytes) {
  return std::clamp<size_t>(file_bytes / 4, 512, 8192);
}

const GraphProto kEmptyGraph{};

}  // namespace

namespace detail {

// Maps each external-data file once and keeps the mapping for the model's lifetime.
class ExternalFiles final : public ExternalResolver {
 public:
  ExternalFiles(const std::filesystem::path& base_dir, std::pmr::memory_resource* memory)
      : base_dir_(base_dir), files_(memory) {}

  std::span<const std::byte> file_bytes(std::string_view location) override {
    for (const auto& [name, mapping] : files_) {
      if (name == location) return mapping.bytes();
    }
    if (base_dir_.empty()) throw Error("no folder to resolve " + in_quotes(location) + "");
    std::error_code ec;
    const auto base = std::filesystem::weakly_canonical(base_dir_, ec);
    const auto target = std::filesystem::weakly_canonical(base_dir_ / std::string(location), ec);
    if (ec) throw Error("cannot resolve external data " + in_quotes(location) + "");
    // Symlinks may still point outside the folder even though the name itself stays inside.
    const auto rel = target.lexically_relative(base);
    if (rel.empty() || *rel.begin() == "..") {
      throw Error("external data " + in_quotes(location) + " resolves outside " + base.string());
    }
    files_.emplace_back(location, MappedFile::open(target));
    return files_.back().second.bytes();
  }

  std::pmr::vector<std::pair<std::string_view, MappedFile>> take() { return std::move(files_); }

 private:
  std::filesystem::path base_dir_;
  std::pmr::vector<std::pair<std::string_view, MappedFile>> files_;
};

}  // namespace detail

Model::Model(ModelSource&& source, BumpArena&& arena, const ModelProto* proto,
             std::pmr::vector<ExternalFile>&& externals)
    : source_(std::move(source)),
      arena_(std::move(arena)),
      proto_(proto),
      externals_(std::move(externals)) {}

const GraphProto& Model::graph() const {
  return proto_->graph != nullptr ? *proto_->graph : kEmptyGraph;
}

int64_t Model::opset_version(std::string_view domain) const {
  const bool default_domain = domain.empty() || domain == "ai.onnx";
  for (const OperatorSetId& op : proto_->opset_import) {
    const bool match =
        default_domain ? (op.domain.empty() || op.domain == "ai.onnx") : op.domain == domain;
    if (match) return op.version;
  }
  return 0;
}

std::vector<std::filesystem::path> Model::external_files() const {
  std::vector<std::filesystem::path> out;
  out.reserve(externals_.size());
  for (const ExternalFile& e : externals_) out.emplace_back(std::string(e.first));
  return out;
}

std::vector<std::filesystem::path> Model::files() const {
  std::vector<std::filesystem::path> out;
  if (!source_.file().empty()) out.push_back(source_.file());
  for (const std::filesystem::path& f : external_files()) out.push_back(source_.base_dir() / f);
  return out;
}

Model load(ModelSource&& source, const LoadOptions& options) {
  std::pmr::memory_resource* memory =
      options.memory != nullptr ? options.memory : std::pmr::get_default_resource();
  BumpArena arena(memory, arena_chunk_for(source.bytes().size()));
  detail::ExternalFiles externals(source.base_dir(), memory);
  detail::ProtoParser parser(source, arena, options.max_depth,
                             source.base_dir().empty() ? nullptr : &externals);
  const ModelProto* proto = parser.parse_model();
  return Model(std::move(source), std::move(arena), proto, externals.take());
}

}  // namespace footprint::onnx
