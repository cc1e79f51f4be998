#include "footprint/onnx/model_source.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "footprint/core/error.hpp"
#include "footprint/core/user_files.hpp"

namespace footprint::onnx {

MappedFile MappedFile::open(const std::filesystem::path& path) {
  const RegularFile file = RegularFile::open(path);
  MappedFile m;
  m.size_ = static_cast<size_t>(file.size());
  if (m.size_ == 0) return m;
  void* p = ::mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, file.fd(), 0);
  if (p == MAP_FAILED) {
    throw Error(path.string() + ": cannot map " + std::to_string(m.size_) +
                " bytes: " + std::strerror(errno));
  }
  m.data_ = static_cast<const std::byte*>(p);
  return m;
}

uint64_t MappedFile::release_pages(std::span<const std::byte> range) const {
  const auto begin = reinterpret_cast<uintptr_t>(range.data());
  const auto end = begin + range.size();
  const auto base = reinterpret_cast<uintptr_t>(data_);
  if (data_ == nullptr || begin < base || end > base + size_) return 0;
  // Only pages wholly inside the range: the ones at its ends may hold bytes others still read.
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = end / page * page;
  if (last <= first) return 0;
  // A private read-only file mapping that was never written: MADV_DONTNEED drops the pages and
  // a later access reads them from the file again, so nothing seen through bytes() changes.
  if (::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) return 0;
  return last - first;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

ModelSource ModelSource::map_file(const std::filesystem::path& path) {
  ModelSource s;
  s.mapping_ = std::make_unique<MappedFile>(MappedFile::open(path));
  s.bytes_ = s.mapping_->bytes();
  s.name_ = path.string();
  s.file_ = path;
  s.base_dir_ = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  return s;
}

ModelSource ModelSource::borrow(std::span<const std::byte> bytes, std::string name,
                                std::filesystem::path base_dir) {
  ModelSource s;
  s.bytes_ = bytes;
  s.name_ = std::move(name);
  s.base_dir_ = std::move(base_dir);
  return s;
}

ModelSource ModelSource::adopt(std::vector<std::byte>&& bytes, std::string name,
                               std::filesystem::path base_dir) {
  ModelSource s;
  s.owned_ = std::make_unique<std::vector<std::byte>>(std::move(bytes));
  s.bytes_ = *s.owned_;
  s.name_ = std::move(name);
  s.base_dir_ = std::move(base_dir);
  return s;
}

}  // namespace footprint::onnx
