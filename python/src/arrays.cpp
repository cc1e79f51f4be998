#include "arrays.hpp"

#include "footprint/core/error.hpp"

namespace footprint::python {
namespace {

// numpy's and ONNX's element types, for the dtypes both have.
struct DTypePair {
  DType dtype;
  char kind;
  int itemsize;
};
constexpr DTypePair kDTypes[] = {
    {DType::float32, 'f', 4}, {DType::float64, 'f', 8}, {DType::float16, 'f', 2},
    {DType::int8, 'i', 1},    {DType::int16, 'i', 2},   {DType::int32, 'i', 4},
    {DType::int64, 'i', 8},   {DType::uint8, 'u', 1},   {DType::uint16, 'u', 2},
    {DType::uint32, 'u', 4},  {DType::uint64, 'u', 8},  {DType::boolean, 'b', 1},
};

}  // namespace

DType dtype_of(const pybind11::dtype& d, const std::string& what) {
  for (const DTypePair& p : kDTypes) {
    if (p.kind == d.kind() && p.itemsize == d.itemsize()) return p.dtype;
  }
  throw UsageError(what + ": numpy dtype " +
                   pybind11::str(pybind11::handle(d)).cast<std::string>() +
                   " has no ONNX counterpart footprint runs");
}

pybind11::dtype numpy_dtype(DType t, const std::string& what) {
  for (const DTypePair& p : kDTypes) {
    if (p.dtype == t) return pybind11::dtype(std::string(1, p.kind) + std::to_string(p.itemsize));
  }
  throw Error(what + ": " + std::string(dtype_name(t)) + " has no numpy counterpart");
}

}  // namespace footprint::python
