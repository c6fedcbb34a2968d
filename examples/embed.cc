// kvpolicy inside an engine: a prefix cache run by a policy chosen by name, driven the way a
// serving engine drives its own (docs/api.md). Built against the installed library by
// examples/CMakeLists.txt; `make test` does so (ctest InstalledLibrary).
#include <kvpolicy/cache/kv_cache.h>
#include <kvpolicy/core/error.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  const char* policy = argc > 1 ? argv[1] : "s3fifo";
  try {
    // 64 blocks of 16 tokens, evicted by S3-FIFO (any online policy: "lru", "wa", "rlt", ...).
    kvpolicy::KvCache cache(kvpolicy::parse_policy_spec(policy), 64, 16);

    // A system prompt of 64 tokens that every request shares, then a question of its own.
    std::vector<uint32_t> system(64);
    for (uint32_t i = 0; i < system.size(); ++i) system[i] = 1000 + i;
    uint64_t hit_tokens = 0, prompt_tokens = 0;
    for (uint32_t request = 0; request < 200; ++request) {
      std::vector<uint32_t> prompt = system;
      for (uint32_t i = 0; i < 48; ++i) prompt.push_back(request % 40 * 100 + i);
      std::vector<kvpolicy::BlockKey> keys = cache.block_keys(prompt);

      // Scheduling: how much is cached, and hold it while the request runs.
      size_t cached = cache.lookup(keys, {.time = request * 100'000});
      cache.pin(std::span(keys).first(cached));
      // ... the engine prefills the uncached blocks, then caches the whole prompt ...
      cache.insert(keys, {.time = request * 100'000 + 50'000});
      cache.unpin(std::span(keys).first(cached));
      hit_tokens += cached * cache.block_tokens();
      prompt_tokens += prompt.size();
    }
    // Memory pressure elsewhere: give 8 blocks back.
    std::vector<kvpolicy::BlockKey> freed = cache.evict(8);

    kvpolicy::PolicyTreeStats s = cache.stats();
    std::printf(
        "policy %s: %llu of %llu prompt tokens cached (%.1f%%), %llu evictions, "
        "%zu blocks cached of %zu, %zu freed on demand\n",
        cache.policy_label().c_str(), (unsigned long long)hit_tokens,
        (unsigned long long)prompt_tokens, 100.0 * hit_tokens / prompt_tokens,
        (unsigned long long)s.evictions, s.size, s.capacity, freed.size());
    return 0;
  } catch (const kvpolicy::Error& e) {
    std::fprintf(stderr, "embed: %s\n", e.what());
    return 1;
  }
}
