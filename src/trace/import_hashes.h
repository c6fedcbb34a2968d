// Engines' block hashes written as strings (vLLM's and SGLang's SHA-256 hex digests, LMCache's
// chunk hashes) as 64-bit block keys, with collisions detected. Internal to src/trace (import).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kvpolicy {

class HashStringKeys {
 public:
  // The key of one hash written as a string (docs/formats.md, "Block hashes as strings"):
  //   at least 17 hex digits (a digest)      its first 16 hex digits, big-endian (SGLang's
  //                                          hash_str_to_int64, as an unsigned value)
  //   "0x" and up to 16 hex digits           that number
  //   a decimal integer (sign allowed)       that number, negatives as their two's complement
  //   up to 16 hex digits, some a-f          that number
  //   anything else                          64-bit FNV-1a of its bytes
  // Returns an error message (empty on success): a string that is none of these cannot fail,
  // but two different strings giving one key can, and do (a collision is never merged).
  std::string key(std::string_view s, uint64_t& out);

 private:
  std::unordered_map<uint64_t, std::string> seen_;
};

}  // namespace kvpolicy
