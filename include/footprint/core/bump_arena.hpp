#pragma once
// A bump allocator for data that lives exactly as long as one owner (a parsed model, an exported
// proto tree). Chunks come from an upstream memory resource and are returned together when the
// arena dies, so everything placed in it must be trivially destructible.
//
// The chunk size is the caller's estimate of what it will need; a request that does not fit the
// current chunk gets a chunk of max(request, chunk size), so waste is bounded by one chunk tail
// per chunk.
#include <cstddef>
#include <cstring>
#include <memory_resource>
#include <span>
#include <string_view>
#include <type_traits>

namespace footprint {

class BumpArena {
 public:
  explicit BumpArena(std::pmr::memory_resource* upstream = std::pmr::get_default_resource(),
                     size_t chunk_bytes = 4096)
      : upstream_(upstream), chunk_bytes_(chunk_bytes < 256 ? 256 : chunk_bytes) {}
  BumpArena(const BumpArena&) = delete;
  BumpArena& operator=(const BumpArena&) = delete;
  BumpArena(BumpArena&& other) noexcept;
  BumpArena& operator=(BumpArena&& other) noexcept;
  ~BumpArena() { release(); }

  void* allocate(size_t bytes, size_t alignment);

  // Uninitialised storage for `n` values of T (value-initialised).
  template <class T>
  std::span<T> make_array(size_t n) {
    static_assert(std::is_trivially_destructible_v<T>);
    if (n == 0) return {};
    // NOLINTBEGIN(bugprone-sizeof-expression): T may itself be a pointer type (block tables).
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    T* p = static_cast<T*>(allocate(n * sizeof(T), alignof(T)));
    // NOLINTEND(bugprone-sizeof-expression)
    for (size_t i = 0; i < n; ++i) new (p + i) T();
    return {p, n};
  }

  template <class T, class... Args>
  T* make(Args&&... args) {
    static_assert(std::is_trivially_destructible_v<T>);
    return new (allocate(sizeof(T), alignof(T))) T(std::forward<Args>(args)...);
  }

  // A copy of `s` that lives as long as the arena.
  std::string_view copy(std::string_view s);

  // Bytes obtained from upstream so far (chunk sizes, not requests).
  size_t reserved_bytes() const { return reserved_; }
  std::pmr::memory_resource* upstream() const { return upstream_; }
  size_t chunk_bytes() const { return chunk_bytes_; }

 private:
  struct Chunk {
    Chunk* next;
    size_t size;  // of the whole chunk, header included
  };
  void release();

  std::pmr::memory_resource* upstream_;
  size_t chunk_bytes_;
  Chunk* head_ = nullptr;
  std::byte* cursor_ = nullptr;
  std::byte* end_ = nullptr;
  size_t reserved_ = 0;
};

}  // namespace footprint
