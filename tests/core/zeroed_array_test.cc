// ZeroedArray (include/kvpolicy/core/order/zeroed_array.h): zeroed, writable, moved by swap.
#include "kvpolicy/core/order/zeroed_array.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "kvpolicy/core/huge_pages.h"

namespace kvpolicy {
namespace {

TEST(ZeroedArray, StartsZeroedAndKeepsWrites) {
  // Small and huge-page sized (the latter takes map_pages' madvise path).
  for (size_t n : {size_t{1}, size_t{1000}, 3 * kHugePageBytes / sizeof(uint64_t)}) {
    ZeroedArray<uint64_t> a(n);
    ASSERT_EQ(a.size(), n);
    for (size_t i = 0; i < n; i += 511) ASSERT_EQ(a[i], 0u) << i;
    ASSERT_EQ(a[n - 1], 0u);
    for (size_t i = 0; i < n; i += 7) a[i] = i + 1;
    const ZeroedArray<uint64_t>& c = a;
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], i % 7 == 0 ? i + 1 : 0) << i;
  }
}

TEST(ZeroedArray, MovesTransferTheMemory) {
  ZeroedArray<uint32_t> empty;
  EXPECT_EQ(empty.size(), 0u);

  ZeroedArray<uint32_t> a(100);
  a[99] = 7;
  ZeroedArray<uint32_t> b(std::move(a));
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): a moved-from array is empty
  ASSERT_EQ(b.size(), 100u);
  EXPECT_EQ(b[99], 7u);

  ZeroedArray<uint32_t> c(10);
  c[0] = 1;
  c = std::move(b);  // c's old pages go to b, released with it
  ASSERT_EQ(c.size(), 100u);
  EXPECT_EQ(c[99], 7u);
  EXPECT_EQ(b.size(), 10u);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b[0], 1u);
}

}  // namespace
}  // namespace kvpolicy
