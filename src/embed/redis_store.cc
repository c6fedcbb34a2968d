#include <errno.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/un.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <thread>

#include "kvpolicy/core/error.h"
#include "kvpolicy/embed/stores.h"

namespace kvpolicy::embed {
namespace {

static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559,
              "rows are stored as IEEE 754 binary32");

// A failure of the server or the connection rather than of the data: a reconnect may cure it.
class StoreFailure : public Error {
 public:
  using Error::Error;
};

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

std::string describe(EmbKey k) {
  return "key " + std::to_string(k) + " (table " + std::to_string(table_of(k)) + ", index " +
         std::to_string(index_of(k)) + ")";
}

const char* type_name(int type) {
  switch (type) {
    case REDIS_REPLY_STRING:
      return "string";
    case REDIS_REPLY_ARRAY:
      return "array";
    case REDIS_REPLY_INTEGER:
      return "integer";
    case REDIS_REPLY_NIL:
      return "nil";
    case REDIS_REPLY_STATUS:
      return "status";
    case REDIS_REPLY_ERROR:
      return "error";
    default:
      return "unknown";
  }
}

// What a reply that is not the expected `type` says, for an error message.
std::string unexpected(const redisReply& r) {
  if (r.type == REDIS_REPLY_ERROR) return "an error reply: " + std::string(r.str, r.len);
  return std::string("a reply of type ") + type_name(r.type);
}

timeval timeval_of(double seconds) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(std::floor(seconds));
  tv.tv_usec = static_cast<suseconds_t>((seconds - std::floor(seconds)) * 1e6);
  // A zero timeval means "no timeout" to the socket options; keep a tiny timeout a timeout.
  if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;
  return tv;
}

std::chrono::milliseconds backoff(uint32_t attempt) {  // attempt >= 1
  return std::chrono::milliseconds(attempt > 6 ? 2000 : std::min(2000, 50 << (attempt - 1)));
}

// Rows are little-endian on the wire whatever the host, so that stores are portable.
void decode_row(const char* bytes, float* out, uint32_t dim) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out, bytes, size_t{dim} * sizeof(float));
  } else {
    for (uint32_t i = 0; i < dim; ++i) {
      const auto* b = reinterpret_cast<const unsigned char*>(bytes) + 4 * size_t{i};
      uint32_t u =
          uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
      std::memcpy(out + i, &u, sizeof u);
    }
  }
}

// Writing to a socket whose server has died raises SIGPIPE, which by default kills the process.
// A library should not change the process's handlers, so this blocks SIGPIPE in the calling
// thread during the store's I/O and discards one that the I/O raised (and only that one).
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    was_pending_ = pending();
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeGuard() {
    if (!was_pending_ && pending()) {
      timespec zero{};
      while (sigtimedwait(&pipe_, nullptr, &zero) == -1 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  static bool pending() {
    sigset_t set;
    sigemptyset(&set);
    return sigpending(&set) == 0 && sigismember(&set, SIGPIPE) == 1;
  }
  sigset_t pipe_;
  sigset_t old_;
  bool was_pending_;
};

}  // namespace

void RedisStore::ContextDeleter::operator()(redisContext* c) const { redisFree(c); }

RedisStore::RedisStore(RedisOptions options, uint32_t dim)
    : options_(std::move(options)), dim_(dim) {
  if (dim_ == 0) throw ConfigError("redis store: dim must be positive");
  // Each MSET carries a key and a value per row, and hiredis counts arguments in an int.
  if (options_.batch == 0 || options_.batch > (INT_MAX - 1) / 2)
    throw ConfigError("redis store: batch must be in [1, " + std::to_string((INT_MAX - 1) / 2) +
                      "], not " + std::to_string(options_.batch));
  if (!(options_.timeout_s > 0 && options_.timeout_s <= 1e6))  // also rejects NaN
    throw ConfigError("redis store: timeout_s must be in (0, 1e6] seconds, not " +
                      std::to_string(options_.timeout_s));
  if (options_.unix_socket.empty()) {
    if (options_.host.empty()) throw ConfigError("redis store: no host and no unix socket");
    if (options_.port < 1 || options_.port > 65535)
      throw ConfigError("redis store: port " + std::to_string(options_.port) +
                        " is not in [1, 65535]");
  } else if (options_.unix_socket.size() >= sizeof(sockaddr_un{}.sun_path)) {
    // hiredis would silently truncate it and connect elsewhere.
    throw ConfigError("redis store: unix socket path " + options_.unix_socket + " is longer than " +
                      std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes");
  }
  run(Op::kConnect, {}, {}, {});
}

RedisStore::~RedisStore() = default;

std::string RedisStore::address() const {
  if (!options_.unix_socket.empty()) return "unix:" + options_.unix_socket;
  return options_.host + ":" + std::to_string(options_.port);
}

std::string RedisStore::name() const { return "redis " + address(); }

void RedisStore::connect() {
  context_.reset();
  const timeval tv = timeval_of(options_.timeout_s);
  redisContext* c = options_.unix_socket.empty()
                        ? redisConnectWithTimeout(options_.host.c_str(), options_.port, tv)
                        : redisConnectUnixWithTimeout(options_.unix_socket.c_str(), tv);
  if (!c) throw StoreFailure("cannot connect: out of memory");
  std::unique_ptr<redisContext, ContextDeleter> owned(c);
  if (c->err) throw StoreFailure(std::string("cannot connect: ") + c->errstr);
  // Without it a server that stops answering would hang a fetch for ever.
  if (redisSetTimeout(c, tv) != REDIS_OK)
    throw StoreFailure(std::string("cannot set the timeout: ") + c->errstr);
  if (!options_.password.empty()) {
    Reply reply(static_cast<redisReply*>(
        options_.username.empty()
            ? redisCommand(c, "AUTH %b", options_.password.data(), options_.password.size())
            : redisCommand(c, "AUTH %b %b", options_.username.data(), options_.username.size(),
                           options_.password.data(), options_.password.size())));
    if (!reply) throw StoreFailure(std::string("AUTH: connection failed: ") + c->errstr);
    // A refused password is the configuration's fault: no reconnect cures it. Redis's reply
    // names no password.
    if (reply->type == REDIS_REPLY_ERROR)
      throw ConfigError("redis store at " + address() +
                        ": AUTH refused: " + std::string(reply->str, reply->len));
  }
  context_ = std::move(owned);
}

void RedisStore::fetch(std::span<const EmbKey> keys, std::span<float> out) {
  if (out.size() != keys.size() * size_t{dim_})
    throw Error("redis store: " + std::to_string(keys.size()) + " keys of dim " +
                std::to_string(dim_) + " need " + std::to_string(keys.size() * size_t{dim_}) +
                " floats, the output has " + std::to_string(out.size()));
  if (!keys.empty()) run(Op::kFetch, keys, out, {});
}

void RedisStore::store(std::span<const EmbKey> keys, std::span<const float> rows) {
  if (rows.size() != keys.size() * size_t{dim_})
    throw Error("redis store: " + std::to_string(keys.size()) + " keys of dim " +
                std::to_string(dim_) + " need " + std::to_string(keys.size() * size_t{dim_}) +
                " floats, " + std::to_string(rows.size()) + " given");
  if (keys.empty()) return;
  if constexpr (std::endian::native != std::endian::little) {
    encoded_.resize(rows.size() * sizeof(float));
    for (size_t i = 0; i < rows.size(); ++i) {
      uint32_t u;
      std::memcpy(&u, &rows[i], sizeof u);
      for (int b = 0; b < 4; ++b) encoded_[4 * i + b] = static_cast<char>(u >> (8 * b));
    }
  }
  run(Op::kStore, keys, {}, rows);
}

void RedisStore::name_keys(std::span<const EmbKey> keys) {
  names_.clear();
  name_end_.clear();
  names_.reserve(keys.size() * (options_.prefix.size() + 20));
  for (EmbKey k : keys) {
    char digits[24];
    auto end = std::to_chars(digits, digits + sizeof digits, k).ptr;
    names_ += options_.prefix;
    names_.append(digits, end);
    name_end_.push_back(names_.size());
  }
}

void RedisStore::run(Op op, std::span<const EmbKey> keys, std::span<float> out,
                     std::span<const float> rows) {
  if (op != Op::kConnect) name_keys(keys);
  SigpipeGuard guard;
  std::string reason;
  for (uint32_t attempt = 0;; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(backoff(attempt));
    try {
      if (!context_) connect();
      if (op != Op::kConnect) pipeline(op, keys, out, rows);
      return;
    } catch (const StoreFailure& e) {
      // The connection may hold unread replies or be dead: the next attempt starts afresh.
      context_.reset();
      reason = e.what();
      if (attempt >= options_.retries) break;
    }
  }
  std::string what = "redis store at " + address() + ": ";
  if (op != Op::kConnect)
    what += std::string(op == Op::kFetch ? "fetch" : "store") + " of " +
            std::to_string(keys.size()) + " keys failed: ";
  what += reason;
  if (options_.retries > 0)
    what += " (still failing after " + std::to_string(options_.retries) +
            " reconnect attempts with backoff)";
  throw Error(what);
}

void RedisStore::pipeline(Op op, std::span<const EmbKey> keys, std::span<float> out,
                          std::span<const float> rows) {
  redisContext* c = context_.get();
  const size_t n = keys.size();
  const size_t batch = options_.batch;
  const size_t row_bytes = size_t{dim_} * sizeof(float);
  const char* command = op == Op::kFetch ? "MGET" : "MSET";
  const char* values = std::endian::native == std::endian::little
                           ? reinterpret_cast<const char*>(rows.data())
                           : encoded_.data();

  // Every chunk goes into hiredis's output buffer first; the first redisGetReply writes them
  // all, so the whole call pays one round trip.
  size_t chunks = 0;
  for (size_t begin = 0; begin < n; begin += batch, ++chunks) {
    const size_t end = std::min(n, begin + batch);
    argv_.assign(1, command);
    argv_len_.assign(1, 4);
    for (size_t i = begin; i < end; ++i) {
      const size_t start = i ? name_end_[i - 1] : 0;
      argv_.push_back(names_.data() + start);
      argv_len_.push_back(name_end_[i] - start);
      if (op == Op::kStore) {
        argv_.push_back(values + i * row_bytes);
        argv_len_.push_back(row_bytes);
      }
    }
    if (redisAppendCommandArgv(c, static_cast<int>(argv_.size()), argv_.data(), argv_len_.data()) !=
        REDIS_OK)
      throw StoreFailure(std::string("cannot queue ") + command + ": " + c->errstr);
  }
  ++round_trips_;
  commands_ += chunks;

  // Reads every reply even after an error, so that a connection that is still sound stays in
  // step with its replies; reports the first error.
  std::optional<Error> data_error;
  std::optional<StoreFailure> failure;
  auto fail = [&](std::string what) {
    if (!data_error && !failure) failure.emplace(std::move(what));
  };
  for (size_t chunk = 0; chunk < chunks; ++chunk) {
    const size_t begin = chunk * batch;
    const size_t end = std::min(n, begin + batch);
    auto which = [&] {
      return std::string(command) + " of keys [" + std::to_string(begin) + ", " +
             std::to_string(end) + ")";
    };
    void* raw = nullptr;
    if (redisGetReply(c, &raw) != REDIS_OK) {
      fail(which() + ": connection failed: " + c->errstr);
      context_.reset();  // dead or out of step
      break;
    }
    Reply reply(static_cast<redisReply*>(raw));
    if (op == Op::kStore) {
      if (reply->type != REDIS_REPLY_STATUS) fail(which() + " got " + unexpected(*reply));
      continue;
    }
    if (reply->type != REDIS_REPLY_ARRAY) {
      fail(which() + " got " + unexpected(*reply));
      continue;
    }
    if (reply->elements != end - begin) {
      fail(which() + " got " + std::to_string(reply->elements) + " rows for " +
           std::to_string(end - begin) + " keys");
      continue;
    }
    for (size_t j = 0; j < reply->elements; ++j) {
      const redisReply& e = *reply->element[j];
      const size_t i = begin + j;
      if (e.type == REDIS_REPLY_STRING && e.len == row_bytes) {
        decode_row(e.str, out.data() + i * dim_, dim_);
        continue;
      }
      if (data_error || failure) continue;
      const size_t name_begin = i ? name_end_[i - 1] : 0;
      std::string what = "redis store at " + address() + ": the row of " + describe(keys[i]) +
                         " at " + names_.substr(name_begin, name_end_[i] - name_begin);
      if (e.type == REDIS_REPLY_NIL)
        what += " is missing";
      else if (e.type != REDIS_REPLY_STRING)
        what += " is " + unexpected(e) + ", not a string";
      else
        what += " has " + std::to_string(e.len) + " bytes, not " + std::to_string(row_bytes) +
                " (" + std::to_string(dim_) + " floats)";
      data_error.emplace(what);
    }
  }
  if (data_error) throw *data_error;
  if (failure) throw *failure;
}

void load_synthetic(RedisStore& store, std::span<const EmbKey> keys) {
  // Chunks bound the memory of rows in flight; each is still one pipelined round trip.
  constexpr size_t kChunk = 1 << 16;
  const uint32_t dim = store.dim();
  std::vector<float> rows;
  for (size_t begin = 0; begin < keys.size(); begin += kChunk) {
    auto part = keys.subspan(begin, std::min(kChunk, keys.size() - begin));
    rows.resize(part.size() * dim);
    for (size_t i = 0; i < part.size(); ++i)
      synthetic_row(part[i], std::span<float>(rows).subspan(i * dim, dim));
    store.store(part, rows);
  }
}

}  // namespace kvpolicy::embed
