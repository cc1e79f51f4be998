#pragma once
// An Einsum equation resolved against its operands' ranks, once, for shape inference and the
// kernel alike: each operand axis and each output axis named by a letter index. The axes an
// ellipsis stands for are letters of their own, aligned from the right across the operands as
// numpy broadcasts them; a letter repeated within one operand is its diagonal; letters absent
// from the output are summed over.
//
//   const EinsumEquation e = EinsumEquation::resolve("bij,bjk->bik", {3, 3}, fail);
//   // e.letters == 4 (b, i, j, k); e.operands[1] == {0, 2, 3}; e.output == {0, 1, 3}
//
// Implicit output ("ij,jk"): the ellipsis's axes, then the letters used exactly once, in
// alphabetical (ASCII) order.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace footprint::graph::ops {

struct EinsumEquation {
  size_t letters = 0;                         // distinct letters, the ellipsis's axes included
  std::vector<std::vector<size_t>> operands;  // per operand, per axis: its letter
  std::vector<size_t> output;                 // per output axis: its letter

  // `fail` throws (it names the node); it is called with what is wrong with the equation.
  static EinsumEquation resolve(std::string_view equation, const std::vector<size_t>& ranks,
                                const std::function<void(const std::string&)>& fail);
};

}  // namespace footprint::graph::ops
