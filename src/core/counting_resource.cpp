#include "footprint/core/counting_resource.hpp"

#include <algorithm>
#include <new>

namespace footprint {

void* CountingResource::do_allocate(size_t bytes, size_t alignment) {
  if (bytes > limit_ || current_ > limit_ - bytes) {
    ++refused_;
    throw std::bad_alloc();
  }
  void* p = upstream_->allocate(bytes, alignment);
  current_ += bytes;
  total_ += bytes;
  ++allocations_;
  peak_ = std::max(peak_, current_);
  largest_ = std::max<uint64_t>(largest_, bytes);
  return p;
}

void CountingResource::do_deallocate(void* p, size_t bytes, size_t alignment) {
  upstream_->deallocate(p, bytes, alignment);
  current_ -= bytes;
}

}  // namespace footprint
