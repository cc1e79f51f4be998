#!/usr/bin/env bash
# What oneDNN's sgemm allocates itself on a call, outside any scratchpad (docs/RUNTIME.md, "What a
# run allocates"): a probe interposes posix_memalign, calls dnnl_sgemm once to warm up, then counts
# the blocks and bytes a second call takes, for row-major products m x n x k (transB as given), on
# one thread, with the ISA oneDNN picks here and capped at AVX2.
#
#   bench/sgemm_blocks.sh            # the default shapes
#   bench/sgemm_blocks.sh 784 512 128 N  1 1000 1024 N
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/probe.cpp" <<'CPP'
#include <dnnl.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

static long blocks = 0, bytes = 0;
extern "C" void* __libc_memalign(size_t, size_t);
extern "C" int posix_memalign(void** p, size_t alignment, size_t size) {
  ++blocks;
  bytes += static_cast<long>(size);
  *p = __libc_memalign(alignment, size);
  return *p != nullptr ? 0 : 12;
}

int main(int argc, char** argv) {
  for (int a = 1; a + 3 < argc; a += 4) {
    const long m = atol(argv[a]), n = atol(argv[a + 1]), k = atol(argv[a + 2]);
    const char tb = argv[a + 3][0];
    std::vector<float> A(m * k, 1), B(k * n, 1), C(m * n, 0);
    auto call = [&] {
      dnnl_sgemm('N', tb, m, n, k, 1.f, A.data(), k, B.data(), tb == 'N' ? n : k, 0.f, C.data(),
                 n);
    };
    call();
    blocks = bytes = 0;
    call();
    printf("| %ld x %ld x %ld (transB %c) | %ld | %ld |\n", m, n, k, tb, blocks, bytes);
  }
}
CPP
c++ -O2 -std=c++17 "$work/probe.cpp" -o "$work/probe" -ldnnl
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(8 8 8 N  64 64 64 N  196 384 384 N  784 512 128 N \
                                  1 1000 1024 N  1000 1 1024 N  2000 2000 128 N)
for isa in "" AVX2; do
  echo
  echo "ISA: ${isa:-as oneDNN picks it here} ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
  echo
  echo "| m x n x k | blocks | bytes |"
  echo "| --- | ---: | ---: |"
  OMP_NUM_THREADS=1 ONEDNN_MAX_CPU_ISA=${isa:-ALL} "$work/probe" "${shapes[@]}"
done
