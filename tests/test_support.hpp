#pragma once
// Helpers shared by the tests: where the shared models are, and reading files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

namespace footprint::testing {

// ../shared beside the checkout (or $FOOTPRINT_SHARED); empty when absent.
inline std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("FOOTPRINT_SHARED")) return env;
  std::filesystem::path p = FOOTPRINT_SHARED_DIR;
  return std::filesystem::exists(p / "models") ? p : std::filesystem::path();
}

// Every model.onnx under shared/models, sorted.
inline std::vector<std::filesystem::path> shared_models() {
  std::vector<std::filesystem::path> out;
  const auto dir = shared_dir();
  if (dir.empty()) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir / "models")) {
    if (e.is_regular_file() && e.path().filename() == "model.onnx") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<std::byte> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary | std::ios::ate);
  std::vector<std::byte> bytes(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

inline void write_file(const std::filesystem::path& p, std::span<const std::byte> bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// A fresh empty folder under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "footprint-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace footprint::testing

#define FOOTPRINT_REQUIRE_SHARED()                                                            \
  do {                                                                                        \
    if (::footprint::testing::shared_dir().empty())                                           \
      GTEST_SKIP() << "../shared/models not found (set FOOTPRINT_SHARED): shared-model test " \
                      "skipped";                                                              \
  } while (0)
