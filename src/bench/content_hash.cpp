#include "footprint/bench/content_hash.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include "footprint/onnx/model_source.hpp"

namespace footprint::bench {

std::string content_hash(std::span<const std::byte> bytes) {
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

std::string file_content_hash(const std::filesystem::path& path) {
  // Mapped, not read: hashing a multi-gigabyte model must not copy it onto the heap.
  const onnx::MappedFile file = onnx::MappedFile::open(path);
  return content_hash(file.bytes());
}

}  // namespace footprint::bench
