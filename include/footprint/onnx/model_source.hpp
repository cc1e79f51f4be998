#pragma once
// Where a model's bytes come from. Three kinds, none of which copies the bytes:
//
//   auto a = ModelSource::map_file("model.onnx");          // read-only private mapping
//   auto b = ModelSource::borrow(kFirmwareModel);          // caller keeps the bytes alive
//   auto c = ModelSource::adopt(std::move(buffer), "net");  // ownership moves in
//
// A source is move-only; tensors read from it are spans into bytes().
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace footprint::onnx {

// An RAII read-only mapping of a whole file.
class MappedFile {
 public:
  static MappedFile open(const std::filesystem::path& path);
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  // Gives the whole pages of `range` (inside the mapping) back to the OS: they are dropped from
  // the process's RSS and read back from the file if touched again. For bytes a reader has
  // copied and will not read again (weights packed into another layout). Returns the bytes
  // given back; 0 for a range outside the mapping. The contents seen through bytes() do not
  // change.
  uint64_t release_pages(std::span<const std::byte> range) const;

 private:
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

class ModelSource {
 public:
  static ModelSource map_file(const std::filesystem::path& path);
  // `name` appears in error messages; `base_dir` resolves external data (empty: none allowed).
  static ModelSource borrow(std::span<const std::byte> bytes, std::string name = "<memory>",
                            std::filesystem::path base_dir = {});
  static ModelSource adopt(std::vector<std::byte>&& bytes, std::string name = "<memory>",
                           std::filesystem::path base_dir = {});

  ModelSource(ModelSource&&) noexcept = default;
  ModelSource& operator=(ModelSource&&) noexcept = default;

  std::span<const std::byte> bytes() const { return bytes_; }
  const std::string& name() const { return name_; }
  const std::filesystem::path& base_dir() const { return base_dir_; }
  bool is_mapped() const { return mapping_ != nullptr; }
  // The file a mapped source was opened from; empty for borrowed or adopted bytes.
  const std::filesystem::path& file() const { return file_; }
  // MappedFile::release_pages for a mapped source; 0 (nothing done) for borrowed or adopted
  // bytes, whose memory is the caller's or the heap's.
  uint64_t release_pages(std::span<const std::byte> range) const {
    return mapping_ != nullptr ? mapping_->release_pages(range) : 0;
  }
  bool is_owned() const { return owned_ != nullptr; }

 private:
  ModelSource() = default;

  std::span<const std::byte> bytes_;
  std::string name_;
  std::filesystem::path base_dir_;
  std::filesystem::path file_;
  std::unique_ptr<MappedFile> mapping_;
  std::unique_ptr<std::vector<std::byte>> owned_;
};

}  // namespace footprint::onnx
