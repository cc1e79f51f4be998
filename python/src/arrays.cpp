#include "arrays.hpp"

#include "footprint/core/error.hpp"

namespace footprint::python {
namespace {

// numpy's counterpart of `t` (core's table): the scalar types numpy has with the same bits.
bool has_numpy_counterpart(const DTypeTraits& t) {
  return t.numpy != 0 && t.read_real != nullptr;
}

}  // namespace

DType dtype_of(const pybind11::dtype& d, const std::string& what) {
  for (int32_t code = 1; is_known_dtype(code); ++code) {
    const DTypeTraits& t = dtype_traits(static_cast<DType>(code));
    if (has_numpy_counterpart(t) && t.numpy == d.kind() && t.bits / 8 == d.itemsize()) {
      return t.dtype;
    }
  }
  throw UsageError(what + ": numpy dtype " +
                   pybind11::str(pybind11::handle(d)).cast<std::string>() +
                   " has no ONNX counterpart footprint runs");
}

pybind11::array native_order(const pybind11::array& array) {
  if (array.dtype().byteorder() != '>') return array;
  return array.attr("astype")(array.dtype().attr("newbyteorder")("="));
}

pybind11::dtype numpy_dtype(DType t, const std::string& what) {
  const DTypeTraits& traits = dtype_traits(t);
  if (has_numpy_counterpart(traits)) {
    return pybind11::dtype(std::string(1, traits.numpy) + std::to_string(traits.bits / 8));
  }
  throw Error(what + ": " + std::string(traits.name) + " has no numpy counterpart");
}

}  // namespace footprint::python
