// Ids, time and the block-key chaining shared by every layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace kvpolicy {

using Time = int64_t;  // microseconds since the trace's start
// Every reader keeps times below 2^62 us (146,000 years), so a policy adding an interval to one
// (a refit period, a window, a lifetime) cannot overflow.
inline constexpr Time kMaxTime = Time{1} << 62;
using NodeId = uint32_t;
using BlockKey = uint64_t;
using RequestIndex = uint32_t;
using SessionId = uint32_t;
using CategoryId = uint16_t;

// Where a cached block lives: GPU memory, or host memory behind it (the second tier).
enum class Tier : uint8_t { kHbm = 0, kDram = 1 };

inline constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();
inline constexpr SessionId kNoSession = std::numeric_limits<SessionId>::max();
inline constexpr RequestIndex kNoRequest = std::numeric_limits<RequestIndex>::max();
inline constexpr Time kNever = std::numeric_limits<Time>::max();
inline constexpr Time kMicrosPerSecond = 1'000'000;

// Key of a block and its whole prefix: key_i = chain_key(key_{i-1}, id_i), key_{-1} = kRootKey.
// Equal keys mean equal prefixes, whatever the trace's own ids looked like.
inline constexpr BlockKey kRootKey = 0x6b76706f6c696379ULL;  // "kvpolicy"

inline constexpr uint64_t mix64(uint64_t x) {
  // splitmix64's finalizer: a bijection with full avalanche.
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

inline constexpr BlockKey chain_key(BlockKey parent, uint64_t block_id) {
  return mix64(parent ^ mix64(block_id + 0x9e3779b97f4a7c15ULL));
}

}  // namespace kvpolicy
