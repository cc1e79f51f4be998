// The run's context: what a reader needs to know whether two runs are comparable.
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "footprint/bench/record.hpp"
#include "footprint/version.hpp"

#ifndef FOOTPRINT_BUILD_TYPE
#define FOOTPRINT_BUILD_TYPE "unknown"
#endif
#ifndef FOOTPRINT_SOURCE_DIR
#define FOOTPRINT_SOURCE_DIR "."
#endif

namespace footprint::bench {
namespace {

std::string proc_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

// The commit the binary was built from is what the source tree holds at HEAD (the build dir
// lives in it); FOOTPRINT_GIT_COMMIT overrides for builds made elsewhere.
std::string git_commit() {
  if (const char* env = std::getenv("FOOTPRINT_GIT_COMMIT")) return env;
  const std::string cmd =
      std::string("git -C '") + FOOTPRINT_SOURCE_DIR + "' rev-parse HEAD 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return "";
  std::array<char, 128> buf{};
  std::string out;
  while (std::fgets(buf.data(), buf.size(), pipe.get()) != nullptr) out += buf.data();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

std::string executable_path() {
  std::array<char, 4096> buf{};
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<size_t>(n)) : "";
}

}  // namespace

RunContext current_context() {
  RunContext c;
  c.date = utc_now();
  c.run_id = c.date + "-" + std::to_string(getpid());
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) == 0) c.host = host.data();
  c.cpu = proc_field("/proc/cpuinfo", "model name");
  c.num_cpus = static_cast<int>(std::thread::hardware_concurrency());
  const std::string mem = proc_field("/proc/meminfo", "MemTotal");  // "NNN kB"
  if (!mem.empty()) c.memory_bytes = std::strtoull(mem.c_str(), nullptr, 10) * 1024;
  utsname u{};
  if (uname(&u) == 0) c.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
#if defined(__clang__)
  c.compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  c.compiler = std::string("g++ ") + __VERSION__;
#endif
  c.build_type = FOOTPRINT_BUILD_TYPE;
  c.footprint_version = std::string(kVersion);
  c.git_commit = git_commit();
  c.executable = executable_path();
  return c;
}

}  // namespace footprint::bench
