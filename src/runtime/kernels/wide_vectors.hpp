#pragma once
// Wider vectors where the CPU has them: with_wide_vectors(body) runs `body` compiled for AVX2 or
// AVX-512 when the CPU supports them.
//
//   with_wide_vectors([&] { for (size_t i = 0; i < n; ++i) y[i] = a * x[i] + y[i]; });
#include <cstdint>

// The build targets the SSE2 baseline (no -march), so a loop the compiler vectorises moves 16
// bytes at a time. On x86, with_wide_vectors(body) compiles `body` twice more, for AVX2 and for
// AVX-512, and runs the copy the CPU supports: `flatten` inlines the body's whole call tree into
// each copy, where the same plain loops vectorise at that width. Only for the float loops that
// dominate profiles (each use compiles three times). The AVX2 copy is compiled with FMA (and
// runs where the CPU has both), and so is the AVX-512 copy (every AVX-512 CPU has FMA; GCC does
// not imply it from avx512f for 256-bit vectors, and then vectorises no loop calling std::fma),
// so a * b + c may be contracted there and round differently from the baseline copy in the last
// bit, as oneDNN's per-ISA kernels already do.
//
// Sanitizer builds compile the baseline copy only: it runs the same loops, and three copies of
// every hot loop would triple their compile time.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FOOTPRINT_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(FOOTPRINT_SANITIZED)
#define FOOTPRINT_SANITIZED 1
#endif
#if (defined(__x86_64__) || defined(__i386__)) && !defined(FOOTPRINT_SANITIZED)
#define FOOTPRINT_WIDE_VECTORS 1
#endif

namespace footprint::runtime::kernels {

namespace wide {

#if defined(FOOTPRINT_WIDE_VECTORS)
enum class Isa : uint8_t { baseline, avx2, avx512 };

inline Isa detect_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return Isa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::avx2;
  return Isa::baseline;
}

inline Isa host_isa() {
  static const Isa isa = detect_isa();
  return isa;
}

template <class F>
__attribute__((target("avx512f,fma"), flatten)) void on_avx512(const F& body) {
  body();
}

template <class F>
__attribute__((target("avx2,fma"), flatten)) void on_avx2(const F& body) {
  body();
}
#endif

}  // namespace wide

template <class F>
void with_wide_vectors(const F& body) {
#if defined(FOOTPRINT_WIDE_VECTORS)
  switch (wide::host_isa()) {
    case wide::Isa::avx512:
      return wide::on_avx512(body);
    case wide::Isa::avx2:
      return wide::on_avx2(body);
    case wide::Isa::baseline:
      break;
  }
#endif
  body();
}

}  // namespace footprint::runtime::kernels
