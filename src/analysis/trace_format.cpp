#include "footprint/analysis/trace_format.hpp"

#include <map>
#include <nlohmann/json.hpp>

#include "footprint/core/checked_math.hpp"
#include "footprint/core/dtype.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/user_files.hpp"

namespace footprint::analysis {
namespace {

using nlohmann::json;

class TraceReader {
 public:
  explicit TraceReader(std::string source) : source_(std::move(source)) {}

  Trace read(const json& root) {
    expect(root.is_object(), "", "a trace is a JSON object");
    if (root.contains("format")) {
      const std::string format = string_at(root, "/format");
      expect(format == kFormat, "/format",
             "unknown format " + in_quotes(format) + " (this footprint reads " + kFormat + ")");
    }
    Trace trace;
    if (root.contains("name")) trace.name = string_at(root, "/name");
    const std::string policy =
        root.contains("arguments") ? string_at(root, "/arguments") : "caller";
    if (policy == "caller") {
      trace.program.inputs = InputsPolicy::caller;
    } else if (policy == "donated") {
      trace.program.inputs = InputsPolicy::donated;
    } else {
      fail("/arguments", "must be \"caller\" or \"donated\", not " + in_quotes(policy));
    }
    expect(root.contains("tensors") && root["tensors"].is_array(), "/tensors",
           "an array of tensors is required");
    expect(root.contains("ops") && root["ops"].is_array(), "/ops", "an array of ops is required");
    read_tensors(root["tensors"], trace.program);
    bool any_free = false;
    read_ops(root["ops"], trace.program, any_free);
    trace.program.explicit_frees = any_free;
    if (root.contains("explicit_frees")) {
      expect(root["explicit_frees"].is_boolean(), "/explicit_frees", "must be true or false");
      trace.program.explicit_frees = root["explicit_frees"].get<bool>();
    }
    return trace;
  }

 private:
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw Error(source_ + ": " + (path.empty() ? "/" : path) + ": " + what);
  }
  void expect(bool ok, const std::string& path, const std::string& what) const {
    if (!ok) fail(path, what);
  }
  std::string string_at(const json& obj, const std::string& path) const {
    const json& v = obj.at(json::json_pointer(path.substr(path.rfind('/'))));
    expect(v.is_string(), path, "must be a string");
    return v.get<std::string>();
  }
  uint64_t count_at(const json& v, const std::string& path) const {
    expect(v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0), path,
           "must be a non-negative integer");
    return v.get<uint64_t>();
  }

  uint64_t tensor_bytes(const json& t, const std::string& path, const std::string& tensor) const {
    if (t.contains("bytes")) return count_at(t["bytes"], path + "/bytes");
    expect(t.contains("dtype") && t.contains("shape"), path,
           "a tensor needs \"bytes\", or \"dtype\" and \"shape\"");
    expect(t["dtype"].is_string(), path + "/dtype", "must be a string such as \"float32\"");
    std::string name = t["dtype"].get<std::string>();
    if (name == "float32") name = "float";
    if (name == "float64") name = "double";
    const auto dtype = dtype_from_name(name);
    expect(dtype.has_value(), path + "/dtype", "unknown dtype " + in_quotes(name));
    expect(t["shape"].is_array(), path + "/shape", "must be an array of extents");
    uint64_t numel = 1;
    for (size_t i = 0; i < t["shape"].size(); ++i) {
      const uint64_t d = count_at(t["shape"][i], path + "/shape/" + std::to_string(i));
      const auto product = checked_mul(numel, d);
      expect(product.has_value(), path + "/shape",
             "the element count of " + in_quotes(tensor) + " overflows uint64");
      numel = *product;
    }
    const auto bytes = dtype_storage_bytes(*dtype, numel);
    expect(bytes.has_value(), path,
           "the bytes of " + in_quotes(tensor) + " (" + std::to_string(numel) + " x " +
               std::string(dtype_name(*dtype)) +
               ") overflow uint64, or the dtype has no fixed size");
    return *bytes;
  }

  void read_tensors(const json& list, MemoryProgram& p) {
    std::vector<std::pair<std::string, std::string>> views;  // (path, name viewed)
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string path = "/tensors/" + std::to_string(i);
      const json& t = list[i];
      expect(t.is_object() && t.contains("name") && t["name"].is_string(), path,
             "a tensor is an object with a string \"name\"");
      ProgramTensor pt;
      pt.name = t["name"].get<std::string>();
      expect(!index_.count(pt.name), path + "/name", in_quotes(pt.name) + " is defined twice");
      pt.bytes = tensor_bytes(t, path, pt.name);
      const std::string kind = t.contains("kind") ? string_at(t, path + "/kind") : "activation";
      static const std::map<std::string, Category> kKinds = {{"input", Category::inputs},
                                                             {"weight", Category::weights},
                                                             {"activation", Category::activations},
                                                             {"output", Category::outputs}};
      const auto k = kKinds.find(kind);
      expect(k != kKinds.end(), path + "/kind",
             "must be input, weight, activation or output, not " + in_quotes(kind));
      pt.category = k->second;
      if (t.contains("held")) {
        expect(t["held"].is_boolean(), path + "/held", "must be true or false");
        pt.held = t["held"].get<bool>();
      }
      if (t.contains("note")) pt.note = string_at(t, path + "/note");
      views.emplace_back(path, t.contains("view_of") ? string_at(t, path + "/view_of") : "");
      index_[pt.name] = static_cast<int>(p.tensors.size());
      p.tensors.push_back(std::move(pt));
    }
    for (size_t i = 0; i < views.size(); ++i) {
      if (views[i].second.empty()) continue;
      p.tensors[i].view_of = lookup(views[i].second, views[i].first + "/view_of");
      // A view allocates nothing, whatever its size says.
    }
  }

  int lookup(const std::string& name, const std::string& path) const {
    auto it = index_.find(name);
    expect(it != index_.end(), path, "unknown tensor " + in_quotes(name));
    return it->second;
  }

  std::vector<int> names(const json& op, const char* key, const std::string& path) const {
    std::vector<int> out;
    if (!op.contains(key)) return out;
    expect(op[key].is_array(), path + "/" + key, "must be an array of tensor names");
    for (size_t i = 0; i < op[key].size(); ++i) {
      const std::string p = path + "/" + key + "/" + std::to_string(i);
      expect(op[key][i].is_string(), p, "must be a tensor name");
      out.push_back(lookup(op[key][i].get<std::string>(), p));
    }
    return out;
  }

  void read_ops(const json& list, MemoryProgram& p, bool& any_free) {
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string path = "/ops/" + std::to_string(i);
      const json& o = list[i];
      expect(o.is_object(), path, "an op is an object");
      ProgramStep s;
      s.name = o.contains("name") ? string_at(o, path + "/name") : "op" + std::to_string(i);
      s.op = o.contains("op") ? string_at(o, path + "/op") : s.name;
      s.inputs = names(o, "inputs", path);
      s.outputs = names(o, "outputs", path);
      check_reads(p, s.inputs, path);
      check_writes(p, s.outputs, path, i);
      s.frees = names(o, "free", path);
      any_free = any_free || o.contains("free");
      if (o.contains("phase")) s.phase = string_at(o, path + "/phase");
      if (o.contains("workspace")) s.workspace = count_at(o["workspace"], path + "/workspace");
      if (o.contains("in_place")) {
        expect(o["in_place"].is_boolean(), path + "/in_place", "must be true or false");
        s.in_place = o["in_place"].get<bool>();
      }
      p.steps.push_back(std::move(s));
    }
  }

  // The tensor whose buffer `t` is (what a chain of views ends at); `t` itself in a cycle, which
  // the timeline reports.
  static int root_of(const MemoryProgram& p, int t) {
    for (size_t steps = 0; p.tensors[t].view_of >= 0 && steps < p.tensors.size(); ++steps)
      t = p.tensors[t].view_of;
    return t;
  }

  // An activation or output is read only after an op wrote it (through a view, the buffer
  // viewed); inputs and weights exist before the first op.
  void check_reads(const MemoryProgram& p, const std::vector<int>& inputs,
                   const std::string& path) const {
    for (size_t k = 0; k < inputs.size(); ++k) {
      const int root = root_of(p, inputs[k]);
      const Category c = p.tensors[root].category;
      if (c == Category::inputs || c == Category::weights) continue;
      if (writer_.count(root) == 0) {
        fail(path + "/inputs/" + std::to_string(k),
             in_quotes(p.tensors[inputs[k]].name) + " is read before any op writes it");
      }
    }
  }

  // Inputs and weights are the caller's: an op writing one would make its bytes appear twice.
  void check_writes(const MemoryProgram& p, const std::vector<int>& outputs,
                    const std::string& path, size_t op) {
    for (size_t k = 0; k < outputs.size(); ++k) {
      const ProgramTensor& t = p.tensors[outputs[k]];
      if (t.category == Category::inputs || t.category == Category::weights) {
        fail(path + "/outputs/" + std::to_string(k),
             "writes " + in_quotes(t.name) + ", which is " +
                 (t.category == Category::inputs ? "an input" : "a weight") +
                 " (a tensor the trace does not produce)");
      }
      writer_.emplace(root_of(p, outputs[k]), op);
    }
  }

  static constexpr const char* kFormat = "footprint-trace/1";
  std::string source_;
  std::map<std::string, int> index_;
  std::map<int, size_t> writer_;  // buffer -> the first op writing it
};

}  // namespace

Trace parse_trace(std::string_view json_text, const std::string& source_name) {
  json root;
  try {
    root = json::parse(json_text.begin(), json_text.end());
  } catch (const json::parse_error& e) {
    throw Error(source_name + ": offset " + std::to_string(e.byte) + ": invalid JSON");
  } catch (const json::exception& e) {
    // A number too large for any type (1e99999) is out_of_range, not a parse_error.
    throw Error(source_name + ": invalid JSON (" + e.what() + ")");
  }
  return TraceReader(source_name).read(root);
}

Trace read_trace_file(const std::filesystem::path& path) {
  Trace t = parse_trace(read_text_file(path), path.string());
  if (t.name.empty()) t.name = path.stem().string();
  return t;
}

}  // namespace footprint::analysis
