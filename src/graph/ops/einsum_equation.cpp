#include "footprint/graph/ops/einsum_equation.hpp"

#include <algorithm>
#include <array>
#include <map>

namespace footprint::graph::ops {
namespace {

// One term of the equation: its letters, and where "..." stands among them (npos: nowhere).
struct Term {
  std::string letters;
  size_t ellipsis = std::string::npos;
};

Term parse_term(std::string_view text, const std::function<void(const std::string&)>& fail) {
  Term t;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i, 3) == "...") {
      if (t.ellipsis != std::string::npos) fail("a term has two ellipses");
      t.ellipsis = t.letters.size();
      i += 2;
    } else if ((text[i] >= 'a' && text[i] <= 'z') || (text[i] >= 'A' && text[i] <= 'Z')) {
      t.letters.push_back(text[i]);
    } else if (text[i] != ' ') {
      fail(std::string("'") + text[i] + "' is not a letter of the equation");
    }
  }
  return t;
}

}  // namespace

EinsumEquation EinsumEquation::resolve(std::string_view equation, const std::vector<size_t>& ranks,
                                       const std::function<void(const std::string&)>& fail) {
  const size_t arrow = equation.find("->");
  const std::string_view lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(lhs.substr(start, comma - start), fail));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ranks.size()) {
    fail("the equation has " + std::to_string(terms.size()) + " terms for " +
         std::to_string(ranks.size()) + " inputs");
  }
  // The ellipsis's axes first: the widest operand's count, every operand's right-aligned.
  size_t spread = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    if (ranks[i] < t.letters.size() ||
        (t.ellipsis == std::string::npos && ranks[i] != t.letters.size())) {
      fail("term " + std::to_string(i) + " has " + std::to_string(t.letters.size()) +
           " letters for " + std::to_string(ranks[i]) + " axes");
    }
    if (t.ellipsis != std::string::npos) spread = std::max(spread, ranks[i] - t.letters.size());
  }
  EinsumEquation e;
  e.letters = spread;
  std::map<char, size_t> id;
  std::map<char, int> uses;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    const size_t own = t.ellipsis == std::string::npos ? 0 : ranks[i] - t.letters.size();
    std::vector<size_t>& axes = e.operands.emplace_back();
    for (size_t k = 0; k <= t.letters.size(); ++k) {
      if (k == t.ellipsis) {
        for (size_t a = spread - own; a < spread; ++a) axes.push_back(a);
      }
      if (k == t.letters.size()) break;
      const char c = t.letters[k];
      ++uses[c];
      auto [it, fresh] = id.emplace(c, e.letters);
      if (fresh) ++e.letters;
      axes.push_back(it->second);
    }
  }
  Term out;
  if (arrow != std::string_view::npos) {
    out = parse_term(equation.substr(arrow + 2), fail);
  } else {
    out.ellipsis = 0;
    for (const auto& [c, n] : uses) {
      if (n == 1) out.letters.push_back(c);
    }
  }
  std::array<bool, 128> seen{};
  for (size_t k = 0; k <= out.letters.size(); ++k) {
    if (k == out.ellipsis) {
      for (size_t a = 0; a < spread; ++a) e.output.push_back(a);
    }
    if (k == out.letters.size()) break;
    const char c = out.letters[k];
    const auto it = id.find(c);
    if (it == id.end()) fail("output letter '" + std::string(1, c) + "' is not an input's");
    if (seen[static_cast<unsigned char>(c)]) {
      fail("output letter '" + std::string(1, c) + "' appears twice");
    }
    seen[static_cast<unsigned char>(c)] = true;
    e.output.push_back(it->second);
  }
  return e;
}

}  // namespace footprint::graph::ops
