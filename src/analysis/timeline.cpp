#include "footprint/analysis/timeline.hpp"

#include <algorithm>
#include <limits>

#include "footprint/core/checked_math.hpp"
#include "footprint/core/error.hpp"

namespace footprint::analysis {

std::string_view category_name(Category c) {
  switch (c) {
    case Category::weights:
      return "weights";
    case Category::inputs:
      return "inputs";
    case Category::activations:
      return "activations";
    case Category::workspace:
      return "workspace";
    case Category::outputs:
      return "outputs";
  }
  return "?";
}

namespace {

constexpr int kBeforeRun = -1;
constexpr int kNever = std::numeric_limits<int>::max();

// One buffer: a tensor that is not a view, with every tensor aliasing it.
struct Buffer {
  int tensor = 0;
  Category category = Category::activations;
  bool held = false;          // never released (outputs, caller-held inputs)
  int alloc = kBeforeRun;     // step that allocates it
  int free_after = kNever;    // last step it is live in
  int last_use = kBeforeRun;  // last step reading or writing any alias
  std::vector<int> aliases;   // views and in-place outputs sharing it
};

class Simulator {
 public:
  explicit Simulator(const MemoryProgram& p) : p_(p) {}

  Timeline run() {
    const size_t n = p_.tensors.size();
    root_.assign(n, -1);
    producer_.assign(n, kBeforeRun);
    find_roots();
    find_producers();
    if (!p_.explicit_frees) apply_in_place();
    build_buffers();
    if (p_.explicit_frees) {
      apply_explicit_frees();
    } else {
      apply_last_use_frees();
    }
    return tally();
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error("memory program: " + what); }

  const std::string& name(int t) const { return p_.tensors[t].name; }

  // Each tensor's buffer: the end of its chain of views. A chain is walked once, up to the first
  // tensor whose root is known, and every tensor on it gets that root, so a view chain a million
  // deep is linear, not quadratic.
  void find_roots() {
    const int n = static_cast<int>(p_.tensors.size());
    std::vector<int> path;
    for (int start = 0; start < n; ++start) {
      int t = start;
      path.clear();
      while (root_[t] < 0 && p_.tensors[t].view_of >= 0) {
        const int next = p_.tensors[t].view_of;
        if (next >= n) fail(in_quotes(name(t)) + " views a missing tensor");
        if (static_cast<int>(path.size()) > n)
          fail("views form a cycle through " + in_quotes(name(start)));
        path.push_back(t);
        t = next;
      }
      const int root = root_[t] >= 0 ? root_[t] : t;
      root_[t] = root;
      for (int v : path) root_[v] = root;
    }
  }

  void find_producers() {
    for (size_t s = 0; s < p_.steps.size(); ++s) {
      for (int t : p_.steps[s].outputs) {
        check_index(t, s);
        if (producer_[t] != kBeforeRun) {
          fail(in_quotes(name(t)) + " is written by both " +
               in_quotes(p_.steps[producer_[t]].name) + " and " + in_quotes(p_.steps[s].name));
        }
        producer_[t] = static_cast<int>(s);
      }
      for (int t : p_.steps[s].inputs) check_index(t, s);
    }
  }

  void check_index(int t, size_t s) const {
    if (t < 0 || t >= static_cast<int>(p_.tensors.size())) {
      fail("step " + in_quotes(p_.steps[s].name) + " names tensor #" + std::to_string(t) +
           ", which does not exist");
    }
  }

  // Last step reading or producing each root, over all its aliases.
  std::vector<int> last_uses() const {
    std::vector<int> last(p_.tensors.size(), kBeforeRun);
    for (size_t s = 0; s < p_.steps.size(); ++s) {
      for (int t : p_.steps[s].inputs) last[root_[t]] = static_cast<int>(s);
      for (int t : p_.steps[s].outputs)
        last[root_[t]] = std::max(last[root_[t]], static_cast<int>(s));
    }
    return last;
  }

  // An in-place step's output 0 takes over input 0's buffer when that buffer is an activation of
  // the same size that dies at this step (DESIGN.md: never a view of weights, inputs, outputs).
  // Taking over a buffer is recorded as a link from the output's root to the input's, resolved
  // (with path halving) when read: one pass over the steps instead of one over all tensors per
  // in-place step.
  void apply_in_place() {
    const std::vector<int> last = last_uses();
    std::vector<int> into(root_.size());
    for (size_t t = 0; t < into.size(); ++t) into[t] = static_cast<int>(t);
    auto resolve = [&into](int t) {
      while (into[t] != t) {
        into[t] = into[into[t]];
        t = into[t];
      }
      return t;
    };
    for (size_t s = 0; s < p_.steps.size(); ++s) {
      const ProgramStep& step = p_.steps[s];
      if (!step.in_place || step.inputs.empty() || step.outputs.empty()) continue;
      const int out = step.outputs[0];
      const int in_root = resolve(root_[step.inputs[0]]);
      if (p_.tensors[out].view_of >= 0 || resolve(root_[out]) != out) continue;
      if (p_.tensors[out].category != Category::activations) continue;
      if (p_.tensors[in_root].category != Category::activations) continue;
      if (p_.tensors[in_root].bytes != p_.tensors[out].bytes) continue;
      if (last[in_root] != static_cast<int>(s)) continue;
      if (std::count(step.inputs.begin(), step.inputs.end(), step.inputs[0]) > 1) continue;
      into[out] = in_root;  // out, and every view of it, now lives in in_root's buffer
    }
    for (int& r : root_) r = resolve(r);
  }

  void build_buffers() {
    index_.assign(p_.tensors.size(), -1);
    for (size_t t = 0; t < p_.tensors.size(); ++t) {
      if (root_[t] != static_cast<int>(t)) continue;
      const ProgramTensor& pt = p_.tensors[t];
      if (pt.category == Category::weights) continue;
      Buffer b;
      b.tensor = static_cast<int>(t);
      b.category = pt.category;
      const bool before_run = pt.category == Category::inputs || pt.returned_copy;
      b.alloc = before_run ? kBeforeRun : producer_[t];
      if (!before_run && producer_[t] == kBeforeRun) {
        fail(in_quotes(pt.name) + " (" + std::string(category_name(pt.category)) +
             ") is never produced by any step");
      }
      b.held = pt.category == Category::outputs ||
               (pt.category == Category::inputs && (pt.held || p_.inputs == InputsPolicy::caller));
      index_[t] = static_cast<int>(buffers_.size());
      buffers_.push_back(b);
    }
    const std::vector<int> last = last_uses();
    for (size_t t = 0; t < p_.tensors.size(); ++t) {
      const int r = root_[t];
      if (index_[r] < 0) continue;
      Buffer& b = buffers_[index_[r]];
      if (r != static_cast<int>(t)) b.aliases.push_back(static_cast<int>(t));
      // A graph output viewing a buffer keeps that buffer as long as the output lives.
      if (p_.tensors[t].category == Category::outputs && b.category == Category::activations) {
        b.category = Category::outputs;
        b.held = true;
      }
      b.last_use = std::max(b.last_use, last[r]);
    }
  }

  void apply_last_use_frees() {
    for (Buffer& b : buffers_) {
      if (b.held) continue;
      b.free_after = std::max(b.last_use, b.alloc);
    }
  }

  void apply_explicit_frees() {
    // A buffer is released once the tensor and every alias of it have been freed.
    std::vector<int> freed_at(p_.tensors.size(), kNever);
    for (size_t s = 0; s < p_.steps.size(); ++s) {
      for (int t : p_.steps[s].frees) {
        check_index(t, s);
        if (freed_at[t] != kNever) fail(in_quotes(name(t)) + " is freed twice");
        freed_at[t] = static_cast<int>(s);
      }
    }
    for (Buffer& b : buffers_) {
      int release = freed_at[b.tensor];
      for (int a : b.aliases) release = std::max(release, freed_at[a]);
      if (b.held || release == kNever) continue;
      if (release < b.last_use) {
        fail(in_quotes(name(b.tensor)) + " is freed after step " +
             in_quotes(p_.steps[release].name) + " but used later, by step " +
             in_quotes(p_.steps[b.last_use].name));
      }
      b.free_after = release;
    }
  }

  static bool live_in(const Buffer& b, int step) { return b.alloc <= step && step <= b.free_after; }

  std::string step_name(int s) const {
    return s >= 0 && s < static_cast<int>(p_.steps.size()) ? p_.steps[s].name : "";
  }

  // For the buffers alive at one step, in one scan of that step and the later ones: the first
  // later step reading each buffer, and the view (alias) through which that step, or this one,
  // reads it (-1: the buffer itself). Per buffer lookups would rescan a wide reader's inputs for
  // every buffer alive, quadratic in a fan-out.
  struct Readers {
    std::vector<int> next;      // per root: the first reading step after `step`, or kNever
    std::vector<int> next_via;  // per root: the alias that step reads, or -1
    std::vector<int> here_via;  // per root: the alias `step` itself reads, or -1
  };

  Readers readers_after(int step) const {
    const size_t n = p_.tensors.size();
    Readers r{std::vector<int>(n, kNever), std::vector<int>(n, -1), std::vector<int>(n, -1)};
    for (int s = static_cast<int>(p_.steps.size()); s-- > step + 1;) {
      for (int t : p_.steps[s].inputs) {
        const int root = root_[t];
        if (r.next[root] != s) {
          r.next[root] = s;
          r.next_via[root] = -1;
        }
        if (t != root && r.next_via[root] < 0) r.next_via[root] = t;
      }
    }
    for (int t : p_.steps[step].inputs) {
      const int root = root_[t];
      if (t != root && r.here_via[root] < 0) r.here_via[root] = t;
    }
    return r;
  }

  std::string why(const Buffer& b, int step, const Readers& readers) const {
    const std::string& note = p_.tensors[b.tensor].note;
    std::string reason = timeline_reason(b, step, readers);
    return note.empty() ? reason : note + "; " + reason;
  }

  std::string timeline_reason(const Buffer& b, int step, const Readers& readers) const {
    const ProgramTensor& t = p_.tensors[b.tensor];
    if (b.category == Category::outputs) {
      return t.category == Category::outputs ? "graph output" : "viewed by a graph output";
    }
    if (b.category == Category::inputs && b.held) {
      return t.held ? "held by the caller" : "caller-held input";
    }
    const int next = readers.next[b.tensor];
    if (next != kNever) {
      // Whether the reader sees the tensor itself or a view of it.
      if (const int via = readers.next_via[b.tensor]; via >= 0) {
        return "viewed by " + name(via) + ", read by " + p_.steps[next].name + " at step " +
               std::to_string(next);
      }
      return "waiting for " + p_.steps[next].name + " at step " + std::to_string(next);
    }
    if (b.alloc == step) return "produced by this step";
    if (const int via = readers.here_via[b.tensor]; via >= 0)
      return "read by this step (as " + name(via) + ")";
    if (b.free_after == kNever) return "never freed by the trace";
    if (b.free_after > step) {
      return "not freed by the trace until after step " + std::to_string(b.free_after);
    }
    return "read by this step";
  }

  // The per-step figures in one sweep over the steps: each buffer is added at its allocating step
  // and taken off after its last one, so the work is linear in steps + buffers. Every sum is
  // checked: a total that does not fit 64 bits is an error naming the step, not a wrapped figure.
  Timeline tally() const {
    Timeline tl;
    tl.storage = root_;
    for (const ProgramTensor& t : p_.tensors) {
      if (t.category != Category::weights || t.view_of >= 0) continue;
      uint64_t& sum = t.prepare_only ? tl.prepare_only_weights_bytes : tl.weights_bytes;
      sum = add_or_throw(sum, t.bytes, "total weight bytes");
    }
    const int n = static_cast<int>(p_.steps.size());
    // Buffers by the step that allocates them and the step after which they are released.
    std::vector<std::vector<int>> allocated(static_cast<size_t>(n) + 1);
    std::vector<std::vector<int>> released(static_cast<size_t>(n));
    for (size_t i = 0; i < buffers_.size(); ++i) {
      const Buffer& b = buffers_[i];
      const uint64_t bytes = p_.tensors[b.tensor].bytes;
      if (!checked_round_up(bytes, kArenaAlignment)) arena_overflow(bytes, "buffer", b.tensor);
      if (b.category == Category::inputs)
        tl.inputs_bytes = add_or_throw(tl.inputs_bytes, bytes, "total input bytes");
      if (b.category == Category::outputs)
        tl.outputs_bytes = add_or_throw(tl.outputs_bytes, bytes, "total output bytes");
      if (b.alloc >= n || b.free_after < b.alloc) continue;
      allocated[static_cast<size_t>(std::max(b.alloc, 0))].push_back(static_cast<int>(i));
      if (b.free_after < n)
        released[static_cast<size_t>(b.free_after)].push_back(static_cast<int>(i));
    }
    uint64_t activations = 0, activations_arena = 0, other = 0;
    uint64_t best = 0;
    tl.steps.reserve(static_cast<size_t>(n));
    for (int s = 0; s < n; ++s) {
      const ProgramStep& step = p_.steps[s];
      StepMemory m;
      m.index = s;
      m.node = step.name;
      m.op = step.op;
      m.workspace_bytes = step.workspace;
      if (!checked_round_up(step.workspace, kArenaAlignment))
        arena_overflow(step.workspace, "workspace of step", s);
      for (int i : allocated[static_cast<size_t>(s)]) {
        const Buffer& b = buffers_[static_cast<size_t>(i)];
        const uint64_t bytes = p_.tensors[b.tensor].bytes;
        if (b.alloc == s) m.alloc_bytes = add_at(m.alloc_bytes, bytes, "bytes allocated", s);
        if (b.category == Category::activations) {
          activations = add_at(activations, bytes, "live activation bytes", s);
          activations_arena = add_at(activations_arena, arena_round(bytes), "live arena bytes", s);
        } else {
          other = add_at(other, bytes, "live input and output bytes", s);
        }
      }
      m.live_bytes = add_at(activations, m.workspace_bytes, "live bytes", s);
      m.live_arena_bytes =
          add_at(activations_arena, arena_round(m.workspace_bytes), "live arena bytes", s);
      m.total_bytes =
          add_at(add_at(tl.weights_bytes, other, "total bytes", s), m.live_bytes, "total bytes", s);
      tl.activations_peak_bytes = std::max(tl.activations_peak_bytes, activations);
      tl.workspace_peak_bytes = std::max(tl.workspace_peak_bytes, m.workspace_bytes);
      tl.lower_bound_bytes = std::max(tl.lower_bound_bytes, m.live_bytes);
      tl.lower_bound_arena_bytes = std::max(tl.lower_bound_arena_bytes, m.live_arena_bytes);
      if (m.total_bytes > best || tl.peak_step < 0) {
        best = m.total_bytes;
        tl.peak_step = s;
      }
      // What is released is part of what was live (and summed, checked, above): no wrap.
      for (int i : released[static_cast<size_t>(s)]) {
        const Buffer& b = buffers_[static_cast<size_t>(i)];
        const uint64_t bytes = p_.tensors[b.tensor].bytes;
        m.free_bytes += bytes;
        if (b.category == Category::activations) {
          activations -= bytes;
          activations_arena -= arena_round(bytes);
        } else {
          other -= bytes;
        }
      }
      tl.steps.push_back(std::move(m));
    }
    tl.total_peak_bytes =
        n > 0 ? best : add_or_throw(tl.weights_bytes, tl.inputs_bytes, "total peak bytes");
    for (const Buffer& b : buffers_) {
      if (b.free_after == kNever)
        tl.after_bytes =
            add_or_throw(tl.after_bytes, p_.tensors[b.tensor].bytes, "bytes held after the run");
      if (b.category == Category::activations) {
        const int last = b.free_after == kNever ? n - 1 : b.free_after;
        tl.buffers.push_back(
            {b.tensor, b.alloc, last, p_.tensors[b.tensor].bytes, Category::activations});
      }
    }
    // Scratch is planned in the arena too (DESIGN.md), so the planner sees it as a buffer.
    for (int s = 0; s < n; ++s) {
      const uint64_t ws = p_.steps[s].workspace;
      if (ws > 0) tl.buffers.push_back({-1, s, s, ws, Category::workspace});
    }
    if (tl.peak_step >= 0) alive_at(tl.peak_step, tl);
    return tl;
  }

  // a + b, or SizeOverflow naming the figure and the step.
  uint64_t add_at(uint64_t a, uint64_t b, const char* what, int step) const {
    if (const auto r = checked_add(a, b)) return *r;
    return add_or_throw(a, b,
                        std::string(what) + " at step " + std::to_string(step) + " " +
                            in_quotes(p_.steps[static_cast<size_t>(step)].name));
  }

  // arena_round wraps past 2^64 - 64: a buffer that large cannot be placed in any arena.
  [[noreturn]] void arena_overflow(uint64_t bytes, std::string_view what, int index) const {
    const std::string& label = what == "buffer" ? name(index) : p_.steps[index].name;
    throw SizeOverflow(std::string(what) + " " + in_quotes(label) + ": " + std::to_string(bytes) +
                       " bytes rounded up to a multiple of " + std::to_string(kArenaAlignment) +
                       " overflows uint64");
  }

  void alive_at(int step, Timeline& tl) const {
    const Readers readers = readers_after(step);
    for (const Buffer& b : buffers_) {
      if (!live_in(b, step)) continue;
      AliveTensor a;
      a.tensor = name(b.tensor);
      a.bytes = p_.tensors[b.tensor].bytes;
      a.category = b.category;
      a.producer = b.alloc >= 0 ? step_name(b.alloc) : "";
      a.last_consumer = b.last_use >= 0 && b.last_use != b.alloc ? step_name(b.last_use) : "";
      a.why = why(b, step, readers);
      a.bound_by = p_.tensors[b.tensor].bound_by;
      tl.alive_at_peak.push_back(std::move(a));
    }
    if (p_.steps[step].workspace > 0) {
      tl.alive_at_peak.push_back({"workspace of " + p_.steps[step].name, p_.steps[step].workspace,
                                  Category::workspace, p_.steps[step].name, p_.steps[step].name,
                                  "scratch for the duration of this step"});
    }
    std::stable_sort(tl.alive_at_peak.begin(), tl.alive_at_peak.end(),
                     [](const AliveTensor& x, const AliveTensor& y) { return x.bytes > y.bytes; });
  }

  const MemoryProgram& p_;
  std::vector<int> root_;
  std::vector<int> producer_;
  std::vector<int> index_;
  std::vector<Buffer> buffers_;
};

}  // namespace

Timeline simulate(const MemoryProgram& program) {
  return Simulator(program).run();
}

}  // namespace footprint::analysis
