#include "flags.hpp"

#include <cmath>

#include "footprint/core/error.hpp"

namespace footprint::cli {
namespace {
__extension__ typedef unsigned __int128 Wide;  // a mantissa times a unit, exactly
}  // namespace

std::optional<int64_t> parse_int64(const std::string& text) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size()) return std::nullopt;
  return v;
}

uint64_t parse_bytes(const std::string& text, const char* flag) {
  auto bad = [&] {
    return UsageError(std::string(flag) + ": " + in_quotes(text) +
                      " is not a byte count (67108864, 64MiB, 1.5GiB, 24GB)");
  };
  size_t i = 0;
  Wide mantissa = 0;
  Wide scale = 1;  // 10^(digits after the point)
  bool digits = false;
  bool point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    digits = true;
    mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
    if (point) scale *= 10;
    if (mantissa > Wide{1} << 100 || scale > Wide{1} << 60) throw bad();
  }
  if (!digits) throw bad();
  if (i < text.size() && text[i] == ' ') ++i;  // "64 MiB" as "64MiB"
  const std::string unit = text.substr(i);
  // KiB, MiB, GiB, TiB are powers of 1024; kB, MB, GB, TB powers of 1000 (SI: a "24 GB" card).
  Wide factor = 0;
  if (unit.empty() || unit == "B") factor = 1;
  if (unit == "KiB") factor = uint64_t{1} << 10;
  if (unit == "MiB") factor = uint64_t{1} << 20;
  if (unit == "GiB") factor = uint64_t{1} << 30;
  if (unit == "TiB") factor = uint64_t{1} << 40;
  constexpr uint64_t kKilo = 1000;
  if (unit == "kB" || unit == "KB") factor = kKilo;
  if (unit == "MB") factor = Wide{kKilo} * kKilo;
  if (unit == "GB") factor = Wide{kKilo} * kKilo * kKilo;
  if (unit == "TB") factor = Wide{kKilo} * kKilo * kKilo * kKilo;
  if (factor == 0 || (i > 0 && text[i - 1] == ' ' && unit.empty())) throw bad();
  const Wide bytes = mantissa * factor;
  if (bytes % scale != 0 || bytes / scale > Wide{1} << 63) throw bad();
  return static_cast<uint64_t>(bytes / scale);
}

CLI::Validator thread_count() {
  return CLI::Range(1, kMaxThreads);
}

int parse_thread_count(const std::string& text, const char* flag) {
  const std::optional<int64_t> v = parse_int64(text);
  if (!v || *v < 1 || *v > kMaxThreads) {
    throw UsageError(std::string(flag) + ": " + in_quotes(text) + " is not a thread count in 1.." +
                     std::to_string(kMaxThreads));
  }
  return static_cast<int>(*v);
}

CLI::Validator at_least(int min) {
  return CLI::Validator(
      [min](const std::string& text) -> std::string {
        const std::optional<int64_t> v = parse_int64(text);
        if (!v || *v < min) {
          return "Value " + text + " is not an integer >= " + std::to_string(min);
        }
        return {};
      },
      "INT>=" + std::to_string(min));
}

CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        size_t used = 0;
        double v = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != text.size() || !std::isfinite(v) || v <= 0) {
          return "Value " + text + " is not a finite number of seconds above 0";
        }
        return {};
      },
      "SECONDS>0");
}

}  // namespace footprint::cli
