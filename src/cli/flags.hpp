#pragma once
// The ranges of flag values several subcommands share, so that `--threads 10000` or
// `--time-limit nan` is refused the same way everywhere (exit 2) before any library sees it.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "footprint/core/thread_count.hpp"

namespace footprint::cli {

// `text` as a whole base-10 integer; nullopt for anything else (a sign, a suffix, an overflow).
std::optional<int64_t> parse_int64(const std::string& text);
// A byte count: digits, optionally with a fraction and a binary unit (B, KiB, MiB, GiB, TiB):
// "67108864", "64MiB", "1.5GiB". A usage error naming `flag` for anything else or past 2^63.
uint64_t parse_bytes(const std::string& text, const char* flag);
// --threads T for one count.
CLI::Validator thread_count();
// One value of a --threads list ("1,2,4"): a usage error naming `flag` outside 1..kMaxThreads.
int parse_thread_count(const std::string& text, const char* flag);
// --warmup, --repeat and other counts of runs: an integer >= `min`.
CLI::Validator at_least(int min);
// Seconds: finite and above 0 (CLI11's PositiveNumber lets nan and inf through).
CLI::Validator positive_seconds();

}  // namespace footprint::cli
