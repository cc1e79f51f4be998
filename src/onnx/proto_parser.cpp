#include "proto_parser.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "footprint/core/dtype.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/shape.hpp"

namespace footprint::onnx::detail {
namespace {

constexpr uint8_t kVarint = 0;
constexpr uint8_t kFixed64 = 1;
constexpr uint8_t kLen = 2;
constexpr uint8_t kFixed32 = 5;

std::string_view wire_name(uint8_t w) {
  switch (w) {
    case kVarint:
      return "varint";
    case kFixed64:
      return "fixed64";
    case kLen:
      return "length-delimited";
    case kFixed32:
      return "fixed32";
    default:
      return "invalid";
  }
}

std::string_view as_text(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

int scalar_width(ScalarKind k) {
  return k == ScalarKind::fixed32 ? 4 : k == ScalarKind::fixed64 ? 8 : 0;
}

uint8_t scalar_wire(ScalarKind k) {
  return k == ScalarKind::fixed32 ? kFixed32 : k == ScalarKind::fixed64 ? kFixed64 : kVarint;
}

// The typed payload field ONNX uses for each dtype, and how many values it holds per element.
struct TypedField {
  uint32_t field;
  ScalarKind kind;
};

std::optional<TypedField> typed_field_for(DType t) {
  switch (t) {
    case DType::float32:
    case DType::complex64:
      return TypedField{4, ScalarKind::fixed32};
    case DType::int64:
      return TypedField{7, ScalarKind::varint};
    case DType::float64:
    case DType::complex128:
      return TypedField{10, ScalarKind::fixed64};
    case DType::uint32:
    case DType::uint64:
      return TypedField{11, ScalarKind::varint};
    case DType::string:
    case DType::undefined:
      return std::nullopt;
    default:  // every other numeric type travels in int32_data
      return TypedField{5, ScalarKind::varint};
  }
}

// Values the typed field must hold for `numel` elements.
std::optional<uint64_t> typed_values_needed(DType t, uint64_t numel) {
  const DTypeTraits& traits = dtype_traits(t);
  if (traits.kind == DTypeKind::complex) {  // a real and an imaginary part per element
    if (numel > std::numeric_limits<uint64_t>::max() / 2) return std::nullopt;
    return numel * 2;
  }
  if (traits.packed) return numel / 2 + numel % 2;  // two elements per stored value
  return numel;
}

std::optional<uint64_t> parse_decimal(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    if (__builtin_mul_overflow(v, uint64_t{10}, &v)) return std::nullopt;
    if (__builtin_add_overflow(v, static_cast<uint64_t>(c - '0'), &v)) return std::nullopt;
  }
  return v;
}

// A relative path that cannot name anything outside its base folder lexically.
bool is_contained_relative(std::string_view location) {
  if (location.empty() || location.find('\0') != std::string_view::npos) return false;
  std::filesystem::path p{std::string(location)};
  if (p.is_absolute() || p.has_root_name() || p.has_root_directory()) return false;
  for (const auto& part : p) {
    if (part == "..") return false;
  }
  return true;
}

}  // namespace

// Iterates the fields of one message, validating tags, wire types and lengths as it goes.
class ProtoParser::Cursor {
 public:
  Cursor(const ProtoParser& parser, std::span<const std::byte> msg)
      : parser_(parser), cur_(msg.data()), end_(msg.data() + msg.size()) {}

  bool next(Field& f) {
    if (cur_ == end_) return false;
    f.at = cur_;
    const uint64_t tag = varint("field tag");
    const uint64_t number = tag >> 3;
    if (number == 0 || number > 0x1fffffff) {
      parser_.fail(f.at, "invalid field number " + std::to_string(number));
    }
    f.number = static_cast<uint32_t>(number);
    f.wire = static_cast<uint8_t>(tag & 7);
    f.varint = 0;
    f.bytes = {};
    switch (f.wire) {
      case kVarint:
        f.varint = varint("varint value");
        break;
      case kFixed64:
        f.bytes = take(8, f);
        break;
      case kFixed32:
        f.bytes = take(4, f);
        break;
      case kLen: {
        const uint64_t len = varint("length");
        f.bytes = take(len, f);
        break;
      }
      case 3:
      case 4:
        parser_.fail(f.at, "field " + std::to_string(f.number) +
                               " uses a protobuf group (wire type " + std::to_string(f.wire) +
                               "), which ONNX never does");
      default:
        parser_.fail(f.at, "field " + std::to_string(f.number) + " has invalid wire type " +
                               std::to_string(f.wire));
    }
    return true;
  }

 private:
  uint64_t varint(std::string_view what) {
    uint64_t v = 0;
    const std::byte* start = cur_;
    for (int i = 0; i < 10; ++i) {
      if (cur_ == end_) parser_.fail(start, "truncated " + std::string(what));
      const auto b = static_cast<uint8_t>(*cur_++);
      if (i == 9 && b > 1) parser_.fail(start, std::string(what) + " overflows 64 bits");
      v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) return v;
    }
    parser_.fail(start, std::string(what) + " is longer than 10 bytes");
  }

  std::span<const std::byte> take(uint64_t len, const Field& f) {
    const auto left = static_cast<uint64_t>(end_ - cur_);
    if (len > left) {
      parser_.fail(f.at, "field " + std::to_string(f.number) + " claims " + std::to_string(len) +
                             " bytes but only " + std::to_string(left) +
                             " remain in the enclosing message");
    }
    std::span<const std::byte> out{cur_, static_cast<size_t>(len)};
    cur_ += len;
    return out;
  }

  const ProtoParser& parser_;
  const std::byte* cur_;
  const std::byte* end_;
};

ProtoParser::ProtoParser(const ModelSource& source, BumpArena& arena, int max_depth,
                         ExternalResolver* external)
    : source_(source),
      base_(source.bytes().data()),
      arena_(arena),
      max_depth_(std::clamp(max_depth, 1, 200)),
      external_(external) {}

void ProtoParser::fail(const std::byte* at, std::string_view what) const {
  std::string path;
  for (int i = 0; i < path_len_; ++i) {
    if (i != 0) path += '.';
    path += path_[i].field;
    if (path_[i].index >= 0) path += "[" + std::to_string(path_[i].index) + "]";
  }
  std::string msg = source_.name() + ": offset " + std::to_string(offset_of(at)) + ": ";
  msg += path.empty() ? std::string("(top level)") : path;
  msg += ": ";
  msg += what;
  throw Error(msg);
}

void ProtoParser::expect_wire(const Field& f, uint8_t wire, std::string_view name) const {
  if (f.wire != wire) {
    fail(f.at, std::string(name) + " (field " + std::to_string(f.number) + ") has wire type " +
                   std::string(wire_name(f.wire)) + ", expected " + std::string(wire_name(wire)));
  }
}

ProtoParser::Counts ProtoParser::scan(std::span<const std::byte> msg) {
  Counts counts{};
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    if (f.number < counts.size()) ++counts[f.number];
  }
  return counts;
}

template <class T, class Fn>
void ProtoParser::nested(const Field& f, std::string_view name, int64_t index, T& out, Fn parse) {
  expect_wire(f, kLen, name);
  if (depth_ >= max_depth_) {
    fail(f.at, std::string(name) + " is nested more than " + std::to_string(max_depth_) +
                   " messages deep");
  }
  path_[path_len_++] = Frame{name, index};
  ++depth_;
  (this->*parse)(f.bytes, out);
  --depth_;
  --path_len_;
}

template <class T, class Fn>
void ProtoParser::nested_item(const Field& f, std::string_view name, Filler<T>& filler, Fn parse) {
  const int64_t index = filler.used;
  nested(f, name, index, filler.next(), parse);
}

template <class T, class Fn>
const T* ProtoParser::nested_new(const Field& f, std::string_view name, Fn parse) {
  T* out = arena_.make<T>();
  nested(f, name, -1, *out, parse);
  return out;
}

#define FP_STR(name) (expect_wire(f, kLen, name), as_text(f.bytes))
#define FP_INT(name) (expect_wire(f, kVarint, name), static_cast<int64_t>(f.varint))
#define FP_INT32(name) \
  (expect_wire(f, kVarint, name), static_cast<int32_t>(static_cast<uint32_t>(f.varint)))

const ModelProto* ProtoParser::parse_model() {
  auto* model = arena_.make<ModelProto>();
  path_len_ = 0;
  depth_ = 0;
  parse_model_into(source_.bytes(), *model);
  if (model->graph == nullptr) fail(base_, "the model has no graph (ModelProto field 7)");
  return model;
}

const TensorProto* ProtoParser::parse_tensor_file() {
  auto* tensor = arena_.make<TensorProto>();
  path_[path_len_++] = Frame{"TensorProto", -1};
  parse_tensor(source_.bytes(), *tensor);
  --path_len_;
  return tensor;
}

const ValueFileProto* ProtoParser::parse_value_file(ValueFileProto::Kind kind) {
  auto* value = arena_.make<ValueFileProto>();
  const bool sequence = kind == ValueFileProto::Kind::sequence;
  path_[path_len_++] = Frame{sequence ? "SequenceProto" : "OptionalProto", -1};
  value->kind = kind;
  parse_held(source_.bytes(), *value);
  --path_len_;
  return value;
}

// SequenceProto and OptionalProto number their fields alike: name 1, elem_type 2, the tensor(s) 3,
// a sparse tensor 4, a sequence 5, a map 6, an optional 7. footprint reads sequences of tensors
// and optionals of a tensor or of such a sequence (out.kind says which message this is).
void ProtoParser::parse_held(std::span<const std::byte> msg, ValueFileProto& out) {
  const bool optional = out.kind == ValueFileProto::Kind::optional;
  out.source_offset = offset_of(msg.data());
  const Counts c = scan(msg);
  if (optional && c[3] + c[5] > 1) fail(msg.data(), "an optional holds more than one value");
  auto tensors = array_for<TensorProto>(c, 3);
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    switch (f.number) {
      case 1:
        out.name = FP_STR("name");
        break;
      case 2:
        (void)FP_INT32("elem_type");
        break;
      case 3:
        nested_item(f, optional ? "tensor_value" : "tensor_values", tensors,
                    &ProtoParser::parse_tensor);
        break;
      case 5:
        if (optional) {
          ValueFileProto inner;  // kind: a sequence
          nested(f, "sequence_value", -1, inner, &ProtoParser::parse_held);
          out.tensors = inner.tensors;
          out.holds_sequence = true;
          break;
        }
        [[fallthrough]];
      case 4:
      case 6:
      case 7:
        fail(f.at, optional ? "an optional of a sparse tensor, map or optional; footprint reads "
                              "optionals of tensors and of sequences of tensors"
                            : "a sequence of sparse tensors, sequences, maps or optionals; "
                              "footprint reads sequences of tensors");
      default:
        break;
    }
  }
  if (!out.holds_sequence) out.tensors = tensors.done();
}

void ProtoParser::parse_model_into(std::span<const std::byte> msg, ModelProto& out) {
  const Counts c = scan(msg);
  auto opsets = array_for<OperatorSetId>(c, 8);
  auto meta = array_for<StringEntry>(c, 14);
  auto training = array_for<TrainingInfoProto>(c, 20);
  auto functions = array_for<FunctionProto>(c, 25);
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    switch (f.number) {
      case 1:
        out.ir_version = FP_INT("ir_version");
        break;
      case 2:
        out.producer_name = FP_STR("producer_name");
        break;
      case 3:
        out.producer_version = FP_STR("producer_version");
        break;
      case 4:
        out.domain = FP_STR("domain");
        break;
      case 5:
        out.model_version = FP_INT("model_version");
        break;
      case 6:
        out.doc_string = FP_STR("doc_string");
        break;
      case 7:
        if (out.graph != nullptr) fail(f.at, "graph appears twice");
        out.graph = nested_new<GraphProto>(f, "graph", &ProtoParser::parse_graph);
        break;
      case 8:
        nested_item(f, "opset_import", opsets, &ProtoParser::parse_opset);
        break;
      case 14:
        nested_item(f, "metadata_props", meta, &ProtoParser::parse_string_entry);
        break;
      case 20:
        nested_item(f, "training_info", training, &ProtoParser::parse_training_info);
        break;
      case 25:
        nested_item(f, "functions", functions, &ProtoParser::parse_function);
        break;
      default:
        break;
    }
  }
  out.opset_import = opsets.done();
  out.metadata_props = meta.done();
  out.training_info = training.done();
  out.functions = functions.done();
}

void ProtoParser::parse_graph(std::span<const std::byte> msg, GraphProto& out) {
  const Counts c = scan(msg);
  auto nodes = array_for<NodeProto>(c, 1);
  auto inits = array_for<TensorProto>(c, 5);
  auto sparse = array_for<SparseTensorProto>(c, 15);
  auto inputs = array_for<ValueInfoProto>(c, 11);
  auto outputs = array_for<ValueInfoProto>(c, 12);
  auto infos = array_for<ValueInfoProto>(c, 13);
  auto annotations = array_for<TensorAnnotation>(c, 14);
  auto meta = array_for<StringEntry>(c, 16);
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    switch (f.number) {
      case 1:
        nested_item(f, "node", nodes, &ProtoParser::parse_node);
        break;
      case 2:
        out.name = FP_STR("name");
        break;
      case 5:
        nested_item(f, "initializer", inits, &ProtoParser::parse_tensor);
        break;
      case 10:
        out.doc_string = FP_STR("doc_string");
        break;
      case 11:
        nested_item(f, "input", inputs, &ProtoParser::parse_value_info);
        break;
      case 12:
        nested_item(f, "output", outputs, &ProtoParser::parse_value_info);
        break;
      case 13:
        nested_item(f, "value_info", infos, &ProtoParser::parse_value_info);
        break;
      case 14:
        nested_item(f, "quantization_annotation", annotations, &ProtoParser::parse_annotation);
        break;
      case 15:
        nested_item(f, "sparse_initializer", sparse, &ProtoParser::parse_sparse_tensor);
        break;
      case 16:
        nested_item(f, "metadata_props", meta, &ProtoParser::parse_string_entry);
        break;
      default:
        break;
    }
  }
  out.nodes = nodes.done();
  out.initializers = inits.done();
  out.sparse_initializers = sparse.done();
  out.inputs = inputs.done();
  out.outputs = outputs.done();
  out.value_info = infos.done();
  out.quantization_annotation = annotations.done();
  out.metadata_props = meta.done();
}

void ProtoParser::parse_node(std::span<const std::byte> msg, NodeProto& out) {
  out.source_offset = offset_of(msg.data());
  const Counts c = scan(msg);
  auto inputs = array_for<std::string_view>(c, 1);
  auto outputs = array_for<std::string_view>(c, 2);
  auto attrs = array_for<AttributeProto>(c, 5);
  auto meta = array_for<StringEntry>(c, 9);
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    switch (f.number) {
      case 1:
        inputs.next() = FP_STR("input");
        break;
      case 2:
        outputs.next() = FP_STR("output");
        break;
      case 3:
        out.name = FP_STR("name");
        break;
      case 4:
        out.op_type = FP_STR("op_type");
        break;
      case 5:
        nested_item(f, "attribute", attrs, &ProtoParser::parse_attribute);
        break;
      case 6:
        out.doc_string = FP_STR("doc_string");
        break;
      case 7:
        out.domain = FP_STR("domain");
        break;
      case 8:
        out.overload = FP_STR("overload");
        break;
      case 9:
        nested_item(f, "metadata_props", meta, &ProtoParser::parse_string_entry);
        break;
      default:
        break;
    }
  }
  out.inputs = inputs.done();
  out.outputs = outputs.done();
  out.attributes = attrs.done();
  out.metadata_props = meta.done();
}

void ProtoParser::parse_attribute(std::span<const std::byte> msg, AttributeProto& out) {
  const Counts c = scan(msg);
  auto strings = array_for<std::string_view>(c, 9);
  auto tensors = array_for<TensorProto>(c, 10);
  auto graphs = array_for<GraphProto>(c, 11);
  auto types = array_for<TypeProto>(c, 15);
  auto sparse = array_for<SparseTensorProto>(c, 23);
  AttributeExtras extras;
  bool has_extras = false;
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    switch (f.number) {
      case 1:
        out.name = FP_STR("name");
        break;
      case 2:
        expect_wire(f, kFixed32, "f");
        std::memcpy(&out.f, f.bytes.data(), 4);
        break;
      case 3:
        out.i = FP_INT("i");
        break;
      case 4:
        out.s = FP_STR("s");
        break;
      case 5:
        out.t = nested_new<TensorProto>(f, "t", &ProtoParser::parse_tensor);
        break;
      case 6:
        out.g = nested_new<GraphProto>(f, "g", &ProtoParser::parse_graph);
        break;
      case 7:
        collect_scalar(out.floats, msg, f, ScalarKind::fixed32);
        break;
      case 8:
        collect_scalar(out.ints, msg, f, ScalarKind::varint);
        break;
      case 9:
        strings.next() = FP_STR("strings");
        break;
      case 10:
        nested_item(f, "tensors", tensors, &ProtoParser::parse_tensor);
        break;
      case 11:
        nested_item(f, "graphs", graphs, &ProtoParser::parse_graph);
        break;
      case 13:
        out.doc_string = FP_STR("doc_string");
        break;
      case 14:
        extras.tp = nested_new<TypeProto>(f, "tp", &ProtoParser::parse_type);
        has_extras = true;
        break;
      case 15:
        nested_item(f, "type_protos", types, &ProtoParser::parse_type);
        break;
      case 20: {
        const int32_t type = FP_INT32("type");
        if (type < 0 || type > 14) {
          fail(f.at, "attribute type " + std::to_string(type) + " is not an AttributeType");
        }
        out.type = static_cast<AttributeProto::Type>(type);
        break;
      }
      case 21:
        extras.ref_attr_name = FP_STR("ref_attr_name");
        has_extras = true;
        break;
      case 22:
        extras.sparse_tensor =
            nested_new<SparseTensorProto>(f, "sparse_tensor", &ProtoParser::parse_sparse_tensor);
        break;
      case 23:
        nested_item(f, "sparse_tensors", sparse, &ProtoParser::parse_sparse_tensor);
        break;
      default:
        break;
    }
  }
  out.strings = strings.done();
  extras.tensors = tensors.done();
  extras.graphs = graphs.done();
  extras.type_protos = types.done();
  extras.sparse_tensors = sparse.done();
  has_extras = has_extras || extras.sparse_tensor != nullptr || !extras.tensors.empty() ||
               !extras.graphs.empty() || !extras.type_protos.empty() ||
               !extras.sparse_tensors.empty();
  if (has_extras) out.extras = arena_.make<AttributeExtras>(extras);
}

void ProtoParser::collect_scalar(RepeatedScalar& r, std::span<const std::byte> msg, const Field& f,
                                 ScalarKind kind) {
  const bool first = r.field == 0;
  if (first) {
    r.message = msg;
    r.field = f.number;
    r.kind = kind;
  } else if (r.field != f.number) {
    fail(f.at, "field " + std::to_string(f.number) + " carries values but field " +
                   std::to_string(r.field) + " already did (one typed payload per tensor)");
  }
  uint64_t n = 0;
  if (f.wire == kLen) {
    const int width = scalar_width(kind);
    if (width != 0) {
      if (f.bytes.size() % width != 0) {
        fail(f.at, "packed field " + std::to_string(f.number) + " has " +
                       std::to_string(f.bytes.size()) + " bytes, not a multiple of " +
                       std::to_string(width));
      }
      n = f.bytes.size() / width;
      r.single_run = first;
    } else {
      int run = 0;
      for (std::byte b : f.bytes) {
        const bool more = (static_cast<uint8_t>(b) & 0x80) != 0;
        if (++run > 10) fail(f.at, "packed varint longer than 10 bytes");
        if (!more) {
          ++n;
          run = 0;
        }
      }
      if (run != 0) fail(f.at, "packed varints end in the middle of a value");
    }
  } else {
    if (f.wire != scalar_wire(kind)) {
      fail(f.at, "field " + std::to_string(f.number) + " has wire type " +
                     std::string(wire_name(f.wire)) + ", expected " +
                     std::string(wire_name(scalar_wire(kind))) + " or packed");
    }
    n = 1;
    r.single_run = false;
  }
  if (n > std::numeric_limits<uint32_t>::max() - r.count) {
    fail(f.at, "more than 2^32 values in one field");
  }
  r.count += static_cast<uint32_t>(n);
}

void ProtoParser::parse_tensor(std::span<const std::byte> msg, TensorProto& out) {
  out.source_offset = offset_of(msg.data());
  const Counts c = scan(msg);
  auto strings = array_for<std::string_view>(c, 6);
  auto external = array_for<StringEntry>(c, 13);
  auto meta = array_for<StringEntry>(c, 16);
  RepeatedScalar dims;
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    switch (f.number) {
      case 1:
        collect_scalar(dims, msg, f, ScalarKind::varint);
        break;
      case 2:
        out.data_type = FP_INT32("data_type");
        break;
      case 3:
        nested(f, "segment", -1, out, &ProtoParser::parse_segment);
        out.has_segment = true;
        break;
      case 4:
        collect_scalar(out.typed_data, msg, f, ScalarKind::fixed32);
        break;
      case 5:
        collect_scalar(out.typed_data, msg, f, ScalarKind::varint);
        break;
      case 6:
        strings.next() = FP_STR("string_data");
        break;
      case 7:
        collect_scalar(out.typed_data, msg, f, ScalarKind::varint);
        break;
      case 8:
        out.name = FP_STR("name");
        break;
      case 9:
        out.raw_data = (expect_wire(f, kLen, "raw_data"), f.bytes);
        out.has_raw_data = true;
        break;
      case 10:
        collect_scalar(out.typed_data, msg, f, ScalarKind::fixed64);
        break;
      case 11:
        collect_scalar(out.typed_data, msg, f, ScalarKind::varint);
        break;
      case 12:
        out.doc_string = FP_STR("doc_string");
        break;
      case 13:
        nested_item(f, "external_data", external, &ProtoParser::parse_string_entry);
        break;
      case 14: {
        const int64_t loc = FP_INT("data_location");
        if (loc != 0 && loc != 1) {
          fail(f.at, "data_location " + std::to_string(loc) + " is neither DEFAULT nor EXTERNAL");
        }
        out.data_location = static_cast<TensorProto::Location>(loc);
        break;
      }
      case 16:
        nested_item(f, "metadata_props", meta, &ProtoParser::parse_string_entry);
        break;
      default:
        break;
    }
  }
  Filler<int64_t> dim_values(arena_, dims.count);
  dims.for_each([&](uint64_t v) { dim_values.next() = static_cast<int64_t>(v); });
  out.dims = dim_values.done();
  out.string_data = strings.done();
  out.external_data = external.done();
  out.metadata_props = meta.done();
  validate_tensor(out, msg.data());
}

void ProtoParser::parse_segment(std::span<const std::byte> msg, TensorProto& out) {
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    if (f.number == 1) out.segment_begin = FP_INT("begin");
    if (f.number == 2) out.segment_end = FP_INT("end");
  }
}

void ProtoParser::validate_tensor(TensorProto& t, const std::byte* msg_start) {
  if (!is_known_dtype(t.data_type)) {
    // A tensor that carries no data at all (a type-only placeholder) may leave the type unset.
    const bool no_payload = !t.has_raw_data && t.typed_data.empty() && t.string_data.empty() &&
                            t.data_location != TensorProto::Location::external;
    if (t.data_type == 0 && no_payload) return;
    fail(msg_start, "data_type " + std::to_string(t.data_type) + " is not a TensorProto.DataType");
  }
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (t.dims[i] < 0) {
      fail(msg_start, "dims[" + std::to_string(i) + "] is " + std::to_string(t.dims[i]) +
                          "; tensor dims must be >= 0");
    }
  }
  const auto numel = dims_numel(t.dims);
  if (!numel) fail(msg_start, "the product of dims overflows 64 bits");
  const auto dtype = static_cast<DType>(t.data_type);
  const std::string shape_text =
      std::string(dtype_name(dtype)) + " tensor of " + std::to_string(*numel) + " elements";

  if (t.data_location == TensorProto::Location::external) {
    const auto bytes = dtype_storage_bytes(dtype, *numel);
    if (!bytes) fail(msg_start, "external data is not supported for " + shape_text);
    resolve_external(t, *bytes, msg_start);
    return;
  }
  if (dtype == DType::string) {
    if (t.has_raw_data || !t.typed_data.empty()) {
      fail(msg_start, "a string tensor must use string_data");
    }
    if (t.string_data.size() != *numel) {
      fail(msg_start, "string_data holds " + std::to_string(t.string_data.size()) +
                          " strings for a " + shape_text);
    }
    return;
  }
  if (t.has_raw_data) {
    const auto bytes = dtype_storage_bytes(dtype, *numel);
    if (!bytes || t.raw_data.size() != *bytes) {
      fail(msg_start, "raw_data holds " + std::to_string(t.raw_data.size()) + " bytes; a " +
                          shape_text + " needs " + (bytes ? std::to_string(*bytes) : "more"));
    }
    return;
  }
  if (!t.typed_data.empty() || t.typed_data.field != 0) {
    const auto expected = typed_field_for(dtype);
    if (!expected || expected->field != t.typed_data.field) {
      fail(msg_start, "payload field " + std::to_string(t.typed_data.field) + " does not match a " +
                          shape_text);
    }
    const auto needed = typed_values_needed(dtype, *numel);
    if (!needed || t.typed_data.count != *needed) {
      fail(msg_start, "typed data holds " + std::to_string(t.typed_data.count) + " values; a " +
                          shape_text + " needs " + (needed ? std::to_string(*needed) : "more"));
    }
    return;
  }
  if (!t.string_data.empty()) fail(msg_start, "string_data given for a " + shape_text);
  if (*numel != 0) fail(msg_start, "no data for a " + shape_text);
}

void ProtoParser::resolve_external(TensorProto& t, uint64_t expected_bytes,
                                   const std::byte* msg_start) {
  std::string_view location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const StringEntry& e : t.external_data) {
    if (e.key == "location") {
      location = e.value;
    } else if (e.key == "offset" || e.key == "length") {
      const auto v = parse_decimal(e.value);
      if (!v) {
        fail(msg_start, "external_data " + std::string(e.key) + " " + in_quotes(e.value) +
                            " is not a non-negative integer");
      }
      if (e.key == "offset") {
        offset = *v;
      } else {
        length = *v;
      }
    }
  }
  if (location.empty()) fail(msg_start, "external data without a location");
  if (!is_contained_relative(location)) {
    fail(msg_start, "external data location " + in_quotes(location) +
                        " must be a relative path inside the model's folder");
  }
  if (external_ == nullptr) {
    fail(msg_start,
         "external data " + in_quotes(location) + " but the model was not loaded from a folder");
  }
  std::span<const std::byte> file;
  try {
    file = external_->file_bytes(location);
  } catch (const Error& e) {
    fail(msg_start, e.what());
  }
  if (offset > file.size()) {
    fail(msg_start, "external data offset " + std::to_string(offset) + " is past the end of " +
                        in_quotes(location) + " (" + std::to_string(file.size()) + " bytes)");
  }
  const uint64_t available = file.size() - offset;
  const uint64_t len = length.value_or(available);
  if (len > available) {
    fail(msg_start, "external data length " + std::to_string(len) + " at offset " +
                        std::to_string(offset) + " runs past the end of " + in_quotes(location) +
                        " (" + std::to_string(file.size()) + " bytes)");
  }
  if (len != expected_bytes) {
    fail(msg_start, "external data holds " + std::to_string(len) + " bytes; the tensor needs " +
                        std::to_string(expected_bytes));
  }
  t.external_bytes = file.subspan(offset, len);
}

void ProtoParser::parse_sparse_tensor(std::span<const std::byte> msg, SparseTensorProto& out) {
  RepeatedScalar dims;
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    switch (f.number) {
      case 1:
        out.values = nested_new<TensorProto>(f, "values", &ProtoParser::parse_tensor);
        break;
      case 2:
        out.indices = nested_new<TensorProto>(f, "indices", &ProtoParser::parse_tensor);
        break;
      case 3:
        collect_scalar(dims, msg, f, ScalarKind::varint);
        break;
      default:
        break;
    }
  }
  Filler<int64_t> dim_values(arena_, dims.count);
  dims.for_each([&](uint64_t v) { dim_values.next() = static_cast<int64_t>(v); });
  out.dims = dim_values.done();
}

void ProtoParser::parse_type(std::span<const std::byte> msg, TypeProto& out) {
  Cursor cur(*this, msg);
  Field f;
  auto set_kind = [&](TypeProto::Kind k) {
    if (out.kind != TypeProto::Kind::none && out.kind != k) {
      fail(f.at, "TypeProto sets more than one of tensor/sequence/map/optional/sparse");
    }
    out.kind = k;
  };
  while (cur.next(f)) {
    switch (f.number) {
      case 1:
        set_kind(TypeProto::Kind::tensor);
        nested(f, "tensor_type", -1, out, &ProtoParser::parse_type_tensor);
        break;
      case 8:
        set_kind(TypeProto::Kind::sparse_tensor);
        nested(f, "sparse_tensor_type", -1, out, &ProtoParser::parse_type_tensor);
        break;
      case 4:
      case 9: {
        set_kind(f.number == 4 ? TypeProto::Kind::sequence : TypeProto::Kind::optional);
        const std::string_view name = f.number == 4 ? "sequence_type" : "optional_type";
        expect_wire(f, kLen, name);
        // Sequence and Optional each wrap a single element TypeProto in field 1.
        Cursor inner(*this, f.bytes);
        Field g;
        while (inner.next(g)) {
          if (g.number == 1) out.elem = nested_new<TypeProto>(g, name, &ProtoParser::parse_type);
        }
        break;
      }
      case 5: {
        set_kind(TypeProto::Kind::map);
        expect_wire(f, kLen, "map_type");
        Cursor inner(*this, f.bytes);
        Field g;
        while (inner.next(g)) {
          if (g.number == 1) {
            expect_wire(g, kVarint, "key_type");
            out.key_type = static_cast<int32_t>(static_cast<uint32_t>(g.varint));
          } else if (g.number == 2) {
            out.elem = nested_new<TypeProto>(g, "map_type.value_type", &ProtoParser::parse_type);
          }
        }
        break;
      }
      case 6:
        out.denotation = FP_STR("denotation");
        break;
      default:
        break;
    }
  }
}

void ProtoParser::parse_type_tensor(std::span<const std::byte> msg, TypeProto& out) {
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    if (f.number == 1) out.elem_type = FP_INT32("elem_type");
    if (f.number == 2) {
      nested(f, "shape", -1, out, &ProtoParser::parse_shape);
      out.has_shape = true;
    }
  }
}

void ProtoParser::parse_shape(std::span<const std::byte> msg, TypeProto& out) {
  const Counts c = scan(msg);
  auto dims = array_for<DimensionProto>(c, 1);
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    if (f.number == 1) nested_item(f, "dim", dims, &ProtoParser::parse_dimension);
  }
  out.shape = dims.done();
}

void ProtoParser::parse_dimension(std::span<const std::byte> msg, DimensionProto& out) {
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    switch (f.number) {
      case 1:
        out.value = FP_INT("dim_value");
        out.has_value = true;
        out.has_param = false;
        break;
      case 2:
        out.param = FP_STR("dim_param");
        out.has_param = true;
        out.has_value = false;
        break;
      case 3:
        out.denotation = FP_STR("denotation");
        break;
      default:
        break;
    }
  }
}

void ProtoParser::parse_value_info(std::span<const std::byte> msg, ValueInfoProto& out) {
  const Counts c = scan(msg);
  auto meta = array_for<StringEntry>(c, 4);
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    switch (f.number) {
      case 1:
        out.name = FP_STR("name");
        break;
      case 2:
        out.type = nested_new<TypeProto>(f, "type", &ProtoParser::parse_type);
        break;
      case 3:
        out.doc_string = FP_STR("doc_string");
        break;
      case 4:
        nested_item(f, "metadata_props", meta, &ProtoParser::parse_string_entry);
        break;
      default:
        break;
    }
  }
  out.metadata_props = meta.done();
}

void ProtoParser::parse_function(std::span<const std::byte> msg, FunctionProto& out) {
  const Counts c = scan(msg);
  auto inputs = array_for<std::string_view>(c, 4);
  auto outputs = array_for<std::string_view>(c, 5);
  auto attrs = array_for<std::string_view>(c, 6);
  auto nodes = array_for<NodeProto>(c, 7);
  auto opsets = array_for<OperatorSetId>(c, 9);
  auto attr_protos = array_for<AttributeProto>(c, 11);
  auto infos = array_for<ValueInfoProto>(c, 12);
  auto meta = array_for<StringEntry>(c, 14);
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    switch (f.number) {
      case 1:
        out.name = FP_STR("name");
        break;
      case 4:
        inputs.next() = FP_STR("input");
        break;
      case 5:
        outputs.next() = FP_STR("output");
        break;
      case 6:
        attrs.next() = FP_STR("attribute");
        break;
      case 7:
        nested_item(f, "node", nodes, &ProtoParser::parse_node);
        break;
      case 8:
        out.doc_string = FP_STR("doc_string");
        break;
      case 9:
        nested_item(f, "opset_import", opsets, &ProtoParser::parse_opset);
        break;
      case 10:
        out.domain = FP_STR("domain");
        break;
      case 11:
        nested_item(f, "attribute_proto", attr_protos, &ProtoParser::parse_attribute);
        break;
      case 12:
        nested_item(f, "value_info", infos, &ProtoParser::parse_value_info);
        break;
      case 13:
        out.overload = FP_STR("overload");
        break;
      case 14:
        nested_item(f, "metadata_props", meta, &ProtoParser::parse_string_entry);
        break;
      default:
        break;
    }
  }
  out.inputs = inputs.done();
  out.outputs = outputs.done();
  out.attributes = attrs.done();
  out.nodes = nodes.done();
  out.opset_import = opsets.done();
  out.attribute_protos = attr_protos.done();
  out.value_info = infos.done();
  out.metadata_props = meta.done();
}

void ProtoParser::parse_training_info(std::span<const std::byte> msg, TrainingInfoProto& out) {
  const Counts c = scan(msg);
  auto init_binding = array_for<StringEntry>(c, 3);
  auto update_binding = array_for<StringEntry>(c, 4);
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    switch (f.number) {
      case 1:
        out.initialization = nested_new<GraphProto>(f, "initialization", &ProtoParser::parse_graph);
        break;
      case 2:
        out.algorithm = nested_new<GraphProto>(f, "algorithm", &ProtoParser::parse_graph);
        break;
      case 3:
        nested_item(f, "initialization_binding", init_binding, &ProtoParser::parse_string_entry);
        break;
      case 4:
        nested_item(f, "update_binding", update_binding, &ProtoParser::parse_string_entry);
        break;
      default:
        break;
    }
  }
  out.initialization_binding = init_binding.done();
  out.update_binding = update_binding.done();
}

void ProtoParser::parse_string_entry(std::span<const std::byte> msg, StringEntry& out) {
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    if (f.number == 1) out.key = FP_STR("key");
    if (f.number == 2) out.value = FP_STR("value");
  }
}

void ProtoParser::parse_opset(std::span<const std::byte> msg, OperatorSetId& out) {
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    if (f.number == 1) out.domain = FP_STR("domain");
    if (f.number == 2) out.version = FP_INT("version");
  }
}

void ProtoParser::parse_annotation(std::span<const std::byte> msg, TensorAnnotation& out) {
  const Counts c = scan(msg);
  auto names = array_for<StringEntry>(c, 2);
  Cursor cur(*this, msg);
  Field f;
  while (cur.next(f)) {
    if (f.number == 1) out.tensor_name = FP_STR("tensor_name");
    if (f.number == 2) {
      nested_item(f, "quant_parameter_tensor_names", names, &ProtoParser::parse_string_entry);
    }
  }
  out.quant_parameter_tensor_names = names.done();
}

}  // namespace footprint::onnx::detail
