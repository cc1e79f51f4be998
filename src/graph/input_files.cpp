#include "footprint/graph/input_files.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "footprint/core/dtype.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/graph/lower_sequences.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/onnx/tensor_file.hpp"

namespace footprint::graph {
namespace {

// The graph's inputs that are not initializers, in their order, as Graph::inputs() lists them.
std::vector<const onnx::ValueInfoProto*> runtime_inputs(const onnx::GraphProto& g) {
  std::set<std::string_view> initialized;
  for (const onnx::TensorProto& t : g.initializers) initialized.insert(t.name);
  std::vector<const onnx::ValueInfoProto*> out;
  for (const onnx::ValueInfoProto& v : g.inputs) {
    if (!initialized.contains(v.name)) out.push_back(&v);
  }
  return out;
}

}  // namespace

std::vector<std::filesystem::path> numbered_tensor_files(const std::filesystem::path& dir,
                                                         std::string_view stem) {
  std::vector<std::filesystem::path> out;
  for (int i = 0;; ++i) {
    std::filesystem::path p = dir / (std::string(stem) + "_" + std::to_string(i) + ".pb");
    if (!std::filesystem::exists(p)) break;
    out.push_back(std::move(p));
  }
  return out;
}

InputShapes input_shapes_from_files(const Model& model,
                                    std::span<const std::filesystem::path> files,
                                    InputValues* values) {
  const std::vector<const onnx::ValueInfoProto*> inputs = runtime_inputs(model.onnx().graph());
  std::vector<char> taken(inputs.size(), 0);
  InputShapes shapes;
  // Named tensors first, then the unnamed ones in turn, as runtime::Session matches them.
  std::vector<std::pair<size_t, onnx::TensorFile>> unnamed;
  auto give = [&](size_t input, const onnx::TensorFile& file, const std::filesystem::path& path) {
    const onnx::ValueInfoProto& v = *inputs[input];
    const std::string where = path.string() + ": input " + in_quotes(std::string(v.name));
    const DType file_type = onnx::tensor_dtype(file.tensor());
    if (v.type != nullptr && is_known_dtype(v.type->elem_type) &&
        static_cast<DType>(v.type->elem_type) != file_type) {
      throw Error(where + ": the model declares " +
                  std::string(dtype_name(static_cast<DType>(v.type->elem_type))) +
                  ", the tensor is " + std::string(dtype_name(file_type)));
    }
    taken[input] = 1;
    const auto& dims = file.tensor().dims;
    shapes.emplace(std::string(v.name), std::vector<int64_t>(dims.begin(), dims.end()));
    if (values != nullptr && dtype_traits(file_type).is_integer()) {
      if (auto k = known_value_of(file.tensor(), KnownValue::kMaxElements, 0))
        values->emplace(std::string(v.name), std::move(*k));
    }
  };
  for (size_t k = 0; k < files.size(); ++k) {
    // The file of a sequence or optional input (by position: a SequenceProto's name is not the
    // input's) gives its elements' extents, under the names a run gives them.
    const onnx::TypeProto* declared = k < inputs.size() ? inputs[k]->type : nullptr;
    if (declared != nullptr && (declared->kind == onnx::TypeProto::Kind::sequence ||
                                declared->kind == onnx::TypeProto::Kind::optional)) {
      const std::string input(inputs[k]->name);
      const onnx::TensorFile held = onnx::TensorFile::load_value(
          onnx::ModelSource::map_file(files[k]), declared->kind == onnx::TypeProto::Kind::sequence
                                                     ? onnx::ValueFileProto::Kind::sequence
                                                     : onnx::ValueFileProto::Kind::optional);
      const onnx::ValueFileProto& value = *held.value();
      const bool elements =
          value.kind == onnx::ValueFileProto::Kind::sequence || value.holds_sequence;
      size_t i = 0;
      for (const onnx::TensorProto& t : value.tensors) {
        shapes.emplace(elements ? element_name(input, i++) : input,
                       std::vector<int64_t>(t.dims.begin(), t.dims.end()));
      }
      taken[k] = 1;
      continue;
    }
    onnx::TensorFile file = onnx::TensorFile::load_file(files[k]);
    const std::string_view name = file.tensor().name;
    if (name.empty()) {
      unnamed.emplace_back(k, std::move(file));
      continue;
    }
    const auto it = std::find_if(inputs.begin(), inputs.end(),
                                 [&](const onnx::ValueInfoProto* v) { return v->name == name; });
    if (it == inputs.end()) {
      throw Error(files[k].string() + ": " + in_quotes(std::string(name)) +
                  " is not an input of the model");
    }
    const auto input = static_cast<size_t>(it - inputs.begin());
    if (taken[input]) {
      throw Error(files[k].string() + ": input " + in_quotes(std::string(name)) +
                  " is given by an earlier file too");
    }
    give(input, file, files[k]);
  }
  size_t next = 0;
  for (const auto& [k, file] : unnamed) {
    while (next < inputs.size() && taken[next]) ++next;
    if (next == inputs.size()) {
      throw Error(files[k].string() + ": more tensor files than the model has inputs (" +
                  std::to_string(inputs.size()) + ")");
    }
    give(next, file, files[k]);
  }
  return shapes;
}

}  // namespace footprint::graph
