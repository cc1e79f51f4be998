#include "flags.hpp"

#include <cmath>

#include "footprint/core/error.hpp"

namespace footprint::cli {

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
