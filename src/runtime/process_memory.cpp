#include "footprint/runtime/process_memory.hpp"

#include <fstream>
#include <string>

namespace footprint::runtime {
namespace {

// Scans a /proc file of "Key:   123 kB" lines; calls f(key, bytes) for each.
template <class F>
bool scan_kb_file(const char* path, F&& f) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon);
    size_t pos = colon + 1;
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
    uint64_t kb = 0;
    bool any = false;
    while (pos < line.size() && line[pos] >= '0' && line[pos] <= '9') {
      kb = kb * 10 + static_cast<uint64_t>(line[pos++] - '0');
      any = true;
    }
    if (any && line.find("kB", pos) != std::string::npos) f(key, kb * 1024);
  }
  return true;
}

}  // namespace

std::optional<ProcessMemory> read_process_memory() {
  ProcessMemory m;
  const bool status = scan_kb_file("/proc/self/status", [&](const std::string& k, uint64_t b) {
    if (k == "VmRSS") m.rss_bytes = b;
    if (k == "VmHWM") m.peak_rss_bytes = b;
  });
  if (!status) return std::nullopt;
  uint64_t rss = 0;
  scan_kb_file("/proc/self/smaps_rollup", [&](const std::string& k, uint64_t b) {
    if (k == "Rss") rss = b;
    if (k == "Private_Clean" || k == "Private_Dirty") m.private_bytes += b;
    if (k == "Anonymous") m.anonymous_bytes = b;
  });
  m.file_backed_bytes = rss > m.anonymous_bytes ? rss - m.anonymous_bytes : 0;
  return m;
}

}  // namespace footprint::runtime
