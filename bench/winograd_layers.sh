#!/usr/bin/env bash
# oneDNN's Winograd F(2x2, 3x3) convolution against its direct one on channels-last tensors, the
# two reorders Winograd needs (its kernel reads and writes only nChw16c) included, for 3x3
# stride-1 layers of 32 to 256 channels at 14x14 to 112x112 (docs/RUNTIME.md, "Winograd": where
# winograd_conv_pd in src/runtime/kernels/conv_pool.cpp takes it). Per layer: the median of 15
# executes after 3 with OMP_NUM_THREADS threads, the kernel oneDNN picks for Winograd (its 4x3
# one, which footprint refuses, at 256 channels and up), and the packed weights' extra bytes.
#
#   bench/winograd_layers.sh                  # one thread
#   OMP_NUM_THREADS=2 bench/winograd_layers.sh
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/probe.cpp" <<'CPP'
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <dnnl.hpp>
#include <string>
#include <vector>

using dnnl::memory;

template <class F>
double median_ms(F&& f) {
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < 15; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void fill(const memory& m, float v) {
  float* p = static_cast<float*>(m.get_data_handle());
  std::fill(p, p + m.get_desc().get_size() / sizeof(float), v);
}

int main() {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const auto f32 = memory::data_type::f32;
  std::printf("| channels in/out, output | direct ms | Winograd + copies ms | ratio | kernel | extra packed weights |\n");
  std::printf("| --- | ---: | ---: | ---: | --- | ---: |\n");
  for (long c : {32, 64, 128, 256}) {
    for (long h : {14, 28, 56, 112}) {
      if (c * c * h * h > 128L * 128 * 112 * 112) continue;
      const memory::desc nhwc({1, c, h, h}, f32, memory::format_tag::nhwc);
      const memory::desc any({1, c, h, h}, f32, memory::format_tag::any);
      const memory::desc wany({c, c, 3, 3}, f32, memory::format_tag::any);
      const dnnl::convolution_forward::primitive_desc direct(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                          dnnl::algorithm::convolution_direct, nhwc, wany, nhwc,
                                          {1, 1}, {1, 1}, {1, 1}),
          eng);
      memory x(nhwc, eng), y(nhwc, eng), w(direct.weights_desc(), eng);
      fill(x, 0.5f);
      fill(w, 0.01f);
      dnnl::convolution_forward dp(direct);
      const double td = median_ms([&] {
        dp.execute(s, {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, y}});
        s.wait();
      });
      try {
        const dnnl::convolution_forward::primitive_desc wino(
            dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                            dnnl::algorithm::convolution_winograd, any, wany, any,
                                            {1, 1}, {1, 1}, {1, 1}),
            eng);
        memory xb(wino.src_desc(), eng), yb(wino.dst_desc(), eng), ww(wino.weights_desc(), eng);
        fill(ww, 0.01f);
        dnnl::convolution_forward wp(wino);
        dnnl::reorder in(x, xb), out(yb, y);
        const double tw = median_ms([&] {
          in.execute(s, x, xb);
          wp.execute(s, {{DNNL_ARG_SRC, xb}, {DNNL_ARG_WEIGHTS, ww}, {DNNL_ARG_DST, yb}});
          out.execute(s, yb, y);
          s.wait();
        });
        const double extra = double(wino.weights_desc().get_size()) - double(c * c * 9 * 4);
        std::printf("| %ld/%ld, %ldx%ld | %.3f | %.3f | %.2f | %s | %.0f KiB |\n", c, c, h, h, td,
                    tw, tw / td, wino.impl_info_str(), extra / 1024);
      } catch (const dnnl::error&) {
        std::printf("| %ld/%ld, %ldx%ld | %.3f | - | - | no Winograd kernel here | - |\n", c, c, h,
                    h, td);
      }
    }
  }
}
CPP
g++ -O2 -std=c++17 "$work/probe.cpp" -o "$work/probe" -ldnnl
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} "$work/probe"
