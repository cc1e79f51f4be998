#pragma once
// The ONNX protobuf messages as plain, read-only views.
//
// Every string is a view into the model's bytes, every tensor payload a span into them; arrays
// live in the model's arena. Nothing here owns memory, so a whole tree is trivially destructible
// and costs a few dozen bytes per message regardless of how much data the message carries.
//
// Field names follow onnx.proto; repeated scalar fields that can be large (tensor payloads,
// attribute int/float lists) stay encoded and are decoded on demand through RepeatedScalar.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

namespace footprint::onnx {

// A counted array in the model's arena. Large arrays are stored in blocks of a power-of-two
// number of elements (so no single allocation outgrows the arena's chunk size, whatever counts a
// file holds); `Array<T>{ptr, count}` is a plain contiguous array.
template <class T>
struct Array {
  const T* ptr = nullptr;  // the elements, or (when block_shift > 0) a table of block pointers
  uint32_t count = 0;
  uint32_t block_shift = 0;  // log2 of the elements per block; 0: contiguous

  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;
    iterator(const Array* a, size_t i) : a_(a), i_(i) {}
    const T& operator*() const { return (*a_)[i_]; }
    const T* operator->() const { return &(*a_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++i_;
      return old;
    }
    friend bool operator==(const iterator& x, const iterator& y) { return x.i_ == y.i_; }

   private:
    const Array* a_;
    size_t i_;
  };

  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, count}; }
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  bool contiguous() const { return block_shift == 0; }
  const T& operator[](size_t i) const {
    if (block_shift == 0) return ptr[i];
    const auto* const* blocks = reinterpret_cast<const T* const*>(ptr);
    return blocks[i >> block_shift][i & ((size_t{1} << block_shift) - 1)];
  }
};

// How the elements of a repeated scalar field are laid out on the wire.
enum class ScalarKind : uint8_t { varint, fixed32, fixed64 };

// A repeated scalar field (packed or not) left encoded inside its message. `count` was
// established and every element validated when the message was read, so decoding cannot fail.
struct RepeatedScalar {
  std::span<const std::byte> message;  // the containing message's bytes
  uint32_t field = 0;
  uint32_t count = 0;
  ScalarKind kind = ScalarKind::varint;
  // Set when the values arrived as exactly one packed run (the usual encoding).
  bool single_run = false;

  bool empty() const { return count == 0; }
  // The packed run of fixed-width values when there is exactly one (zero-copy access to
  // float_data / double_data); empty otherwise.
  std::span<const std::byte> packed_fixed() const;
  // Calls f(uint64_t raw) for each element: the varint value, or the fixed-width bits.
  template <class F>
  void for_each(F&& f) const;
};

struct StringEntry {
  std::string_view key;
  std::string_view value;
};

struct OperatorSetId {
  std::string_view domain;
  int64_t version = 0;
};

struct TensorProto {
  enum class Location : uint8_t { inline_data = 0, external = 1 };

  std::string_view name;
  std::string_view doc_string;
  Array<int64_t> dims;
  int32_t data_type = 0;
  bool has_raw_data = false;
  std::span<const std::byte> raw_data;
  // The typed payload field (float_data, int32_data, int64_data, double_data, uint64_data) when
  // one is present; string_data is kept separately.
  RepeatedScalar typed_data;
  Array<std::string_view> string_data;
  Location data_location = Location::inline_data;
  Array<StringEntry> external_data;
  Array<StringEntry> metadata_props;
  bool has_segment = false;
  int64_t segment_begin = 0;
  int64_t segment_end = 0;
  // For external data: the bytes the location/offset/length entries name, resolved and bounds
  // checked at load time (a view into a mapped file owned by the model).
  std::span<const std::byte> external_bytes;
  uint64_t source_offset = 0;  // where the message starts in the model file
};

// A backend test's .pb of a sequence (SequenceProto) or an optional (OptionalProto) of tensors,
// as the tensors it holds. Sequences of sequences, maps, sparse tensors and optionals inside
// sequences are refused when read.
struct ValueFileProto {
  enum class Kind : uint8_t { sequence, optional };
  Kind kind = Kind::sequence;
  std::string_view name;
  Array<TensorProto> tensors;   // a sequence's elements; an optional's one tensor, or none
  bool holds_sequence = false;  // an optional holding a sequence: `tensors` are its elements
  uint64_t source_offset = 0;
};

struct SparseTensorProto {
  const TensorProto* values = nullptr;
  const TensorProto* indices = nullptr;
  Array<int64_t> dims;
};

struct TypeProto;

struct DimensionProto {
  bool has_value = false;
  bool has_param = false;
  int64_t value = 0;
  std::string_view param;
  std::string_view denotation;
};

struct TypeProto {
  enum class Kind : uint8_t { none, tensor, sparse_tensor, sequence, map, optional };
  Kind kind = Kind::none;
  int32_t elem_type = 0;  // tensor and sparse tensor
  bool has_shape = false;
  Array<DimensionProto> shape;
  int32_t key_type = 0;             // map
  const TypeProto* elem = nullptr;  // sequence / optional element, map value
  std::string_view denotation;
};

struct ValueInfoProto {
  std::string_view name;
  const TypeProto* type = nullptr;
  std::string_view doc_string;
  Array<StringEntry> metadata_props;
};

struct GraphProto;

template <class T>
inline constexpr Array<T> kEmptyArray{};

// An Array viewing a contiguous run of elements: what writers build messages from (their
// elements in an arena that outlives the message).
template <class T>
Array<std::remove_const_t<T>> array_of(std::span<T> s) {
  return {s.data(), static_cast<uint32_t>(s.size())};
}

// Attribute fields few models use, kept out of line so the common attribute stays small.
struct AttributeExtras {
  std::string_view ref_attr_name;
  const SparseTensorProto* sparse_tensor = nullptr;
  const TypeProto* tp = nullptr;
  Array<TensorProto> tensors;
  Array<GraphProto> graphs;
  Array<SparseTensorProto> sparse_tensors;
  Array<TypeProto> type_protos;
};

struct AttributeProto {
  enum class Type : int32_t {
    undefined = 0,
    float_ = 1,
    int_ = 2,
    string = 3,
    tensor = 4,
    graph = 5,
    floats = 6,
    ints = 7,
    strings = 8,
    tensors = 9,
    graphs = 10,
    sparse_tensor = 11,
    sparse_tensors = 12,
    type_proto = 13,
    type_protos = 14,
  };

  std::string_view name;
  std::string_view doc_string;
  Type type = Type::undefined;
  float f = 0;
  int64_t i = 0;
  std::string_view s;
  const TensorProto* t = nullptr;
  const GraphProto* g = nullptr;
  RepeatedScalar floats;
  RepeatedScalar ints;
  Array<std::string_view> strings;
  const AttributeExtras* extras = nullptr;  // nullptr when none of its fields is set

  std::string_view ref_attr_name() const { return extras ? extras->ref_attr_name : ""; }
  const SparseTensorProto* sparse_tensor() const {
    return extras ? extras->sparse_tensor : nullptr;
  }
  const TypeProto* tp() const { return extras ? extras->tp : nullptr; }
  const Array<TensorProto>& tensors() const {
    return extras ? extras->tensors : kEmptyArray<TensorProto>;
  }
  const Array<GraphProto>& graphs() const {
    return extras ? extras->graphs : kEmptyArray<GraphProto>;
  }
  const Array<SparseTensorProto>& sparse_tensors() const {
    return extras ? extras->sparse_tensors : kEmptyArray<SparseTensorProto>;
  }
  const Array<TypeProto>& type_protos() const {
    return extras ? extras->type_protos : kEmptyArray<TypeProto>;
  }
};

struct NodeProto {
  Array<std::string_view> inputs;
  Array<std::string_view> outputs;
  std::string_view name;
  std::string_view op_type;
  std::string_view domain;
  std::string_view overload;
  Array<AttributeProto> attributes;
  std::string_view doc_string;
  Array<StringEntry> metadata_props;
  uint64_t source_offset = 0;
};

struct TensorAnnotation {
  std::string_view tensor_name;
  Array<StringEntry> quant_parameter_tensor_names;
};

struct GraphProto {
  std::string_view name;
  Array<NodeProto> nodes;
  Array<TensorProto> initializers;
  Array<SparseTensorProto> sparse_initializers;
  std::string_view doc_string;
  Array<ValueInfoProto> inputs;
  Array<ValueInfoProto> outputs;
  Array<ValueInfoProto> value_info;
  Array<TensorAnnotation> quantization_annotation;
  Array<StringEntry> metadata_props;
};

struct FunctionProto {
  std::string_view name;
  std::string_view domain;
  std::string_view overload;
  Array<std::string_view> inputs;
  Array<std::string_view> outputs;
  Array<std::string_view> attributes;
  Array<AttributeProto> attribute_protos;
  Array<NodeProto> nodes;
  std::string_view doc_string;
  Array<OperatorSetId> opset_import;
  Array<ValueInfoProto> value_info;
  Array<StringEntry> metadata_props;
};

struct TrainingInfoProto {
  const GraphProto* initialization = nullptr;
  const GraphProto* algorithm = nullptr;
  Array<StringEntry> initialization_binding;
  Array<StringEntry> update_binding;
};

struct ModelProto {
  int64_t ir_version = 0;
  Array<OperatorSetId> opset_import;
  std::string_view producer_name;
  std::string_view producer_version;
  std::string_view domain;
  int64_t model_version = 0;
  std::string_view doc_string;
  const GraphProto* graph = nullptr;
  Array<StringEntry> metadata_props;
  Array<TrainingInfoProto> training_info;
  Array<FunctionProto> functions;
};

// Element count of a tensor's dims; nullopt for a negative dim or on overflow.
inline std::optional<uint64_t> dims_numel(const Array<int64_t>& dims) {
  uint64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return std::nullopt;
  }
  return n;
}

// ---- RepeatedScalar decoding (header-inline so callers can iterate without a call per value).

namespace wire_detail {
// Reads a varint the reader has already validated.
inline uint64_t read_varint(const std::byte*& p) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    auto b = static_cast<uint8_t>(*p++);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
}
inline uint64_t read_fixed(const std::byte* p, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}
}  // namespace wire_detail

inline std::span<const std::byte> RepeatedScalar::packed_fixed() const {
  using namespace wire_detail;
  if (!single_run || kind == ScalarKind::varint || count == 0) return {};
  const std::byte* p = message.data();
  const std::byte* end = p + message.size();
  while (p < end) {
    const uint64_t tag = read_varint(p);
    const int wt = static_cast<int>(tag & 7);
    if (wt == 0) {
      read_varint(p);
    } else if (wt == 1 || wt == 5) {
      p += wt == 1 ? 8 : 4;
    } else {
      const uint64_t len = read_varint(p);
      if (static_cast<uint32_t>(tag >> 3) == field) return {p, static_cast<size_t>(len)};
      p += len;
    }
  }
  return {};
}

template <class F>
void RepeatedScalar::for_each(F&& f) const {
  using namespace wire_detail;
  if (count == 0) return;
  const int width = kind == ScalarKind::fixed32 ? 4 : kind == ScalarKind::fixed64 ? 8 : 0;
  if (const auto run = packed_fixed(); !run.empty()) {
    for (size_t off = 0; off + width <= run.size(); off += width)
      f(read_fixed(run.data() + off, width));
    return;
  }
  const std::byte* p = message.data();
  const std::byte* end = p + message.size();
  while (p < end) {
    const uint64_t tag = read_varint(p);
    const auto number = static_cast<uint32_t>(tag >> 3);
    const auto wt = static_cast<int>(tag & 7);
    if (wt == 0) {
      const uint64_t v = read_varint(p);
      if (number == field) f(v);
    } else if (wt == 1 || wt == 5) {
      const int w = wt == 1 ? 8 : 4;
      if (number == field) f(read_fixed(p, w));
      p += w;
    } else if (wt == 2) {
      const uint64_t len = read_varint(p);
      if (number == field) {
        const std::byte* q = p;
        const std::byte* qend = p + len;
        while (q < qend) {
          if (width == 0) {
            f(read_varint(q));
          } else {
            f(read_fixed(q, width));
            q += width;
          }
        }
      }
      p += len;
    } else {
      return;  // groups never reach here: the reader rejects them
    }
  }
}

}  // namespace footprint::onnx
