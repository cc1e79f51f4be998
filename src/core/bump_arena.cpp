#include "footprint/core/bump_arena.hpp"

#include <cstdint>
#include <new>
#include <utility>

namespace footprint {

BumpArena::BumpArena(BumpArena&& other) noexcept
    : upstream_(other.upstream_),
      chunk_bytes_(other.chunk_bytes_),
      head_(std::exchange(other.head_, nullptr)),
      cursor_(std::exchange(other.cursor_, nullptr)),
      end_(std::exchange(other.end_, nullptr)),
      reserved_(std::exchange(other.reserved_, 0)) {}

BumpArena& BumpArena::operator=(BumpArena&& other) noexcept {
  if (this != &other) {
    release();
    upstream_ = other.upstream_;
    chunk_bytes_ = other.chunk_bytes_;
    head_ = std::exchange(other.head_, nullptr);
    cursor_ = std::exchange(other.cursor_, nullptr);
    end_ = std::exchange(other.end_, nullptr);
    reserved_ = std::exchange(other.reserved_, 0);
  }
  return *this;
}

void* BumpArena::allocate(size_t bytes, size_t alignment) {
  // Pointer arithmetic rather than an integer round trip keeps the pointer's provenance.
  auto aligned = [alignment](std::byte* p) {
    const auto misalign = reinterpret_cast<uintptr_t>(p) & (uintptr_t{alignment} - 1);
    return misalign == 0 ? p : p + (alignment - misalign);
  };
  if (cursor_ != nullptr) {
    std::byte* p = aligned(cursor_);
    if (p <= end_ && static_cast<size_t>(end_ - p) >= bytes) {
      cursor_ = p + bytes;
      return p;
    }
  }
  constexpr size_t kHeader =
      (sizeof(Chunk) + alignof(std::max_align_t) - 1) & ~(alignof(std::max_align_t) - 1);
  const size_t slack = alignment > alignof(std::max_align_t) ? alignment : 0;
  if (bytes > SIZE_MAX - kHeader - slack) throw std::bad_alloc();
  const size_t need = kHeader + bytes + slack;
  const size_t size = need > chunk_bytes_ ? need : chunk_bytes_;
  auto* raw = static_cast<std::byte*>(upstream_->allocate(size, alignof(std::max_align_t)));
  auto* chunk = new (raw) Chunk{head_, size};
  head_ = chunk;
  reserved_ += size;
  std::byte* p = aligned(raw + kHeader);
  // A chunk made for one big request keeps the old chunk's tail as the bump region when that
  // tail is larger, so small requests that follow do not strand it.
  std::byte* new_end = raw + size;
  std::byte* new_cursor = p + bytes;
  if (need > chunk_bytes_ && cursor_ != nullptr && (end_ - cursor_) > (new_end - new_cursor)) {
    return p;
  }
  cursor_ = new_cursor;
  end_ = new_end;
  return p;
}

std::string_view BumpArena::copy(std::string_view s) {
  if (s.empty()) return {};
  auto* p = static_cast<char*>(allocate(s.size(), 1));
  std::memcpy(p, s.data(), s.size());
  return {p, s.size()};
}

void BumpArena::release() {
  while (head_ != nullptr) {
    Chunk* next = head_->next;
    upstream_->deallocate(head_, head_->size, alignof(std::max_align_t));
    head_ = next;
  }
  cursor_ = end_ = nullptr;
  reserved_ = 0;
}

}  // namespace footprint
