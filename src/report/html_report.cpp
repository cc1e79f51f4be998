#include "footprint/report/html_report.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <span>
#include <string_view>
#include <unordered_map>

#include "footprint/core/error.hpp"
#include "footprint/report/timeline_series.hpp"
#include "html_template.hpp"

namespace footprint::report {
namespace {

using nlohmann::json;

// Cuts `s` to at most `cap` bytes by dropping its middle (the ends of a name tell more than its
// middle: "/features/denseblock4/…/conv2/Conv_output_0"), never inside a UTF-8 sequence.
std::string shorten(const std::string& s, size_t cap) {
  static constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026
  if (s.size() <= cap) return s;
  const auto continuation = [&](size_t i) { return i < s.size() && (s[i] & 0xC0) == 0x80; };
  const size_t room = cap > kEllipsis.size() ? cap - kEllipsis.size() : 0;
  size_t head = room / 3;
  size_t tail = s.size() - (room - head);
  while (head > 0 && continuation(head)) --head;
  while (continuation(tail)) ++tail;
  return s.substr(0, head) + std::string(kEllipsis) + s.substr(tail);
}

// Keeps a list of names within `budget` bytes: when they are longer together, each is cut to
// the same share (at least 16 bytes, so a name stays recognisable).
void fit_names(std::vector<std::string>& names, size_t budget) {
  const size_t total = std::accumulate(names.begin(), names.end(), size_t{0},
                                       [](size_t a, const std::string& n) { return a + n.size(); });
  if (total <= budget || names.empty()) return;
  const size_t cap = std::max<size_t>(16, budget / names.size());
  for (std::string& n : names) n = shorten(n, cap);
}

// The page lists the first few warnings and counts the rest, however many a model has.
std::vector<std::string> first_warnings(const std::vector<std::string>& all) {
  static constexpr size_t kMax = 20;
  return {all.begin(), all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), kMax))};
}

uint64_t plan_arena(const HtmlReport& r) {
  return r.plan != nullptr ? static_cast<uint64_t>(r.plan->arena_bytes) : 0;
}

json summary_json(const HtmlReport& r) {
  const analysis::Timeline& t = *r.timeline;
  json dims = json::object();
  for (const auto& [name, v] : r.dims) dims[name] = v;
  return {
      {"title", r.title},
      {"kind", r.kind},
      {"order", r.order},
      {"inputs", r.inputs_policy},
      {"dims", dims},
      {"warnings", first_warnings(r.warnings)},
      {"warningCount", r.warnings.size()},
      {"weights", t.weights_bytes},
      {"inputsBytes", t.inputs_bytes},
      {"outputs", t.outputs_bytes},
      {"activationsPeak", t.activations_peak_bytes},
      {"workspacePeak", t.workspace_peak_bytes},
      {"totalPeak", t.total_peak_bytes},
      {"lowerBound", t.lower_bound_bytes},
      {"lowerBoundArena", t.lower_bound_arena_bytes},
      {"arena", plan_arena(r)},
      {"algorithm", r.plan != nullptr ? r.plan->algorithm : ""},
      {"optimal", r.plan != nullptr && r.plan->optimal},
      {"peakStep", t.peak_step},
      {"after", t.after_bytes},
      {"steps", t.steps.size()},
      {"buffers", t.buffers.size()},
  };
}

// Step names (cut to the budget) and op types as indices into a table of distinct ops.
json steps_json(const analysis::Timeline& t, size_t budget) {
  std::vector<std::string> names;
  names.reserve(t.steps.size());
  std::vector<std::string> ops;
  std::unordered_map<std::string, size_t> op_index;
  json op_of = json::array();
  for (const analysis::StepMemory& s : t.steps) {
    names.push_back(s.node);
    const auto [it, added] = op_index.try_emplace(s.op, ops.size());
    if (added) ops.push_back(s.op);
    op_of.push_back(it->second);
  }
  fit_names(names, budget);
  return {{"name", names}, {"op", op_of}, {"ops", ops}};
}

// Runs of consecutive steps of one phase (forward, backward, optimizer), [from, to] inclusive;
// empty when no step names a phase.
json phases_json(const analysis::MemoryProgram& p) {
  json runs = json::array();
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const std::string& phase = p.steps[i].phase;
    if (phase.empty()) continue;
    if (!runs.empty() && runs.back()["name"] == phase && runs.back()["to"] == i - 1) {
      runs.back()["to"] = i;
    } else {
      runs.push_back({{"name", phase}, {"from", i}, {"to", i}});
    }
  }
  return runs;
}

json timeline_json(const HtmlReport& r, const HtmlLimits& limits) {
  const analysis::Timeline& t = *r.timeline;
  const std::vector<CategoryBytes> cats = bytes_by_category(t, *r.program);
  std::vector<uint64_t> total(cats.size()), arena(cats.size());
  for (size_t i = 0; i < cats.size(); ++i) {
    total[i] = cats[i].total();
    arena[i] = cats[i].activations + cats[i].workspace;
  }
  json x = json::array(), act = json::array(), ws = json::array(), out = json::array(),
       in = json::array(), measured = json::array();
  const bool with_measured = r.measured.size() == cats.size() && !cats.empty();
  const std::vector<size_t> drawn = with_measured
                                        ? downsample({total, arena, r.measured}, limits.max_buckets)
                                        : downsample({total, arena}, limits.max_buckets);
  for (const size_t i : drawn) {
    x.push_back(i);
    if (with_measured) measured.push_back(r.measured[i]);
    act.push_back(cats[i].activations);
    ws.push_back(cats[i].workspace);
    out.push_back(cats[i].outputs);
    in.push_back(cats[i].inputs);
  }
  json j = {{"n", t.steps.size()}, {"x", x},   {"act", act},          {"ws", ws},
            {"out", out},          {"in", in}, {"w", t.weights_bytes}};
  if (with_measured) {
    j["m"] = measured;
    j["mLabel"] = r.measured_label;
  }
  return j;
}

// The planned arena: per buffer its lifetime [lo, hi) in steps, offset, exact bytes (the arena
// rounds them up to 64), kind (0 activation, 1 workspace) and tensor name. Beyond the limit only
// the largest buffers are listed; the rest are counted.
json layout_json(const HtmlReport& r, const HtmlLimits& limits, size_t budget) {
  const analysis::Timeline& t = *r.timeline;
  const std::vector<analysis::BufferLifetime>& bufs = t.buffers;
  if (r.plan == nullptr || r.plan->offsets.size() != bufs.size()) {
    throw UsageError("html report: the plan does not place the timeline's buffers");
  }
  std::vector<size_t> keep(bufs.size());
  std::iota(keep.begin(), keep.end(), size_t{0});
  uint64_t omitted_bytes = 0;
  if (keep.size() > limits.max_layout_buffers) {
    std::stable_sort(keep.begin(), keep.end(),
                     [&](size_t a, size_t b) { return bufs[a].bytes > bufs[b].bytes; });
    for (size_t i = limits.max_layout_buffers; i < keep.size(); ++i)
      omitted_bytes += bufs[keep[i]].bytes;
    keep.resize(limits.max_layout_buffers);
    std::sort(keep.begin(), keep.end());
  }
  json lo = json::array(), hi = json::array(), off = json::array(), bytes = json::array(),
       kind = json::array();
  std::vector<std::string> names;
  names.reserve(keep.size());
  for (const size_t i : keep) {
    const analysis::BufferLifetime& b = bufs[i];
    lo.push_back(b.first);
    hi.push_back(b.last + 1);
    off.push_back(r.plan->offsets[i]);
    bytes.push_back(b.bytes);
    const bool workspace = b.category == analysis::Category::workspace;
    kind.push_back(workspace ? 1 : 0);
    const bool named =
        !workspace && b.tensor >= 0 && static_cast<size_t>(b.tensor) < r.program->tensors.size();
    names.push_back(named ? r.program->tensors[b.tensor].name : "");
  }
  fit_names(names, budget);
  return {{"lo", lo},
          {"hi", hi},
          {"off", off},
          {"b", bytes},
          {"k", kind},
          {"t", names},
          {"omitted", bufs.size() - keep.size()},
          {"omittedBytes", omitted_bytes}};
}

json alive_json(const analysis::Timeline& t, size_t max_rows) {
  json rows = json::array();
  uint64_t rest = 0;
  for (size_t i = 0; i < t.alive_at_peak.size(); ++i) {
    const analysis::AliveTensor& a = t.alive_at_peak[i];
    if (i >= max_rows) {
      rest += a.bytes;
      continue;
    }
    rows.push_back({a.tensor, std::string(analysis::category_name(a.category)), a.bytes, a.producer,
                    a.last_consumer, a.why});
  }
  const size_t omitted = t.alive_at_peak.size() - std::min(t.alive_at_peak.size(), max_rows);
  return {{"rows", rows}, {"omitted", omitted}, {"omittedBytes", rest}};
}

// Per op type: nodes, bytes allocated (sum and largest step), largest workspace, and bytes alive
// at the peak that its nodes produced.
json ops_json(const analysis::Timeline& t) {
  struct OpRow {
    size_t nodes = 0;
    uint64_t alloc = 0, max_alloc = 0, max_workspace = 0, at_peak = 0;
  };
  std::vector<std::string> order;
  std::unordered_map<std::string, OpRow> rows;
  std::unordered_map<std::string, std::string> op_of_step;
  for (const analysis::StepMemory& s : t.steps) {
    auto [it, added] = rows.try_emplace(s.op);
    if (added) order.push_back(s.op);
    OpRow& row = it->second;
    ++row.nodes;
    row.alloc += s.alloc_bytes;
    row.max_alloc = std::max(row.max_alloc, s.alloc_bytes);
    row.max_workspace = std::max(row.max_workspace, s.workspace_bytes);
    op_of_step.try_emplace(s.node, s.op);
  }
  for (const analysis::AliveTensor& a : t.alive_at_peak) {
    const auto it = op_of_step.find(a.producer);
    if (it != op_of_step.end()) rows[it->second].at_peak += a.bytes;
  }
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return rows[a].alloc > rows[b].alloc;
  });
  json out = json::array();
  for (const std::string& op : order) {
    const OpRow& row = rows[op];
    out.push_back({op, row.nodes, row.alloc, row.max_alloc, row.max_workspace, row.at_peak});
  }
  return out;
}

// Nodes that run at another step in the memory-aware order, largest moves first.
json moved_json(const OrderComparison& c, size_t max_rows, size_t& moved_count) {
  std::unordered_map<int32_t, size_t> memory_pos;
  for (size_t i = 0; i < c.memory_nodes.size(); ++i) memory_pos[c.memory_nodes[i]] = i;
  struct Move {
    size_t step;
    size_t from, to;
  };
  std::vector<Move> moves;
  for (size_t i = 0; i < c.stored_nodes.size(); ++i) {
    const auto it = memory_pos.find(c.stored_nodes[i]);
    if (it != memory_pos.end() && it->second != i) moves.push_back({i, i, it->second});
  }
  moved_count = moves.size();
  const auto distance = [](const Move& m) { return m.from > m.to ? m.from - m.to : m.to - m.from; };
  std::stable_sort(moves.begin(), moves.end(),
                   [&](const Move& a, const Move& b) { return distance(a) > distance(b); });
  json rows = json::array();
  for (size_t i = 0; i < moves.size() && i < max_rows; ++i) {
    const Move& m = moves[i];
    const auto& steps = c.stored_program->steps;
    rows.push_back({m.step < steps.size() ? steps[m.step].name : "", m.from, m.to});
  }
  return rows;
}

json orders_json(const OrderComparison& c, const HtmlLimits& limits) {
  const analysis::Timeline& s = *c.stored;
  const analysis::Timeline& m = *c.memory;
  std::vector<uint64_t> stored_live, memory_live;
  for (const auto& step : s.steps) stored_live.push_back(step.live_bytes);
  for (const auto& step : m.steps) memory_live.push_back(step.live_bytes);
  json x = json::array(), sl = json::array(), ml = json::array();
  if (stored_live.size() == memory_live.size()) {
    for (const size_t i : downsample({stored_live, memory_live}, limits.max_buckets)) {
      x.push_back(i);
      sl.push_back(stored_live[i]);
      ml.push_back(memory_live[i]);
    }
  }
  size_t moved_count = 0;
  json moved = moved_json(c, limits.max_moved_rows, moved_count);
  return {{"method", c.method},
          {"exact", c.exact},
          {"differ", c.stored_nodes != c.memory_nodes},
          {"storedLowerBound", s.lower_bound_bytes},
          {"memoryLowerBound", m.lower_bound_bytes},
          {"storedPeak", s.total_peak_bytes},
          {"memoryPeak", m.total_peak_bytes},
          {"x", x},
          {"stored", sl},
          {"memory", ml},
          {"moved", moved},
          {"movedCount", moved_count}};
}

// Inside <script>, JSON must not contain "</script": '<' appears only within JSON strings, where
// \u003c means the same character.
std::string script_safe(const json& j) {
  const std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 64);
  for (const char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

json report_data(const HtmlReport& r, const HtmlLimits& limits) {
  if (r.timeline == nullptr || r.program == nullptr) {
    throw UsageError("html report: a timeline and its program are required");
  }
  // Step names and tensor names share the budget equally.
  const size_t half = limits.name_budget_bytes / 2;
  json j = {{"format", "footprint-report/1"},
            {"summary", summary_json(r)},
            {"steps", steps_json(*r.timeline, half)},
            {"phases", phases_json(*r.program)},
            {"timeline", timeline_json(r, limits)},
            {"layout", layout_json(r, limits, half)},
            {"alive", alive_json(*r.timeline, limits.max_alive_rows)},
            {"ops", ops_json(*r.timeline)}};
  j["orders"] = r.orders ? orders_json(*r.orders, limits) : json(nullptr);
  return j;
}

std::string render_html(const HtmlReport& r, const HtmlLimits& limits) {
  return render_page(report_data(r, limits));
}

std::string render_page(const nlohmann::json& data) {
  static constexpr std::string_view kTitle = "{{TITLE}}";
  static constexpr std::string_view kData = "{{DATA}}";
  const std::string_view page = html_template();
  // Placeholders are found in the template alone, never in the text put in their place.
  const size_t title_at = page.find(kTitle);
  const size_t data_at = page.find(kData);
  if (title_at == std::string_view::npos || data_at == std::string_view::npos ||
      title_at > data_at) {
    throw Error("html report: the page template lost its placeholders");
  }
  const std::string title = data.at("summary").at("title").get<std::string>();
  const std::string payload = script_safe(data);
  std::string out;
  out.reserve(page.size() + payload.size() + title.size());
  out.append(page.substr(0, title_at));
  out.append(html_escape("footprint: " + title));
  out.append(page.substr(title_at + kTitle.size(), data_at - title_at - kTitle.size()));
  out.append(payload);
  out.append(page.substr(data_at + kData.size()));
  return out;
}

}  // namespace footprint::report
