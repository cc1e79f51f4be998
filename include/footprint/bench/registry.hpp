#pragma once
// Registering benchmarks: a function, its parameters (each parametrize() call adds an axis;
// the cases are the product of the axes, a grid), tags, setUp/tearDown hooks and the memos it
// uses.
//
//   bench::Registry reg;
//   reg.memo<onnx::Model>("model:vgg19", [](bench::MemoCache&) { return load(...); });
//   reg.add("run", [](bench::State& s) { ... s.memo<onnx::Model>("model:vgg19") ... })
//       .parametrize("threads", {1, 2})            // axis
//       .parametrize({"n", "c"}, {{1, 3}, {8, 3}})  // one axis of (n, c) rows: a list
//       .tags({"cpu"})
//       .uses("model:vgg19");
//
// The body runs once per repetition; setUp and tearDown run once per case around them.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "footprint/bench/memo_cache.hpp"
#include "footprint/bench/param.hpp"

namespace footprint::bench {

// One case's parameter values, by name.
class Params {
 public:
  void add(Param p) { values_.push_back(std::move(p)); }
  const std::vector<Param>& all() const { return values_; }
  std::vector<Param>& all() { return values_; }
  const Param& at(const std::string& name) const;
  template <class T>
  const T& get(const std::string& name) const {
    return at(name).get<T>();
  }
  bool has(const std::string& name) const;

 private:
  std::vector<Param> values_;
};

// What a benchmark's hooks and body see.
class State {
 public:
  State(const Params& params, MemoCache& memos) : params_(&params), memos_(&memos) {}
  const Params& params() const { return *params_; }
  template <class T>
  const T& param(const std::string& name) const {
    return params_->get<T>(name);
  }
  template <class T>
  T& memo(const std::string& key) {
    return memos_->get<T>(key);
  }
  MemoCache& memos() { return *memos_; }

  // footprint's predicted peak for what the body runs (a model's Session::prepared()).
  void set_predicted_peak_bytes(uint64_t bytes) { predicted_peak_bytes_ = bytes; }
  uint64_t predicted_peak_bytes() const { return predicted_peak_bytes_; }
  // Extra named figures for the record.
  void set_counter(const std::string& name, double value) { counters_[name] = value; }
  const std::map<std::string, double>& counters() const { return counters_; }
  // Per-case scratch the hooks share with the body (a session, inputs); released after
  // tearDown, before the next case.
  std::shared_ptr<void>& user() { return user_; }

 private:
  const Params* params_;
  MemoCache* memos_;
  uint64_t predicted_peak_bytes_ = 0;
  std::map<std::string, double> counters_;
  std::shared_ptr<void> user_;
};

using Hook = std::function<void(State&)>;
using MemoKeys = std::function<std::vector<std::string>(const Params&)>;

class Benchmark {
 public:
  Benchmark(std::string name, Hook body) : name_(std::move(name)), body_(std::move(body)) {}

  Benchmark& parametrize(const std::string& name, std::vector<Param> values);
  // Plain values ({1, 2}); a braced list of Params takes the overload above.
  template <class T, class = std::enable_if_t<!std::is_same_v<T, Param>>>
  Benchmark& parametrize(const std::string& name, std::initializer_list<T> values) {
    std::vector<Param> v;
    for (const T& x : values) v.emplace_back(name, x);
    return parametrize(name, std::move(v));
  }
  // One axis whose points set several parameters together (a list of tuples, not a grid).
  Benchmark& parametrize(const std::vector<std::string>& names,
                         const std::vector<std::vector<Param>>& rows);
  Benchmark& tags(std::vector<std::string> t);
  Benchmark& setup(Hook h);
  Benchmark& teardown(Hook h);
  Benchmark& uses(std::vector<std::string> keys);
  // Memos that depend on the case (the model named by a parameter).
  Benchmark& uses(MemoKeys keys);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& tag_list() const { return tags_; }
  const Hook& body() const { return body_; }
  const Hook& setup_hook() const { return setup_; }
  const Hook& teardown_hook() const { return teardown_; }
  // The product of the axes, in declaration order (the last axis varies fastest).
  std::vector<Params> cases() const;
  std::vector<std::string> memo_keys(const Params& p) const;

 private:
  std::string name_;
  Hook body_;
  Hook setup_;
  Hook teardown_;
  std::vector<std::vector<std::vector<Param>>> axes_;  // axis -> point -> params
  std::vector<std::string> tags_;
  std::vector<std::string> fixed_keys_;
  MemoKeys case_keys_;
};

class Registry {
 public:
  Benchmark& add(std::string name, Hook body);
  template <class T, class F>
  void memo(const std::string& key, F make, uint64_t bytes_hint = 0) {
    memo_defs_.push_back([key, make = std::move(make), bytes_hint](MemoCache& c) {
      c.define<T>(key, make, bytes_hint);
    });
  }
  const std::vector<std::unique_ptr<Benchmark>>& benchmarks() const { return benchmarks_; }
  // Defines every registered memo in `cache`.
  void define_memos(MemoCache& cache) const;
  // Drops every benchmark and its parameters (records keep only representations).
  void clear() { benchmarks_.clear(); }

 private:
  std::vector<std::unique_ptr<Benchmark>> benchmarks_;
  std::vector<std::function<void(MemoCache&)>> memo_defs_;
};

}  // namespace footprint::bench
