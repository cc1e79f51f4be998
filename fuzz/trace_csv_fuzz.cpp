// libFuzzer target for the two text readers: a JSON memory trace (parsed, then simulated into a
// timeline) and a MiniMalloc buffer CSV. The first input byte picks the reader, the rest is the
// file. footprint::Error with a one-line, non-empty message is the only acceptable failure;
// anything else (a sanitizer report, another exception, a size that wrapped into a timeline
// figure smaller than a tensor it holds) aborts, so libFuzzer records the input.
//
//   build/fuzz/bin/trace_csv_fuzz -dict=... corpus/   # seeds: examples/traces/*.json with a
//                                                     # leading 't', plan CSVs with a leading 'c'
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "footprint/analysis/timeline.hpp"
#include "footprint/analysis/trace_format.hpp"
#include "footprint/core/error.hpp"
#include "footprint/plan/buffer_csv.hpp"

namespace {

using namespace footprint;

[[noreturn]] void die(std::string_view what, const std::string& detail = {}) {
  std::fprintf(stderr, "\ntrace_csv_fuzz: %.*s%s%s\n", static_cast<int>(what.size()), what.data(),
               detail.empty() ? "" : ": ", detail.c_str());
  std::abort();
}

void check_message(const Error& e) {
  const std::string m = e.what();
  if (m.empty()) die("footprint::Error with an empty message");
  if (m.find_first_of("\r\n") != std::string::npos) die("error message is not one line", m);
}

// The timeline's figures are checked sums: none may be smaller than a buffer live in it.
void check_timeline(const analysis::Timeline& t) {
  for (const analysis::BufferLifetime& b : t.buffers) {
    if (b.first < 0 || static_cast<size_t>(b.last) >= t.steps.size() || b.first > b.last) continue;
    if (t.steps[static_cast<size_t>(b.first)].live_bytes < b.bytes)
      die("a step's live bytes are below a buffer live in it (a wrapped sum)");
  }
  if (!t.steps.empty() && t.total_peak_bytes < t.weights_bytes)
    die("total peak below the weights (a wrapped sum)");
}

void trace(std::string_view text) {
  analysis::Trace tr;
  try {
    tr = analysis::parse_trace(text, "fuzz.json");
  } catch (const Error& e) {
    check_message(e);
    return;
  }
  try {
    const analysis::Timeline t = analysis::simulate(tr.program);
    check_timeline(t);
  } catch (const Error& e) {
    check_message(e);
  }
}

void csv(std::string_view text) {
  try {
    (void)plan::parse_buffers_csv(text, "fuzz.csv");
  } catch (const Error& e) {
    check_message(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    trace(text);
  } else {
    csv(text);
  }
  return 0;
}
