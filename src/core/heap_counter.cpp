// Replaces glibc's malloc family with counting wrappers around glibc's own implementation
// (__libc_malloc and friends). Sizes come from malloc_usable_size, so a block is counted with
// the bytes it really occupies to the caller, and frees need no side table.
#include "footprint/core/heap_counter.hpp"

#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

// glibc's own entry points, which the wrappers below forward to.
// NOLINTBEGIN(bugprone-reserved-identifier)
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
}
// NOLINTEND(bugprone-reserved-identifier)

namespace {

std::atomic<uint64_t> g_current{0};
std::atomic<uint64_t> g_peak{0};
std::atomic<uint64_t> g_allocations{0};
std::atomic<uint64_t> g_largest{0};

void raise_to(std::atomic<uint64_t>& target, uint64_t value) {
  uint64_t seen = target.load(std::memory_order_relaxed);
  while (value > seen && !target.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

void* counted(void* p) {
  if (p != nullptr) {
    const uint64_t size = malloc_usable_size(p);
    const uint64_t now = g_current.fetch_add(size, std::memory_order_relaxed) + size;
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    raise_to(g_peak, now);
    raise_to(g_largest, size);
  }
  return p;
}

void uncount(void* p) {
  if (p != nullptr) g_current.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
}

}  // namespace

extern "C" {

void* malloc(size_t size) {
  return counted(__libc_malloc(size));
}

void* calloc(size_t n, size_t size) {
  return counted(__libc_calloc(n, size));
}

void* realloc(void* p, size_t size) {
  if (p == nullptr) return malloc(size);
  const uint64_t old_size = malloc_usable_size(p);
  void* q = __libc_realloc(p, size);
  if (q == nullptr && size != 0) return nullptr;  // failed: p is untouched
  g_current.fetch_sub(old_size, std::memory_order_relaxed);
  return counted(q);
}

void free(void* p) {
  uncount(p);
  __libc_free(p);
}

void* memalign(size_t alignment, size_t size) {
  return counted(__libc_memalign(alignment, size));
}

void* aligned_alloc(size_t alignment, size_t size) {
  return memalign(alignment, size);
}

int posix_memalign(void** out, size_t alignment, size_t size) {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(size_t size) {
  return memalign(4096, size);
}

void* pvalloc(size_t size) {
  return memalign(4096, (size + 4095) & ~size_t{4095});
}

}  // extern "C"

namespace footprint::heap {

bool available() {
  return true;
}

Stats snapshot() {
  return Stats{g_current.load(), g_peak.load(), g_allocations.load(), g_largest.load()};
}

void reset_peak() {
  g_peak.store(g_current.load());
  g_largest.store(0);
}

}  // namespace footprint::heap
