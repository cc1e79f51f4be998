#pragma once
// Headless Chromium for the report tests: where it is, and running it on a file.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "test_support.hpp"

namespace footprint::testing {

// $FOOTPRINT_CHROMIUM, else the first of chromium / chromium-browser on PATH; empty when none.
inline std::filesystem::path find_chromium() {
  if (const char* env = std::getenv("FOOTPRINT_CHROMIUM")) return env;
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  for (const char* name : {"chromium", "chromium-browser"}) {
    std::string_view rest = path;
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      const std::filesystem::path dir(std::string(rest.substr(0, colon)));
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      std::error_code ec;
      if (!dir.empty() && std::filesystem::is_regular_file(dir / name, ec)) return dir / name;
    }
  }
  return {};
}

struct BrowserRun {
  int exit_code = -1;
  std::string out;  // stdout (the DOM with --dump-dom)
};

// Runs `chromium --headless --no-sandbox --disable-gpu ARGS file://PAGE` with a profile of its
// own (tests may run in parallel), at most two minutes.
inline BrowserRun run_chromium(const std::filesystem::path& chromium, const std::string& args,
                               const std::filesystem::path& page) {
  TempDir profile;
  const std::string cmd =
      "timeout 120 " + chromium.string() +
      " --headless --no-sandbox --disable-gpu --user-data-dir=" + profile.path().string() + " " +
      args + " file://" + std::filesystem::absolute(page).string() + " 2>/dev/null";
  BrowserRun r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 65536> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace footprint::testing

// Skips with the reason when there is no Chromium to run (install: apt-get install chromium).
#define FOOTPRINT_REQUIRE_CHROMIUM(var)                                               \
  const std::filesystem::path var = ::footprint::testing::find_chromium();            \
  do {                                                                                \
    if (var.empty())                                                                  \
      GTEST_SKIP() << "chromium not found on PATH (apt-get install chromium, or set " \
                      "FOOTPRINT_CHROMIUM): the browser rendering test is skipped";   \
  } while (0)
