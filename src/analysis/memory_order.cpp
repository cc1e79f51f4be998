#include "footprint/analysis/memory_order.hpp"

#include <algorithm>
#include <random>
#include <unordered_map>
#include <unordered_set>

#include "footprint/analysis/timeline.hpp"
#include "footprint/graph/topo_order.hpp"

namespace footprint::analysis {
namespace {

// The search's cost model of a program: activation buffers (views folded into the buffer they
// view), who produces and who reads each, and each step's scratch. It leaves out in-place reuse,
// so it can only overestimate; every candidate is measured by simulate() before it is accepted.
struct SearchProblem {
  std::vector<graph::NodeId> step_node;  // graph node behind each step
  std::vector<std::vector<int>> preds;   // steps that must run first (through constants too)
  std::vector<uint64_t> alloc;           // bytes a step's outputs allocate
  std::vector<uint64_t> workspace;
  std::vector<uint64_t> born_dead;      // of those, bytes nobody reads (freed at once)
  std::vector<std::vector<int>> reads;  // distinct buffers each step reads
  std::vector<uint64_t> buffer_bytes;
  std::vector<int> buffer_users;     // distinct steps reading each buffer
  std::vector<int> buffer_producer;  // step allocating each buffer (-1: none)
  size_t size() const { return step_node.size(); }
};

// A node runs as a step unless everything it produces is a compile-time weight (graph_program).
bool is_step(const graph::Node& n, const MemoryProgram& p) {
  if (n.outputs.empty()) return true;
  return !std::all_of(n.outputs.begin(), n.outputs.end(), [&](graph::ValueId v) {
    return v == graph::kNoValue || p.tensors[v].category == Category::weights;
  });
}

// Every tensor's buffer (the end of its chain of views), each chain walked once up to a tensor
// whose root is known: linear in a deep view chain. A cycle (which simulate() rejects) stops
// after as many hops as there are tensors.
std::vector<int> view_roots(const MemoryProgram& p) {
  const size_t n = p.tensors.size();
  std::vector<int> root(n, -1);
  std::vector<int> path;
  for (size_t start = 0; start < n; ++start) {
    int t = static_cast<int>(start);
    path.clear();
    while (root[t] < 0 && p.tensors[t].view_of >= 0 && path.size() < n) {
      path.push_back(t);
      t = p.tensors[t].view_of;
    }
    const int r = root[t] >= 0 ? root[t] : t;
    root[t] = r;
    for (int v : path) root[v] = r;
  }
  return root;
}

// Roots that the arena holds: activations that no graph output views.
std::vector<int> arena_buffer_index(const MemoryProgram& p, const std::vector<int>& root) {
  std::vector<char> arena(p.tensors.size(), 0);
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    if (root[t] == static_cast<int>(t)) arena[t] = p.tensors[t].category == Category::activations;
  }
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    if (p.tensors[t].category == Category::outputs) arena[root[t]] = 0;
  }
  std::vector<int> index(p.tensors.size(), -1);
  int next = 0;
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    if (arena[t]) index[t] = next++;
  }
  return index;
}

// Step-level dependencies: a step waits for the steps behind every node it reads from, looking
// through constant nodes (which run once, before everything, but may read a step's output).
std::vector<std::vector<int>> step_preds(const graph::Graph& g, const std::vector<int>& step_of,
                                         const std::vector<graph::NodeId>& order) {
  std::vector<std::vector<int>> deps(g.nodes().size());
  for (graph::NodeId id : order) {
    std::vector<int>& d = deps[id];
    const graph::Node& n = g.node(id);
    auto visit = [&](graph::ValueId v) {
      if (v == graph::kNoValue || g.value(v).producer < 0) return;
      const graph::NodeId p = g.value(v).producer;
      if (step_of[p] >= 0) {
        d.push_back(step_of[p]);
      } else {
        d.insert(d.end(), deps[p].begin(), deps[p].end());
      }
    };
    for (graph::ValueId v : n.inputs) visit(v);
    for (graph::ValueId v : n.implicit_inputs) visit(v);
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
  }
  std::vector<std::vector<int>> preds;
  for (graph::NodeId id : order) {
    if (step_of[id] >= 0) preds.push_back(deps[id]);
  }
  return preds;
}

SearchProblem make_problem(const graph::Graph& g, const GraphProgram& gp) {
  const MemoryProgram& p = gp.program;
  SearchProblem sp;
  std::vector<int> step_of(g.nodes().size(), -1);
  for (graph::NodeId id : gp.order) {
    if (!is_step(g.node(id), p)) continue;
    step_of[id] = static_cast<int>(sp.step_node.size());
    sp.step_node.push_back(id);
  }
  sp.preds = step_preds(g, step_of, gp.order);
  const std::vector<int> root = view_roots(p);
  const std::vector<int> index = arena_buffer_index(p, root);
  const int buffers =
      static_cast<int>(std::count_if(index.begin(), index.end(), [](int i) { return i >= 0; }));
  sp.buffer_bytes.assign(buffers, 0);
  sp.buffer_users.assign(buffers, 0);
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    if (index[t] >= 0) sp.buffer_bytes[index[t]] = p.tensors[t].bytes;
  }
  const size_t n = sp.size();
  sp.alloc.assign(n, 0);
  sp.born_dead.assign(n, 0);
  sp.workspace.assign(n, 0);
  sp.reads.resize(n);
  std::vector<int> produced_by(buffers, -1);
  for (size_t s = 0; s < n && s < p.steps.size(); ++s) {
    sp.workspace[s] = p.steps[s].workspace;
    for (int t : p.steps[s].outputs) {
      if (root[t] == t && index[t] >= 0) {
        sp.alloc[s] += p.tensors[t].bytes;
        produced_by[index[t]] = static_cast<int>(s);
      }
    }
    for (int t : p.steps[s].inputs) {
      if (index[root[t]] >= 0) sp.reads[s].push_back(index[root[t]]);
    }
    std::sort(sp.reads[s].begin(), sp.reads[s].end());
    sp.reads[s].erase(std::unique(sp.reads[s].begin(), sp.reads[s].end()), sp.reads[s].end());
    for (int b : sp.reads[s]) ++sp.buffer_users[b];
  }
  for (int b = 0; b < buffers; ++b) {
    if (sp.buffer_users[b] == 0 && produced_by[b] >= 0) {
      sp.born_dead[produced_by[b]] += sp.buffer_bytes[b];
    }
  }
  sp.buffer_producer = std::move(produced_by);
  return sp;
}

// ---- exact: the smallest peak reaching each set of executed steps

struct ExactState {
  uint64_t peak = 0;
  uint64_t parent = 0;
  int last = -1;
};

constexpr size_t kExactStateLimit = size_t{1} << 21;
static_assert(kExactSteps < 64, "the exact search keeps sets of steps in 64-bit masks");

uint64_t live_after(const SearchProblem& sp, uint64_t done, const std::vector<uint64_t>& producer,
                    const std::vector<uint64_t>& users) {
  uint64_t live = 0;
  for (size_t b = 0; b < sp.buffer_bytes.size(); ++b) {
    if ((done & producer[b]) && (users[b] & ~done)) live += sp.buffer_bytes[b];
  }
  return live;
}

// Empty when the reachable sets exceed the limit.
std::vector<int> exact_order(const SearchProblem& sp) {
  const size_t n = sp.size();
  std::vector<uint64_t> need(n, 0), producer(sp.buffer_bytes.size(), 0),
      users(sp.buffer_bytes.size(), 0);
  for (size_t s = 0; s < n; ++s) {
    for (int q : sp.preds[s]) need[s] |= uint64_t{1} << q;
    for (int b : sp.reads[s]) users[b] |= uint64_t{1} << s;
  }
  for (size_t b = 0; b < producer.size(); ++b) {
    if (sp.buffer_producer[b] >= 0) producer[b] = uint64_t{1} << sp.buffer_producer[b];
  }
  std::unordered_map<uint64_t, ExactState> best;
  std::vector<uint64_t> layer = {0};
  best[0] = {};
  for (size_t depth = 0; depth < n; ++depth) {
    std::vector<uint64_t> next;
    for (uint64_t done : layer) {
      const uint64_t live = live_after(sp, done, producer, users);
      const uint64_t peak = best[done].peak;
      for (size_t v = 0; v < n; ++v) {
        const uint64_t bit = uint64_t{1} << v;
        if ((done & bit) || (need[v] & ~done)) continue;
        const uint64_t cand = std::max(peak, live + sp.alloc[v] + sp.workspace[v]);
        auto [it, fresh] =
            best.try_emplace(done | bit, ExactState{cand, done, static_cast<int>(v)});
        if (fresh) {
          next.push_back(done | bit);
        } else if (cand < it->second.peak) {
          it->second = {cand, done, static_cast<int>(v)};
        }
      }
      if (best.size() > kExactStateLimit) return {};
    }
    std::sort(next.begin(), next.end());
    layer = std::move(next);
  }
  std::vector<int> order;
  for (uint64_t done = (uint64_t{1} << n) - 1; done != 0;) {
    const ExactState& st = best.at(done);
    order.push_back(st.last);
    done = st.parent;
  }
  std::reverse(order.begin(), order.end());
  return order;
}

// ---- beam: the best few partial orders, scored by peak so far, then live bytes

// Each beam state scans and copies per-step tables as it advances (width x steps^2), and every
// ready step of every state is a sorted candidate (width x ready x steps): 2 s for a 10^4-node
// chain, 200 s for a 10^4-wide fan-out. The search runs within these budgets; past them the
// stored order is kept, and `method` says so, rather than have report go quadratic.
constexpr uint64_t kBeamScanBudget = 1'000'000'000;   // width x steps^2, checked up front
constexpr uint64_t kBeamCandidateBudget = 2'000'000;  // candidates, counted as it goes

struct BeamState {
  std::vector<char> done;
  std::vector<int> pending;    // unexecuted predecessors per step
  std::vector<int> remaining;  // unexecuted readers per buffer
  std::vector<int> order;
  uint64_t live = 0;
  uint64_t peak = 0;
  uint64_t hash = 0;
};

struct Candidate {
  uint64_t peak = 0;
  uint64_t live = 0;
  int step = 0;
  size_t from = 0;
  uint64_t hash = 0;
  bool operator<(const Candidate& o) const {
    if (peak != o.peak) return peak < o.peak;
    if (live != o.live) return live < o.live;
    if (step != o.step) return step < o.step;
    return from < o.from;
  }
};

BeamState beam_start(const SearchProblem& sp) {
  BeamState st;
  st.done.assign(sp.size(), 0);
  st.pending.resize(sp.size());
  for (size_t s = 0; s < sp.size(); ++s) st.pending[s] = static_cast<int>(sp.preds[s].size());
  st.remaining = sp.buffer_users;
  return st;
}

uint64_t freed_by(const SearchProblem& sp, const BeamState& st, int v) {
  uint64_t freed = sp.born_dead[v];
  for (int b : sp.reads[v]) {
    if (st.remaining[b] == 1 && sp.buffer_producer[b] >= 0) freed += sp.buffer_bytes[b];
  }
  return freed;
}

BeamState advance(const SearchProblem& sp, const std::vector<std::vector<int>>& succ,
                  const BeamState& from, const Candidate& c) {
  BeamState st = from;
  st.done[c.step] = 1;
  for (int u : succ[c.step]) --st.pending[u];
  for (int b : sp.reads[c.step]) --st.remaining[b];
  st.order.push_back(c.step);
  st.live = c.live;
  st.peak = c.peak;
  st.hash = c.hash;
  return st;
}

std::vector<int> beam_order(const SearchProblem& sp, size_t width) {
  const size_t n = sp.size();
  std::vector<std::vector<int>> succ(n);
  for (size_t s = 0; s < n; ++s) {
    for (int q : sp.preds[s]) succ[q].push_back(static_cast<int>(s));
  }
  // Zobrist keys: two paths to the same set of executed steps are one state.
  std::mt19937_64 rng(0x5eed);
  std::vector<uint64_t> key(n);
  for (uint64_t& k : key) k = rng();
  std::vector<BeamState> beam = {beam_start(sp)};
  uint64_t candidates = 0;
  for (size_t depth = 0; depth < n; ++depth) {
    std::vector<Candidate> cands;
    for (size_t i = 0; i < beam.size(); ++i) {
      const BeamState& st = beam[i];
      for (size_t v = 0; v < n; ++v) {
        if (st.done[v] || st.pending[v] > 0) continue;
        const int step = static_cast<int>(v);
        const uint64_t during = st.live + sp.alloc[v] + sp.workspace[v];
        cands.push_back({std::max(st.peak, during), st.live + sp.alloc[v] - freed_by(sp, st, step),
                         step, i, st.hash ^ key[v]});
      }
    }
    if (cands.empty()) return {};  // unreachable for a topological start
    candidates += cands.size();
    if (candidates > kBeamCandidateBudget) return {};
    std::sort(cands.begin(), cands.end());
    std::vector<BeamState> next;
    std::unordered_set<uint64_t> seen;
    for (const Candidate& c : cands) {
      if (next.size() == width) break;
      if (!seen.insert(c.hash).second) continue;
      next.push_back(advance(sp, succ, beam[c.from], c));
    }
    beam = std::move(next);
  }
  return beam.front().order;
}

// ---- from a step order back to a node order

// Constant nodes run as soon as they can (they cost no arena); steps keep the searched order.
std::vector<graph::NodeId> node_order(const graph::Graph& g, const SearchProblem& sp,
                                      const std::vector<int>& steps) {
  const size_t n = g.nodes().size();
  std::vector<char> is_step_node(n, 0), placed(n, 0);
  for (graph::NodeId id : sp.step_node) is_step_node[id] = 1;
  auto ready = [&](graph::NodeId id) {
    const graph::Node& node = g.node(id);
    auto ok = [&](graph::ValueId v) {
      return v == graph::kNoValue || g.value(v).producer < 0 || placed[g.value(v).producer];
    };
    return std::all_of(node.inputs.begin(), node.inputs.end(), ok) &&
           std::all_of(node.implicit_inputs.begin(), node.implicit_inputs.end(), ok);
  };
  std::vector<graph::NodeId> order;
  auto flush_constants = [&] {
    for (bool progress = true; progress;) {
      progress = false;
      for (graph::NodeId id = 0; id < static_cast<graph::NodeId>(n); ++id) {
        if (placed[id] || is_step_node[id] || !ready(id)) continue;
        placed[id] = 1;
        order.push_back(id);
        progress = true;
      }
    }
  };
  flush_constants();
  for (int s : steps) {
    const graph::NodeId id = sp.step_node[s];
    if (!ready(id)) return {};
    placed[id] = 1;
    order.push_back(id);
    flush_constants();
  }
  return order.size() == n ? order : std::vector<graph::NodeId>{};
}

uint64_t measured_lower_bound(const graph::Graph& g, GraphProgramOptions options,
                              std::vector<graph::NodeId> order) {
  options.order = std::move(order);
  return simulate(build_program(g, options).program).lower_bound_bytes;
}

}  // namespace

MemoryOrder memory_order(const graph::Graph& g, const GraphProgramOptions& options) {
  const GraphProgram start = build_program(g, options);
  MemoryOrder out;
  out.order = start.order;
  out.stored_lower_bound_bytes = simulate(start.program).lower_bound_bytes;
  out.lower_bound_bytes = out.stored_lower_bound_bytes;
  out.method = "stored";
  const SearchProblem sp = make_problem(g, start);
  if (sp.size() != start.program.steps.size() || sp.size() < 2) return out;
  const uint64_t n = sp.size();
  const bool within_budget = n <= kExactSteps || n * n * kBeamWidth <= kBeamScanBudget;
  std::vector<int> steps;
  bool exact = false;
  if (n <= kExactSteps) {
    steps = exact_order(sp);
    exact = !steps.empty();
  }
  if (steps.empty() && within_budget) steps = beam_order(sp, kBeamWidth);
  if (steps.empty()) {
    out.method = "stored (" + std::to_string(n) + " steps: past the search's budget)";
    return out;
  }
  std::vector<graph::NodeId> order = node_order(g, sp, steps);
  if (order.empty() || !graph::is_topological(g, order)) return out;
  const uint64_t bound = measured_lower_bound(g, options, order);
  if (bound >= out.stored_lower_bound_bytes) return out;
  out.order = std::move(order);
  out.lower_bound_bytes = bound;
  out.method = exact ? "exact" : "beam";
  out.exact = exact;
  return out;
}

}  // namespace footprint::analysis
