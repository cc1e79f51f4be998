#include "footprint/onnx/writer.hpp"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <ostream>
#include <random>
#include <string_view>

#include "footprint/core/error.hpp"
#include "footprint/core/user_files.hpp"
#include "footprint/onnx/wire_writer.hpp"

namespace footprint::onnx {
namespace {

struct StreamSink {
  std::ostream* out;
  void put(const void* p, size_t n) {
    out->write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
  }
};

// Adapts an Encoder member to any sink type, so one message can be measured and then written.
#define FP_ENC(member) [](auto& enc, const auto& item) { enc.member(item); }

template <class S>
class Encoder {
 public:
  Encoder(S sink, const WriteOptions& options) : w_(std::move(sink)), options_(options) {}

  // Only for an Encoder<CountingSink>: what it has measured.
  uint64_t counted() { return w_.sink().written; }

  void int_field(uint32_t field, int64_t v) { w_.int_field(field, v); }
  void int_if(uint32_t field, int64_t v) {
    if (v != 0) int_field(field, v);
  }
  void bytes_field(uint32_t field, const void* p, size_t n) { w_.bytes_field(field, p, n); }
  void str(uint32_t field, std::string_view v) { w_.string_field(field, v); }
  void str_if(uint32_t field, std::string_view v) {
    if (!v.empty()) str(field, v);
  }

  // A nested message: its length first (measured by encoding it once into a counter).
  template <class T, class Fn>
  void message(uint32_t field, const T& value, Fn fn) {
    Encoder<CountingSink> measure(CountingSink{}, options_);
    fn(measure, value);
    w_.len_header(field, measure.counted());
    fn(*this, value);
  }
  template <class T, class Fn>
  void messages(uint32_t field, const Array<T>& values, Fn fn) {
    for (const T& v : values) message(field, v, fn);
  }

  void repeated_scalar(const RepeatedScalar& r, uint32_t field) {
    if (r.count == 0) return;
    if (r.kind == ScalarKind::varint) {
      uint64_t len = 0;
      r.for_each([&](uint64_t v) { len += varint_size(v); });
      w_.len_header(field, len);
      r.for_each([&](uint64_t v) { w_.varint(v); });
      return;
    }
    const bool narrow = r.kind == ScalarKind::fixed32;
    w_.len_header(field, uint64_t{r.count} * (narrow ? 4 : 8));
    if (const auto run = r.packed_fixed(); !run.empty()) {
      w_.raw(run);
      return;
    }
    r.for_each([&](uint64_t v) {
      if (narrow) {
        w_.fixed32(static_cast<uint32_t>(v));
      } else {
        w_.fixed64(v);
      }
    });
  }

  void string_entry(const StringEntry& e) {
    str_if(1, e.key);
    str_if(2, e.value);
  }
  void opset(const OperatorSetId& o) {
    str_if(1, o.domain);
    int_field(2, o.version);
  }

  void tensor(const TensorProto& t) {
    for (int64_t d : t.dims) int_field(1, d);
    int_field(2, t.data_type);
    if (t.has_segment) {
      Encoder<CountingSink> m(CountingSink{}, options_);
      m.int_field(1, t.segment_begin);
      m.int_field(2, t.segment_end);
      w_.len_header(3, m.counted());
      int_field(1, t.segment_begin);
      int_field(2, t.segment_end);
    }
    const bool external = t.data_location == TensorProto::Location::external;
    const bool inline_external = external && options_.inline_external_data;
    if (t.typed_data.count != 0 && !inline_external)
      repeated_scalar(t.typed_data, t.typed_data.field);
    for (std::string_view s : t.string_data) str(6, s);
    str_if(8, t.name);
    if (inline_external) {
      bytes_field(9, t.external_bytes.data(), t.external_bytes.size());
    } else if (t.has_raw_data) {
      bytes_field(9, t.raw_data.data(), t.raw_data.size());
    }
    str_if(12, t.doc_string);
    if (external && !inline_external) {
      messages(13, t.external_data, FP_ENC(string_entry));
      int_field(14, 1);
    }
    messages(16, t.metadata_props, FP_ENC(string_entry));
  }

  void sparse_tensor(const SparseTensorProto& t) {
    if (t.values != nullptr) message(1, *t.values, FP_ENC(tensor));
    if (t.indices != nullptr) message(2, *t.indices, FP_ENC(tensor));
    for (int64_t d : t.dims) int_field(3, d);
  }

  void dimension(const DimensionProto& d) {
    if (d.has_value) int_field(1, d.value);
    if (d.has_param) str(2, d.param);
    str_if(3, d.denotation);
  }
  void shape(const TypeProto& t) { messages(1, t.shape, FP_ENC(dimension)); }
  void type_tensor(const TypeProto& t) {
    int_field(1, t.elem_type);
    if (t.has_shape) message(2, t, FP_ENC(shape));
  }
  void type_elem(const TypeProto& t) {
    if (t.elem != nullptr) message(1, *t.elem, FP_ENC(type));
  }
  void type_map(const TypeProto& t) {
    int_field(1, t.key_type);
    if (t.elem != nullptr) message(2, *t.elem, FP_ENC(type));
  }
  void type(const TypeProto& t) {
    switch (t.kind) {
      case TypeProto::Kind::tensor:
        message(1, t, FP_ENC(type_tensor));
        break;
      case TypeProto::Kind::sequence:
        message(4, t, FP_ENC(type_elem));
        break;
      case TypeProto::Kind::map:
        message(5, t, FP_ENC(type_map));
        break;
      case TypeProto::Kind::sparse_tensor:
        message(8, t, FP_ENC(type_tensor));
        break;
      case TypeProto::Kind::optional:
        message(9, t, FP_ENC(type_elem));
        break;
      case TypeProto::Kind::none:
        break;
    }
    str_if(6, t.denotation);
  }

  void value_info(const ValueInfoProto& v) {
    str_if(1, v.name);
    if (v.type != nullptr) message(2, *v.type, FP_ENC(type));
    str_if(3, v.doc_string);
    messages(4, v.metadata_props, FP_ENC(string_entry));
  }

  void attribute(const AttributeProto& a) {
    using T = AttributeProto::Type;
    str_if(1, a.name);
    if (a.type == T::float_ || a.f != 0) w_.float_field(2, a.f);
    if (a.type == T::int_ || a.i != 0) int_field(3, a.i);
    if (a.type == T::string || !a.s.empty()) str(4, a.s);
    if (a.t != nullptr) message(5, *a.t, FP_ENC(tensor));
    if (a.g != nullptr) message(6, *a.g, FP_ENC(graph));
    repeated_scalar(a.floats, 7);
    repeated_scalar(a.ints, 8);
    for (std::string_view s : a.strings) str(9, s);
    messages(10, a.tensors(), FP_ENC(tensor));
    messages(11, a.graphs(), FP_ENC(graph));
    str_if(13, a.doc_string);
    if (a.tp() != nullptr) message(14, *a.tp(), FP_ENC(type));
    messages(15, a.type_protos(), FP_ENC(type));
    int_if(20, static_cast<int64_t>(a.type));
    str_if(21, a.ref_attr_name());
    if (a.sparse_tensor() != nullptr) message(22, *a.sparse_tensor(), FP_ENC(sparse_tensor));
    messages(23, a.sparse_tensors(), FP_ENC(sparse_tensor));
  }

  void node(const NodeProto& n) {
    for (std::string_view s : n.inputs) str(1, s);
    for (std::string_view s : n.outputs) str(2, s);
    str_if(3, n.name);
    str_if(4, n.op_type);
    messages(5, n.attributes, FP_ENC(attribute));
    str_if(6, n.doc_string);
    str_if(7, n.domain);
    str_if(8, n.overload);
    messages(9, n.metadata_props, FP_ENC(string_entry));
  }

  void annotation(const TensorAnnotation& a) {
    str_if(1, a.tensor_name);
    messages(2, a.quant_parameter_tensor_names, FP_ENC(string_entry));
  }

  void graph(const GraphProto& g) {
    messages(1, g.nodes, FP_ENC(node));
    str_if(2, g.name);
    messages(5, g.initializers, FP_ENC(tensor));
    str_if(10, g.doc_string);
    messages(11, g.inputs, FP_ENC(value_info));
    messages(12, g.outputs, FP_ENC(value_info));
    messages(13, g.value_info, FP_ENC(value_info));
    messages(14, g.quantization_annotation, FP_ENC(annotation));
    messages(15, g.sparse_initializers, FP_ENC(sparse_tensor));
    messages(16, g.metadata_props, FP_ENC(string_entry));
  }

  void function(const FunctionProto& f) {
    str_if(1, f.name);
    for (std::string_view s : f.inputs) str(4, s);
    for (std::string_view s : f.outputs) str(5, s);
    for (std::string_view s : f.attributes) str(6, s);
    messages(7, f.nodes, FP_ENC(node));
    str_if(8, f.doc_string);
    messages(9, f.opset_import, FP_ENC(opset));
    str_if(10, f.domain);
    messages(11, f.attribute_protos, FP_ENC(attribute));
    messages(12, f.value_info, FP_ENC(value_info));
    str_if(13, f.overload);
    messages(14, f.metadata_props, FP_ENC(string_entry));
  }

  void training_info(const TrainingInfoProto& t) {
    if (t.initialization != nullptr) message(1, *t.initialization, FP_ENC(graph));
    if (t.algorithm != nullptr) message(2, *t.algorithm, FP_ENC(graph));
    messages(3, t.initialization_binding, FP_ENC(string_entry));
    messages(4, t.update_binding, FP_ENC(string_entry));
  }

  void model(const ModelProto& m) {
    int_if(1, m.ir_version);
    str_if(2, m.producer_name);
    str_if(3, m.producer_version);
    str_if(4, m.domain);
    int_if(5, m.model_version);
    str_if(6, m.doc_string);
    if (m.graph != nullptr) message(7, *m.graph, FP_ENC(graph));
    messages(8, m.opset_import, FP_ENC(opset));
    messages(14, m.metadata_props, FP_ENC(string_entry));
    messages(20, m.training_info, FP_ENC(training_info));
    messages(25, m.functions, FP_ENC(function));
  }

 private:
  WireWriter<S> w_;
  const WriteOptions& options_;
};

#undef FP_ENC

}  // namespace

uint64_t serialized_size(const ModelProto& model, const WriteOptions& options) {
  Encoder<CountingSink> enc(CountingSink{}, options);
  enc.model(model);
  return enc.counted();
}

void write_model(const ModelProto& model, std::ostream& out, const WriteOptions& options) {
  Encoder<StreamSink>(StreamSink{&out}, options).model(model);
}

std::vector<std::byte> serialize_model(const ModelProto& model, const WriteOptions& options) {
  std::vector<std::byte> out;
  out.reserve(serialized_size(model, options));
  Encoder<VectorSink>(VectorSink{&out}, options).model(model);
  return out;
}

void write_model_file(const ModelProto& model, const std::filesystem::path& path,
                      const WriteOptions& options) {
  write_file_atomically(path, [&](std::ostream& out) { write_model(model, out, options); });
}

void write_tensor(const TensorProto& tensor, std::ostream& out, const WriteOptions& options) {
  Encoder<StreamSink>(StreamSink{&out}, options).tensor(tensor);
}

std::vector<std::byte> serialize_tensor(const TensorProto& tensor, const WriteOptions& options) {
  std::vector<std::byte> out;
  Encoder<VectorSink>(VectorSink{&out}, options).tensor(tensor);
  return out;
}

void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write) {
  write_output_file(path, write);
}

}  // namespace footprint::onnx
