#pragma once
// A std::pmr::memory_resource that counts what passes through it and can refuse requests past a
// byte limit. Used to prove how much a component allocates (and that it stays within a budget,
// as a microcontroller heap would force it to).
//
//   footprint::CountingResource budget(/*limit_bytes=*/8192);
//   auto model = footprint::onnx::load(source, {.memory = &budget});
//   budget.peak_bytes();  // the most that was held at once
#include <cstddef>
#include <cstdint>
#include <memory_resource>

namespace footprint {

class CountingResource final : public std::pmr::memory_resource {
 public:
  static constexpr uint64_t kNoLimit = UINT64_MAX;

  explicit CountingResource(uint64_t limit_bytes = kNoLimit,
                            std::pmr::memory_resource* upstream = std::pmr::new_delete_resource())
      : limit_(limit_bytes), upstream_(upstream) {}

  uint64_t current_bytes() const { return current_; }
  uint64_t peak_bytes() const { return peak_; }
  uint64_t total_bytes() const { return total_; }
  uint64_t allocations() const { return allocations_; }
  uint64_t largest_request() const { return largest_; }
  uint64_t refused() const { return refused_; }
  uint64_t limit_bytes() const { return limit_; }

 private:
  void* do_allocate(size_t bytes, size_t alignment) override;
  void do_deallocate(void* p, size_t bytes, size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  uint64_t limit_;
  std::pmr::memory_resource* upstream_;
  uint64_t current_ = 0;
  uint64_t peak_ = 0;
  uint64_t total_ = 0;
  uint64_t allocations_ = 0;
  uint64_t largest_ = 0;
  uint64_t refused_ = 0;
};

}  // namespace footprint
