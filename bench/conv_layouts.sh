#!/usr/bin/env bash
# oneDNN's convolution kernels on the three layouts a footprint step can give them (docs/RUNTIME.md,
# "Convolution layouts"): plain NCHW (the gemm-based kernel; the ReLU6 after it is a pass of its
# own, not timed here), channels-last NHWC (what NhwcConv runs; ReLU6 as a post-op) and nChw16c
# (nChw8c capped at AVX2: the blocked layout, ReLU6 as a post-op; the reorders in and out that a plain graph adds are not
# timed). One thread, the median of 50 executes after 3, with the ISA oneDNN picks here and capped
# at AVX2. Layers of MobileNetV2, SqueezeNet and RegNetY-400MF.
#
#   bench/conv_layouts.sh
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/probe.cpp" <<'CPP'
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <dnnl.hpp>
#include <unordered_map>
#include <vector>

using dnnl::memory;
using tag = memory::format_tag;

struct Layer {
  long ic, oc, h, k, s, g;
};

double median_ms(dnnl::stream& st, const dnnl::primitive& p,
                 const std::unordered_map<int, memory>& args) {
  for (int i = 0; i < 3; ++i) p.execute(st, args);
  std::vector<double> t;
  for (int i = 0; i < 50; ++i) {
    const auto a = std::chrono::steady_clock::now();
    p.execute(st, args);
    st.wait();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a)
                    .count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  // The blocked layout of the ISA: 16 channels a block with AVX-512, 8 with AVX2.
  const tag blocked = argc > 1 && argv[1][0] == '8' ? tag::nChw8c : tag::nChw16c;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream st(eng);
  const Layer layers[] = {{16, 96, 112, 1, 1, 1},  {24, 144, 56, 1, 1, 1}, {320, 1280, 7, 1, 1, 1},
                          {96, 96, 112, 3, 2, 96}, {144, 144, 56, 3, 1, 144},
                          {3, 32, 224, 3, 2, 1},   {16, 64, 55, 3, 1, 1},  {512, 1000, 13, 1, 1, 1},
                          {64, 64, 56, 3, 1, 8}};
  std::printf("| layer (in -> out, HxW, kxk, stride, group) | NCHW ms | NHWC ms | %s ms |\n",
              blocked == tag::nChw8c ? "nChw8c" : "nChw16c");
  std::printf("| --- | --- | --- | --- |\n");
  for (const Layer& l : layers) {
    const long pad = l.k / 2, oh = (l.h + 2 * pad - l.k) / l.s + 1;
    const memory::dims src{1, l.ic, l.h, l.h}, dst{1, l.oc, oh, oh};
    const memory::dims wd = l.g > 1 ? memory::dims{l.g, l.oc / l.g, l.ic / l.g, l.k, l.k}
                                    : memory::dims{l.oc, l.ic, l.k, l.k};
    std::printf("| %ld -> %ld, %ldx%ld, %ldx%ld, %ld, %ld |", l.ic, l.oc, l.h, l.h, l.k, l.k, l.s,
                l.g);
    for (const tag t : {tag::nchw, tag::nhwc, blocked}) {
      const memory::desc sd(src, memory::data_type::f32, t), dd(dst, memory::data_type::f32, t);
      const memory::desc wany(wd, memory::data_type::f32, tag::any);
      const memory::desc bd({l.oc}, memory::data_type::f32, tag::a);
      dnnl::primitive_attr attr;
      if (t != tag::nchw) {
        dnnl::post_ops po;
        po.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, 0.f, 6.f);
        attr.set_post_ops(po);
      }
      const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                              dnnl::algorithm::convolution_direct, sd, wany, bd, dd,
                                              {l.s, l.s}, {pad, pad}, {pad, pad});
      const dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
      memory sm(sd, eng), dm(dd, eng), wm(pd.weights_desc(), eng), bm(bd, eng);
      std::fill_n(static_cast<float*>(sm.get_data_handle()), sd.get_size() / 4, 0.5f);
      const double ms = median_ms(st, dnnl::convolution_forward(pd),
                                  {{DNNL_ARG_SRC, sm}, {DNNL_ARG_WEIGHTS, wm},
                                   {DNNL_ARG_BIAS, bm}, {DNNL_ARG_DST, dm}});
      std::printf(" %.3f (%s) |", ms, pd.impl_info_str());
    }
    std::printf("\n");
  }
}
CPP
c++ -O2 -std=c++17 "$work/probe.cpp" -o "$work/probe" -ldnnl
for isa in "" AVX2; do
  echo
  echo "ISA: ${isa:-as oneDNN picks it here} ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
  echo
  OMP_NUM_THREADS=1 ONEDNN_MAX_CPU_ISA=${isa:-ALL} "$work/probe" "$([ -n "$isa" ] && echo 8 || echo 16)"
done
