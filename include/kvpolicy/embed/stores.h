// Backing stores of the embedding cache: where its misses fetch rows from. MemoryStore is the
// host-memory table; RedisStore is the LCR paper's DRAM tier behind Redis, fetched with
// pipelined MGET so that a batch of misses costs one round trip rather than one per key.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kvpolicy/embed/embedding.h"

// hiredis's connection; declared here so that this header does not include hiredis.
struct redisContext;

namespace kvpolicy::embed {

// The synthetic row of each given key, in one contiguous array. Duplicate keys hold one row.
class MemoryStore final : public EmbeddingStore {
 public:
  MemoryStore(std::span<const EmbKey> keys, uint32_t dim);

  uint32_t dim() const override { return dim_; }
  // Throws Error naming the key (and its table and index) for a key the store does not hold.
  void fetch(std::span<const EmbKey> keys, std::span<float> out) override;
  std::string name() const override { return "memory"; }
  size_t rows() const { return row_of_.size(); }

 private:
  uint32_t dim_;
  std::vector<float> table_;                   // row r at [r * dim, (r + 1) * dim)
  std::unordered_map<EmbKey, size_t> row_of_;  // key -> row
};

struct RedisOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string unix_socket;  // used instead of host and port if not empty
  double timeout_s = 5;     // connect, and each read or write on the connection
  uint32_t batch = 512;     // keys per MGET or MSET
  // Reconnect attempts after a failed connection, error reply or short reply, with exponential
  // backoff (50 ms, 100 ms, ... capped at 2 s). Missing rows and rows of the wrong length are
  // the data's fault, so they are never retried.
  uint32_t retries = 0;
  std::string prefix = "emb:";  // the Redis key of a row is prefix + decimal EmbKey
  // Sent with AUTH on every connection when not empty (a server with requirepass or ACL users);
  // never part of a message or name().
  std::string username;
  std::string password;
};

// A Redis address as HOST:PORT or a URL redis://[[USER]:PASSWORD@]HOST[:PORT][/0] (port 6379 by
// default; %XX escapes in the user and password, as URLs write '@' or ':'); ConfigError naming
// `flag` otherwise. Databases other than 0 are refused (the store does not SELECT).
RedisOptions parse_redis_address(const std::string& address, const std::string& flag);

// Rows in Redis, each a binary string of dim little-endian floats. One connection, so one
// thread at a time; SIGPIPE from a dead server is blocked and discarded during its I/O rather
// than killing the process.
class RedisStore final : public EmbeddingStore {
 public:
  // Connects (with the retries); throws Error naming the address and hiredis's reason when it
  // cannot, and ConfigError for a zero dim or batch, a timeout outside (0, 1e6] s, a bad port or
  // a unix socket path too long for sockaddr_un.
  RedisStore(RedisOptions options, uint32_t dim);
  ~RedisStore() override;
  RedisStore(const RedisStore&) = delete;
  RedisStore& operator=(const RedisStore&) = delete;

  uint32_t dim() const override { return dim_; }
  // One pipelined round trip of MGETs of up to `batch` keys. Throws Error naming the key when a
  // row is missing or has the wrong length, and Error when the server fails (after the retries).
  void fetch(std::span<const EmbKey> keys, std::span<float> out) override;
  std::string name() const override;  // "redis unix:/path" or "redis host:port"
  // Writes the row of keys[i] from rows[i * dim, (i + 1) * dim): one pipelined round trip of
  // MSETs of up to `batch` keys.
  void store(std::span<const EmbKey> keys, std::span<const float> rows);

  // Pipelined round trips (one per fetch or store that had keys, one more per retry that got a
  // connection), and the MGET and MSET commands they carried, for reports.
  uint64_t round_trips() const { return round_trips_; }
  uint64_t commands() const { return commands_; }
  const RedisOptions& options() const { return options_; }

 private:
  struct ContextDeleter {
    void operator()(redisContext* c) const;
  };
  enum class Op { kConnect, kFetch, kStore };

  std::string address() const;
  void connect();
  // Runs op, reconnecting and retrying after a StoreFailure as the options say.
  void run(Op op, std::span<const EmbKey> keys, std::span<float> out, std::span<const float> rows);
  void pipeline(Op op, std::span<const EmbKey> keys, std::span<float> out,
                std::span<const float> rows);
  void name_keys(std::span<const EmbKey> keys);

  RedisOptions options_;
  uint32_t dim_;
  std::unique_ptr<redisContext, ContextDeleter> context_;  // null after a failed connection
  uint64_t round_trips_ = 0;
  uint64_t commands_ = 0;
  // Scratch reused across calls: the Redis key names, back to back, and where each ends.
  std::string names_;
  std::vector<size_t> name_end_;
  std::vector<const char*> argv_;
  std::vector<size_t> argv_len_;
  std::vector<char> encoded_;  // rows in little-endian order, on a big-endian host only
};

// Writes the synthetic row of every key to the store.
void load_synthetic(RedisStore& store, std::span<const EmbKey> keys);

}  // namespace kvpolicy::embed
