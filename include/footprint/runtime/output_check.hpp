#pragma once
// Compares a run's outputs with expected tensors (the backend tests' output_*.pb): an element
// matches when |got - want| <= atol + rtol * |want|; integers and bools must be equal; NaN
// matches NaN.
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "footprint/runtime/tensor.hpp"

namespace footprint::runtime {

struct OutputCheck {
  bool match = true;
  double max_abs_error = 0;
  double max_rel_error = 0;  // |got - want| / |want| over elements with want != 0
  std::string problem;       // the first mismatch, naming the output and element
};

OutputCheck check_outputs(std::span<const Tensor> got, std::span<const Tensor> want, double rtol,
                          double atol);
// Expected tensors from files, matched by name when the names agree, else by position.
OutputCheck check_outputs(std::span<const Tensor> got,
                          const std::vector<std::filesystem::path>& want_files, double rtol,
                          double atol);

}  // namespace footprint::runtime
