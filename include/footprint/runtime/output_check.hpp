#pragma once
// Compares a run's outputs with expected tensors (the backend tests' output_*.pb): an element
// matches when |got - want| <= atol + rtol * |want|; integers and bools must be equal; NaN
// matches NaN. With `atol_of_peak` > 0 a float output's atol is at least that share of its
// largest expected magnitude: float32 sums of large terms carry absolute errors that grow with
// them, so near-zero elements of large outputs (logits) differ between two correct runs by more
// than a fixed atol (onnxruntime against itself, optimisations on and off, by 3.4e-4 on a
// GPT-2-style model's logits), while a wrong kernel's errors are of the outputs' own size.
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
  double atol_used = 0;      // the largest atol an output was held to
  std::string problem;       // the first mismatch, naming the output and element
};

OutputCheck check_outputs(std::span<const Tensor> got, std::span<const Tensor> want, double rtol,
                          double atol, double atol_of_peak = 0);
// Expected tensors from files, matched by name when the names agree, else by position.
OutputCheck check_outputs(std::span<const Tensor> got,
                          const std::vector<std::filesystem::path>& want_files, double rtol,
                          double atol, double atol_of_peak = 0);

}  // namespace footprint::runtime
