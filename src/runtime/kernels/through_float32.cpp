#include "through_float32.hpp"

#include <array>
#include <string>

#include "dtype_dispatch.hpp"
#include "footprint/graph/node_runner.hpp"

namespace footprint::runtime::kernels {

void round_carried_outputs(graph::KernelContext& ctx) {
  const graph::Node& n = ctx.node();
  for (size_t i = 0; i < ctx.output_count() && i < 32; ++i) {
    graph::TensorRef* t = ((n.rounded_outputs >> i) & 1U) != 0 ? ctx.output_or_null(i) : nullptr;
    if (t == nullptr || t->data == nullptr) continue;
    if (t->dtype != DType::float32) ctx.fail("a carried output is not float32");
    float* v = t->as<float>();
    parallel_for(
        ctx.threads(), t->numel(),
        [&](size_t begin, size_t end) {
          if (n.rounds_to == DType::float16) {
            round_through<Float16>(v + begin, end - begin);
          } else {
            round_through<BFloat16>(v + begin, end - begin);
          }
        },
        16384);
  }
}

}  // namespace footprint::runtime::kernels

namespace footprint::runtime::kernels::through_float32_detail {

void widen_into(int threads, const graph::TensorRef& from, float* to) {
  parallel_for(threads, from.numel(), [&](size_t begin, size_t end) {
    if (from.dtype == DType::float16) {
      widen_row(from.as<const Float16>() + begin, to + begin, end - begin);
    } else {
      widen_row(from.as<const BFloat16>() + begin, to + begin, end - begin);
    }
  });
}

void narrow_into(int threads, const float* from, const graph::TensorRef& to) {
  parallel_for(threads, to.numel(), [&](size_t begin, size_t end) {
    if (to.dtype == DType::float16) {
      narrow_row(from + begin, to.as<Float16>() + begin, end - begin);
    } else {
      narrow_row(from + begin, to.as<BFloat16>() + begin, end - begin);
    }
  });
}

uint64_t State::owned_bytes() const {
  uint64_t bytes = inner != nullptr ? inner->owned_bytes() : 0;
  for (const std::vector<float>& c : constants) bytes += c.size() * sizeof(float);
  return bytes;
}

void Float32View::run_subgraph(std::string_view attribute, std::span<const graph::TensorRef> in,
                               std::span<graph::TensorRef> out) {
  if (mutable_outer_ == nullptr) fail("its subgraphs are not run while preparing");
  mutable_outer_->run_subgraph(attribute, in, out);
}

void Float32View::set_output_extents(size_t i, std::span<const int64_t> extents) {
  if (mutable_outer_ == nullptr) fail("reports extents while preparing");
  mutable_outer_->set_output_extents(i, extents);
  refs_.out[i].dims = mutable_outer_->output(i).dims;
}

bool has_16bit(const graph::KernelContext& ctx) {
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const graph::TensorRef* t = ctx.input_or_null(i);
    if (t != nullptr && is_16bit(t->dtype)) return true;
  }
  // A const context's outputs: read through the same virtual, which does not change them.
  auto& outputs =
      const_cast<graph::KernelContext&>(ctx);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  for (size_t i = 0; i < ctx.output_count(); ++i) {
    const graph::TensorRef* t = outputs.output_or_null(i);
    if (t != nullptr && is_16bit(t->dtype)) return true;
  }
  return false;
}

namespace {

// The node's tensors as they are (then replaced one by one by their float32 copies).
Refs refs_of(const graph::KernelContext& ctx) {
  auto& outputs =
      const_cast<graph::KernelContext&>(ctx);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  if (ctx.input_count() > Refs::kMax || ctx.output_count() > Refs::kMax) {
    ctx.fail("has more tensors than its float32 path takes");
  }
  Refs r;
  r.inputs = ctx.input_count();
  r.outputs = ctx.output_count();
  for (size_t i = 0; i < r.inputs; ++i) {
    const graph::TensorRef* t = ctx.input_or_null(i);
    r.in[i] = t != nullptr ? *t : graph::TensorRef{};
    r.in_present[i] = t != nullptr ? 1 : 0;
  }
  for (size_t i = 0; i < r.outputs; ++i) {
    const graph::TensorRef* t = outputs.output_or_null(i);
    r.out[i] = t != nullptr ? *t : graph::TensorRef{};
    r.out_present[i] = t != nullptr ? 1 : 0;
  }
  return r;
}

}  // namespace

std::unique_ptr<graph::KernelState> prepare(const graph::KernelContext& ctx, graph::PrepareFn inner,
                                            uint32_t constant_inputs) {
  auto st = std::make_unique<State>();
  Refs r = refs_of(ctx);
  st->constants.resize(r.inputs);
  for (size_t i = 0; i < r.inputs; ++i) {
    graph::TensorRef& t = r.in[i];
    if (r.in_present[i] == 0 || !is_16bit(t.dtype)) continue;
    if (t.data == nullptr) {
      if (required_constant(constant_inputs, i)) {
        ctx.fail("input " + std::to_string(i) + " is " + dtype_label(t.dtype) +
                 " computed while running; this kernel takes 16-bit floats there only as " +
                 "constants, converted to float32 once when preparing");
      }
    } else {
      st->constants[i].resize(t.numel());
      widen_into(ctx.threads(), t, st->constants[i].data());
      t.data = st->constants[i].data();
    }
    t.dtype = DType::float32;
  }
  for (size_t i = 0; i < r.outputs; ++i) {
    graph::TensorRef& t = r.out[i];
    if (is_16bit(t.dtype)) {
      t.dtype = DType::float32;
      t.data = nullptr;
    }
  }
  if (inner != nullptr) {
    const Float32View view(ctx, nullptr, r, {}, nullptr);
    st->inner = inner(view);
  }
  // A float32 kernel that packed what it reads of an input its row names in packed_inputs reads
  // only its packed copy (graph::replaced_by_packing): the float32 copy goes, as the 16-bit
  // original does.
  const uint64_t packed_by_inner = st->inner != nullptr ? st->inner->owned_bytes() : 0;
  for (size_t i = 0; i < st->constants.size(); ++i) {
    if (!graph::replaced_by_packing(ctx.node().schema, i, packed_by_inner,
                                    !st->constants[i].empty())) {
      continue;
    }
    std::vector<float>().swap(st->constants[i]);
    st->packed_away |= 1U << i;
  }
  return st;
}

void run(graph::KernelContext& ctx, graph::KernelFn inner) {
  auto* st = dynamic_cast<State*>(ctx.state());
  if (st == nullptr) ctx.fail("the kernel's state was not prepared");
  Refs r = refs_of(ctx);
  std::span<std::byte> scratch = ctx.workspace();
  size_t used = 0;
  const auto take = [&](std::span<const int64_t> dims) {
    const uint64_t bytes = round_up_64(float32_bytes(dims));
    if (used + bytes > scratch.size()) ctx.fail("its float32 copies exceed the planned scratch");
    float* at = reinterpret_cast<float*>(scratch.data() + used);  // NOLINT
    used += static_cast<size_t>(bytes);
    return at;
  };
  for (size_t i = 0; i < r.inputs; ++i) {
    graph::TensorRef& t = r.in[i];
    if (r.in_present[i] == 0 || !is_16bit(t.dtype)) continue;
    if (((st->packed_away >> i) & 1U) != 0) {
      t.data = nullptr;  // the float32 kernel reads its packed copy (and the original is gone)
    } else if (i < st->constants.size() && !st->constants[i].empty()) {
      t.data = st->constants[i].data();
    } else if (t.numel() > 0) {
      float* copy = take(t.dims);
      widen_into(ctx.threads(), t, copy);
      t.data = copy;
    }
    t.dtype = DType::float32;
  }
  std::array<char, Refs::kMax> narrowed{};
  for (size_t i = 0; i < r.outputs; ++i) {
    graph::TensorRef& t = r.out[i];
    if (r.out_present[i] == 0 || !is_16bit(t.dtype)) continue;
    t.data = t.numel() > 0 ? take(t.dims) : nullptr;
    t.dtype = DType::float32;
    narrowed[i] = 1;
  }
  Float32View view(ctx, &ctx, r, scratch.subspan(used), st->inner.get());
  inner(view);
  for (size_t i = 0; i < r.outputs; ++i) {
    const graph::TensorRef& f = view.float32_output(i);
    if (narrowed[i] != 0 && f.data != nullptr) {
      narrow_into(ctx.threads(), f.as<const float>(), ctx.output(i));
    }
  }
}

uint64_t workspace(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                   const std::vector<graph::ConcreteTensor>& out, graph::WorkspaceFn inner,
                   uint32_t constant_inputs) {
  if (!has_16bit(in, out)) return inner != nullptr ? inner(node, in, out) : 0;
  uint64_t bytes = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (is_16bit(in[i].dtype) && !required_constant(constant_inputs, i)) {
      bytes += round_up_64(float32_bytes(in[i].dims));
    }
  }
  for (const graph::ConcreteTensor& t : out) {
    if (is_16bit(t.dtype)) bytes += round_up_64(float32_bytes(t.dims));
  }
  return bytes + (inner != nullptr ? inner(node, as_float32(in), as_float32(out)) : 0);
}

uint64_t packed(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                const std::vector<graph::ConcreteTensor>& out, const std::vector<bool>& constant,
                graph::PackedFn inner) {
  if (!has_16bit(in, out)) return inner != nullptr ? inner(node, in, out, constant) : 0;
  const uint64_t packed_by_inner =
      inner != nullptr ? inner(node, as_float32(in), as_float32(out), constant) : 0;
  uint64_t bytes = packed_by_inner;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool is_constant = i < constant.size() && constant[i];
    if (is_16bit(in[i].dtype) && is_constant &&
        !graph::replaced_by_packing(node.schema, i, packed_by_inner, is_constant)) {
      bytes += float32_bytes(in[i].dims);
    }
  }
  return bytes;
}

}  // namespace footprint::runtime::kernels::through_float32_detail
