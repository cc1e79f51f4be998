#pragma once
// Where a Dropout node's ratio and training switch are for its opset, and what a switch's value
// means: shape inference (whether the outputs are constants), the kernel (whether it can run as
// a copy) and the executor's aliasing all ask this, rather than each knowing that input 2 is
// training_mode from opset 12.
//
//   const auto mode = graph::ops::DropoutMode::decode(opset);
//   if (mode.training_input >= 0 && has_input(mode.training_input)) {
//     training = graph::ops::DropoutMode::training(value_of(mode.training_input));
//   }
#include <cstdint>
#include <optional>

namespace footprint::graph::ops {

struct DropoutMode {
  // Inputs holding the ratio and the training switch; -1 before opset 12, where the ratio is an
  // attribute and Dropout never trains in inference graphs.
  int ratio_input = -1;
  int training_input = -1;

  static DropoutMode decode(int64_t opset) {
    if (opset < 12) return {};
    return {1, 2};
  }

  // Whether a training switch of this value drops (nullopt: not known until running, which
  // counts as training: the outputs may then differ run to run).
  static bool training(std::optional<int64_t> switch_value) {
    return !switch_value.has_value() || *switch_value != 0;
  }
  // Whether a training Dropout with this ratio changes anything: a ratio of 0 keeps every
  // element.
  static bool drops(bool training, double ratio) { return training && ratio != 0; }
};

}  // namespace footprint::graph::ops
