#include "footprint/bench/registry.hpp"

#include <algorithm>

#include "footprint/core/error.hpp"

namespace footprint::bench {

const Param& Params::at(const std::string& name) const {
  for (const Param& p : values_)
    if (p.name() == name) return p;
  throw Error("benchmark parameter '" + name + "' is not set");
}

bool Params::has(const std::string& name) const {
  return std::any_of(values_.begin(), values_.end(),
                     [&](const Param& p) { return p.name() == name; });
}

Benchmark& Benchmark::parametrize(const std::string& name, std::vector<Param> values) {
  if (values.empty()) throw UsageError("parameter '" + name + "' has no values");
  std::vector<std::vector<Param>> axis;
  axis.reserve(values.size());
  for (Param& v : values) axis.push_back({std::move(v)});
  axes_.push_back(std::move(axis));
  return *this;
}

Benchmark& Benchmark::parametrize(const std::vector<std::string>& names,
                                  const std::vector<std::vector<Param>>& rows) {
  if (rows.empty()) throw UsageError("parameters have no rows");
  for (const auto& row : rows) {
    if (row.size() != names.size()) throw UsageError("a parameter row has the wrong length");
  }
  std::vector<std::vector<Param>> axis;
  for (const auto& row : rows) {
    std::vector<Param> point;
    // The row's values take the names given, so callers may build them unnamed.
    for (size_t i = 0; i < row.size(); ++i) point.push_back(row[i].renamed(names[i]));
    axis.push_back(std::move(point));
  }
  axes_.push_back(std::move(axis));
  return *this;
}

Benchmark& Benchmark::tags(std::vector<std::string> t) {
  tags_ = std::move(t);
  return *this;
}
Benchmark& Benchmark::setup(Hook h) {
  setup_ = std::move(h);
  return *this;
}
Benchmark& Benchmark::teardown(Hook h) {
  teardown_ = std::move(h);
  return *this;
}
Benchmark& Benchmark::uses(std::vector<std::string> keys) {
  fixed_keys_ = std::move(keys);
  return *this;
}
Benchmark& Benchmark::uses(MemoKeys keys) {
  case_keys_ = std::move(keys);
  return *this;
}

std::vector<Params> Benchmark::cases() const {
  std::vector<Params> out(1);
  for (const auto& axis : axes_) {
    std::vector<Params> next;
    next.reserve(out.size() * axis.size());
    for (const Params& prefix : out) {
      for (const auto& point : axis) {
        Params p = prefix;
        for (const Param& v : point) p.add(v);
        next.push_back(std::move(p));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::vector<std::string> Benchmark::memo_keys(const Params& p) const {
  std::vector<std::string> keys = fixed_keys_;
  if (case_keys_) {
    for (std::string& k : case_keys_(p)) keys.push_back(std::move(k));
  }
  return keys;
}

Benchmark& Registry::add(std::string name, Hook body) {
  benchmarks_.push_back(std::make_unique<Benchmark>(std::move(name), std::move(body)));
  return *benchmarks_.back();
}

void Registry::define_memos(MemoCache& cache) const {
  for (const auto& define : memo_defs_) define(cache);
}

}  // namespace footprint::bench
