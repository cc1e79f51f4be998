#pragma once
// What the oneDNN-backed kernels share: attribute reading from a bare Node (a WorkspaceFn sees no
// KernelContext), plain memory descriptors, and a prepared primitive that runs without
// allocating.
//
// The memory contract (DESIGN.md "Prediction = measurement") shapes this file: every primitive
// uses a user scratchpad, whose size the op's WorkspaceFn reports from the same descriptor the
// PrepareFn builds; tensors stay in their plain layouts, so weights are used in place; and the
// memory objects are made once when preparing and only re-pointed at each step's buffers.
//
//   auto pd = conv_pd(node, extents);                    // same function in both hooks
//   uint64_t ws = pd.scratchpad_desc().get_size();       // WorkspaceFn
//   auto st = std::make_unique<DnnlState>(pd, {{DNNL_ARG_SRC, pd.src_desc()}, ...});  // prepare
//   st->bind(DNNL_ARG_SRC, x.data); ...; st->execute(ctx.workspace());                  // run
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/graph/kernel.hpp"
#include "footprint/graph/node_attributes.hpp"

namespace footprint::runtime::kernels {

// ---- attributes of a Node (the same defaults KernelContext's readers apply)

inline int64_t node_int(const graph::Node& n, std::string_view name, int64_t fallback) {
  return graph::attr_int(n, name, fallback);
}

inline float node_float(const graph::Node& n, std::string_view name, float fallback) {
  return graph::attr_float(n, name, fallback);
}

inline std::string_view node_string(const graph::Node& n, std::string_view name,
                                    std::string_view fallback) {
  return graph::attr_string(n, name, fallback);
}

inline std::optional<std::vector<int64_t>> node_ints(const graph::Node& n, std::string_view name) {
  return graph::attr_ints(n, name);
}

// Throws naming the node, as KernelContext::fail does (a WorkspaceFn has no node id).
[[noreturn]] inline void node_fail(const graph::Node& n, const std::string& what) {
  throw Error("node '" + n.name + "' (" + n.op_type + "): " + what);
}

// ---- the extents a primitive is built from

// The node's input and output extents (and dtypes), from a KernelContext while preparing or from
// the concrete tensors a WorkspaceFn gets, so both hooks build the same descriptor.
struct Extents {
  std::vector<std::vector<int64_t>> in, out;
  std::vector<DType> in_dtype, out_dtype;  // undefined: omitted

  bool has_in(size_t i) const { return i < in.size() && in_dtype[i] != DType::undefined; }
  bool has_out(size_t i) const { return i < out.size() && out_dtype[i] != DType::undefined; }
};

// oneDNN's descriptors take int64 dims, but its CPU kernels hold extents and many offsets in
// 32-bit ints (jit and brgemm configurations): a larger extent is truncated inside it, up to a
// division by zero (SIGFPE) while sizing the scratchpad. So no descriptor is ever built for an
// extent or a tensor of more than 2^31 - 1 elements; the node fails naming the tensor instead.
inline constexpr int64_t kMaxDnnlElements = INT32_MAX;

inline void check_dnnl_extents(const graph::Node& n, const Extents& e) {
  auto check = [&](const std::vector<int64_t>& dims, const char* role, size_t i) {
    int64_t numel = 1;
    for (int64_t d : dims) {
      if (d > kMaxDnnlElements || (d > 0 && numel > kMaxDnnlElements / d)) {
        node_fail(n, std::string(role) + " " + std::to_string(i) + " " +
                         Shape::of(dims).to_string() + " has more than " +
                         std::to_string(kMaxDnnlElements) +
                         " elements, the most oneDNN's kernels take");
      }
      numel *= std::max<int64_t>(d, 1);
    }
  };
  for (size_t i = 0; i < e.in.size(); ++i)
    if (e.has_in(i)) check(e.in[i], "input", i);
  for (size_t i = 0; i < e.out.size(); ++i)
    if (e.has_out(i)) check(e.out[i], "output", i);
}

inline Extents extents_of(const std::vector<graph::ConcreteTensor>& inputs,
                          const std::vector<graph::ConcreteTensor>& outputs) {
  Extents e;
  for (const auto& t : inputs) {
    e.in.push_back(t.dims);
    e.in_dtype.push_back(t.dtype);
  }
  for (const auto& t : outputs) {
    e.out.push_back(t.dims);
    e.out_dtype.push_back(t.dtype);
  }
  return e;
}

// PrepareFn gets a const context, while output_or_null is non-const; the executor's context
// object itself is mutable, and preparing only reads the outputs' extents.
inline Extents extents_of(const graph::KernelContext& ctx) {
  auto& mut =
      const_cast<graph::KernelContext&>(ctx);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  Extents e;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const graph::TensorRef* t = ctx.input_or_null(i);
    e.in.emplace_back(t ? std::vector<int64_t>(t->dims.begin(), t->dims.end())
                        : std::vector<int64_t>{});
    e.in_dtype.push_back(t ? t->dtype : DType::undefined);
  }
  for (size_t i = 0; i < ctx.output_count(); ++i) {
    const graph::TensorRef* t = mut.output_or_null(i);
    e.out.emplace_back(t ? std::vector<int64_t>(t->dims.begin(), t->dims.end())
                         : std::vector<int64_t>{});
    e.out_dtype.push_back(t ? t->dtype : DType::undefined);
  }
  check_dnnl_extents(ctx.node(), e);
  return e;
}

// Analysis may ask for the workspace of a step whose extents are not bound (they read as 0):
// no primitive can be built then, and the answer is 0.
inline bool all_positive(const Extents& e) {
  for (size_t i = 0; i < e.in.size(); ++i) {
    if (!e.has_in(i)) continue;
    for (int64_t d : e.in[i]) {
      if (d <= 0) return false;
    }
  }
  for (size_t i = 0; i < e.out.size(); ++i) {
    if (!e.has_out(i)) continue;
    for (int64_t d : e.out[i]) {
      if (d <= 0) return false;
    }
  }
  return true;
}

// ---- descriptors

inline dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

inline dnnl::memory::dims row_major(const dnnl::memory::dims& dims) {
  dnnl::memory::dims s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// A dense row-major float tensor: the layout ONNX tensors have in memory.
inline dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims) {
  return {dims, dnnl::memory::data_type::f32, row_major(dims)};
}

// A float tensor of NCHW extents `nchw` stored channels-last, [N, H, W, C] (the layout
// graph::to_channels_last gives the tensors between NhwcConv and friends).
inline dnnl::memory::desc channels_last_desc(const dnnl::memory::dims& nchw) {
  return {nchw, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nhwc};
}

// The extents of a channels-last row (NhwcConv, ...) as its NCHW op sees them: input 0 and
// output 0 [N, H, W, C] become [N, C, H, W].
inline Extents channels_first(Extents e) {
  for (auto* dims : {&e.in[0], &e.out[0]}) {
    if (dims->size() == 4) std::rotate(dims->begin() + 1, dims->end() - 1, dims->end());
  }
  return e;
}

inline dnnl::memory::desc strided_desc(const dnnl::memory::dims& dims,
                                       const dnnl::memory::dims& strides) {
  return {dims, dnnl::memory::data_type::f32, strides};
}

// Whether oneDNN 2.6's sgemm runs its AVX-512 kernels here. The ISA is the one analysis and run
// both see: the host's.
inline bool sgemm_on_avx512() {
  static const bool avx512 = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto core = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (isa & core) == core;  // the ISAs are nested bit masks
  }();
  return avx512;
}

// Whether oneDNN 2.6's sgemm copies its operands (sgemm_copies), and whether it runs an f32
// gemm of m x n x k without a buffer that grows with it (sgemm_allocates_nothing): it copies
// (packs) its operands into a buffer it takes with posix_memalign, outside any scratchpad,
// unless 1/m + 1/n reaches its "copy overhead is significant" threshold (0.00196 where it runs
// its AVX-512 kernels, 0.0038 otherwise); and its no-copy kernels take a panel buffer of their
// own once k exceeds what they keep on the stack (2048). Both hold for any block of the gemm
// too, whose m, n and k can only be smaller. What every no-copy call takes besides, a fixed
// block a thread (16,640 bytes with AVX2; 73,984 with AVX-512, none for a gemv: 2.6.3 as
// bench/sgemm_blocks.sh counts it), is freed before the call returns: the
// runtime's allowance, far less than the reorders a blocked convolution would plan instead.
// (1x1 convolutions whose gemm would copy or take a panel, and matrix products that would copy,
// run as oneDNN's own convolutions instead: conv_pool.cpp, matmul.cpp.)
inline bool sgemm_copies(int64_t m, int64_t n) {
  const double no_copy_threshold = sgemm_on_avx512() ? 0.00196 : 0.0038;
  return 1.0 / static_cast<double>(m) + 1.0 / static_cast<double>(n) < no_copy_threshold;
}

inline bool sgemm_allocates_nothing(int64_t m, int64_t n, int64_t k) {
  constexpr int64_t kStackK = 2048;
  return !sgemm_copies(m, n) && k <= kStackK;
}

// Every primitive takes its scratch from the step's workspace, never from oneDNN's allocator.
inline dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// ---- a prepared primitive

class DnnlState : public graph::KernelState {
 public:
  // `args`: the primitive's arguments and their descriptors. Their memory objects are made here,
  // without buffers, so a run only points them at the step's tensors.
  DnnlState(const dnnl::primitive_desc_base& pd, dnnl::primitive prim,
            const std::vector<std::pair<int, dnnl::memory::desc>>& args)
      : stream_(cpu_engine()),
        primitive_(std::move(prim)),
        scratchpad_bytes_(pd.scratchpad_desc().get_size()) {
    for (const auto& [arg, desc] : args) add(arg, desc);
    if (scratchpad_bytes_ > 0) add(DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc());
  }

  size_t scratchpad_bytes() const { return scratchpad_bytes_; }

  // The primitive applies the node's epilogues as post-ops (epilogue.hpp's with_epilogues);
  // else the kernel applies them after it.
  bool applies_epilogues = false;

  void bind(int arg, const void* data) {
    for (size_t i = 0; i < memories_.size(); ++i) {
      if (c_args_[i].arg == arg) memories_[i].set_data_handle(const_cast<void*>(data));
    }
  }

  // Runs on the bound buffers with the step's workspace as the scratchpad. The C entry point
  // takes the argument array as is, where the C++ one would copy it into a fresh vector on
  // every call.
  void execute(graph::KernelContext& ctx) {
    if (scratchpad_bytes_ > 0) {
      const std::span<std::byte> workspace = ctx.workspace();
      if (workspace.size() < scratchpad_bytes_) {
        ctx.fail("the step's workspace (" + std::to_string(workspace.size()) +
                 " bytes) is smaller than oneDNN's scratchpad (" +
                 std::to_string(scratchpad_bytes_) + " bytes)");
      }
      bind(DNNL_ARG_SCRATCHPAD, workspace.data());
    }
    dnnl::error::wrap_c_api(
        dnnl_primitive_execute(primitive_.get(), stream_.get(), static_cast<int>(c_args_.size()),
                               c_args_.data()),
        "could not execute a primitive");
    stream_.wait();
  }

 private:
  void add(int arg, const dnnl::memory::desc& desc) {
    memories_.emplace_back(desc, cpu_engine(), nullptr);  // no buffer until bind()
    c_args_.push_back({arg, memories_.back().get()});
  }

  dnnl::stream stream_;
  dnnl::primitive primitive_;
  size_t scratchpad_bytes_ = 0;
  std::vector<dnnl::memory> memories_;
  std::vector<dnnl_exec_arg_t> c_args_;
};

// The workspace `size(node, extents)` gives, for a WorkspaceFn: 0 where no primitive can be built
// (unbound extents, an unsupported case), since that node fails clearly when the model is
// prepared rather than when it is analysed.
template <class Size>
uint64_t workspace_of(Size&& size, const graph::Node& n,
                      const std::vector<graph::ConcreteTensor>& inputs,
                      const std::vector<graph::ConcreteTensor>& outputs) {
  const Extents e = extents_of(inputs, outputs);
  if (!all_positive(e)) return 0;
  check_dnnl_extents(n, e);
  try {
    return size(n, e);
  } catch (const Error&) {
    return 0;
  } catch (const dnnl::error&) {
    return 0;
  }
}

// The scratch bytes of the descriptor `build(node, extents)` gives (see workspace_of).
template <class Build>
uint64_t scratchpad_of(Build&& build, const graph::Node& n,
                       const std::vector<graph::ConcreteTensor>& inputs,
                       const std::vector<graph::ConcreteTensor>& outputs) {
  return workspace_of(
      [&](const graph::Node& node, const Extents& e) -> uint64_t {
        return build(node, e).scratchpad_desc().get_size();
      },
      n, inputs, outputs);
}

// The state the PrepareFn built, or nullptr when there is nothing to compute: preparing builds
// no primitive for a step whose tensors are empty.
template <class S = DnnlState>
S* prepared_state(graph::KernelContext& ctx) {
  if (auto* s = dynamic_cast<S*>(ctx.state())) return s;
  for (size_t i = 0; i < ctx.output_count(); ++i) {
    const graph::TensorRef* t = ctx.output_or_null(i);
    if (t != nullptr && t->numel() > 0) ctx.fail("the kernel's state was not prepared");
  }
  return nullptr;
}

// Builds a primitive descriptor with `make`, turning oneDNN's refusal into a message naming the
// node and `what` was asked for.
template <class Make>
auto make_pd(const graph::Node& n, std::string_view what, Make&& make) {
  try {
    return make();
  } catch (const dnnl::error& e) {
    node_fail(n, "oneDNN cannot run this " + std::string(what) + ": " + e.what());
  }
}

}  // namespace footprint::runtime::kernels
