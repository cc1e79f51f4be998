#pragma once
// Runs the footprint binary as a user would and captures exit code, stdout and stderr.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "test_support.hpp"

namespace footprint {

struct CliRun {
  int exit_code;
  std::string out;
  std::string err;
};

inline CliRun run(const std::string& args) {
  testing::TempDir dir;
  const auto err_path = dir.path() / "stderr";
  const std::string cmd = std::string(FOOTPRINT_CLI) + " " + args + " 2>" + err_path.string();
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(p);
  const auto err_bytes = testing::read_file(err_path);
  return {WEXITSTATUS(status), out,
          std::string(reinterpret_cast<const char*>(err_bytes.data()), err_bytes.size())};
}

}  // namespace footprint
