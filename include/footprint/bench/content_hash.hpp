#pragma once
// Content hashes for parameter representations: xxHash3-128 (libxxhash), 32 lowercase hex
// digits. Fast enough (GB/s) to hash a model's file on every run.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

namespace footprint::bench {

std::string content_hash(std::span<const std::byte> bytes);
// Hashes a file through a read-only mapping (no copy). Throws footprint::Error when unreadable.
std::string file_content_hash(const std::filesystem::path& path);

}  // namespace footprint::bench
