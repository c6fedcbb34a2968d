#include <arpa/inet.h>
#include <errno.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kvpolicy/core/error.h"
#include "kvpolicy/embed/redis_server.h"
#include "kvpolicy/embed/stores.h"

namespace kvpolicy::embed {
namespace {

using kvpolicy::embed::kRedisServerPath;
using kvpolicy::embed::RedisServer;

// Keys over several tables with indices past 32 bits, so that a name or encoding that drops the
// table or truncates the index would show.
std::vector<EmbKey> spread_keys(size_t n) {
  std::vector<EmbKey> keys;
  for (size_t i = 0; i < n; ++i) keys.push_back(make_key(i % 5, i * 1'000'003 + (1ULL << 33)));
  return keys;
}

std::vector<float> synthetic_rows(std::span<const EmbKey> keys, uint32_t dim) {
  std::vector<float> rows(keys.size() * dim);
  for (size_t i = 0; i < keys.size(); ++i)
    synthetic_row(keys[i], std::span<float>(rows).subspan(i * dim, dim));
  return rows;
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

// Whether an error message says what it should; prints the message when it does not.
::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no kvpolicy::Error thrown";
  return "";
}

// A command on a connection of the test's own, bypassing RedisStore; returns the reply as text.
std::string raw_command(const std::string& socket, const std::vector<std::string>& args) {
  std::unique_ptr<redisContext, void (*)(redisContext*)> c(
      redisConnectUnixWithTimeout(socket.c_str(), timeval{2, 0}), redisFree);
  if (!c || c->err) throw Error("raw connection to " + socket + " failed");
  std::vector<const char*> argv;
  std::vector<size_t> len;
  for (auto& a : args) {
    argv.push_back(a.data());
    len.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(
      redisCommandArgv(c.get(), static_cast<int>(argv.size()), argv.data(), len.data()));
  if (!r) throw Error("raw command failed: " + std::string(c->errstr));
  std::string text = r->str ? std::string(r->str, r->len) : "";
  bool error = r->type == REDIS_REPLY_ERROR;
  freeReplyObject(r);
  if (error) throw Error("raw command: " + text);
  return text;
}

std::string fresh_directory() {
  std::string dir = (std::filesystem::temp_directory_path() / "kvpolicy-store-XXXXXX").string();
  if (!mkdtemp(dir.data())) throw Error("mkdtemp failed");
  return dir;
}

TEST(EmbeddingStoreMemory, FetchReturnsTheSyntheticRowOfEachKey) {
  auto keys = spread_keys(100);
  std::vector<EmbKey> held = keys;
  held.insert(held.end(), keys.begin(), keys.begin() + 10);  // duplicates hold one row
  MemoryStore store(held, 16);
  EXPECT_EQ(store.rows(), 100u);
  EXPECT_EQ(store.dim(), 16u);

  std::vector<EmbKey> wanted(keys.rbegin(), keys.rend());
  wanted.push_back(keys[7]);
  wanted.push_back(keys[7]);
  std::vector<float> out(wanted.size() * 16, std::nanf(""));
  store.fetch(wanted, out);
  auto expected = synthetic_rows(wanted, 16);
  EXPECT_TRUE(same_bits(out, expected));
  EXPECT_FALSE(same_bits(std::span<const float>(expected).first(16),
                         std::span<const float>(expected).subspan(16, 16)));
}

TEST(EmbeddingStoreMemory, UnknownKeyThrowsNamingKeyTableAndIndex) {
  auto keys = spread_keys(10);
  MemoryStore store(keys, 4);
  const EmbKey absent = make_key(3, 12345);
  std::vector<EmbKey> wanted = {keys[0], absent};
  std::vector<float> out(2 * 4);
  std::string what = error_of([&] { store.fetch(wanted, out); });
  EXPECT_TRUE(contains(what, std::to_string(absent)));
  EXPECT_TRUE(contains(what, "table 3"));
  EXPECT_TRUE(contains(what, "index 12345"));
}

TEST(EmbeddingStoreMemory, RejectsZeroDimAndAWrongOutputSize) {
  auto keys = spread_keys(3);
  EXPECT_THROW(MemoryStore(keys, 0), ConfigError);
  MemoryStore store(keys, 4);
  std::vector<float> out(3 * 4 - 1);
  EXPECT_TRUE(contains(error_of([&] { store.fetch(keys, out); }), "11"));
}

TEST(RedisStoreConnect, NothingAtTheSocketPathIsOneErrorNamingIt) {
  std::string dir = fresh_directory();
  RedisOptions options;
  options.unix_socket = dir + "/absent.sock";
  std::string what = error_of([&] { RedisStore store(options, 8); });
  EXPECT_TRUE(contains(what, "unix:" + options.unix_socket));
  EXPECT_TRUE(contains(what, std::strerror(ENOENT)));

  // A socket that is bound but not listening refuses.
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string path = dir + "/deaf.sock";
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  options.unix_socket = path;
  what = error_of([&] { RedisStore store(options, 8); });
  EXPECT_TRUE(contains(what, "unix:" + path));
  EXPECT_TRUE(contains(what, std::strerror(ECONNREFUSED)));
  close(fd);
  std::filesystem::remove_all(dir);
}

TEST(RedisStoreConnect, NothingListeningOnALoopbackPortIsOneErrorNamingIt) {
  // A bound port with no listen() refuses for sure, where a guessed free port might not.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  RedisOptions options;
  options.port = ntohs(addr.sin_port);
  std::string what = error_of([&] { RedisStore store(options, 8); });
  close(fd);
  EXPECT_TRUE(contains(what, "127.0.0.1:" + std::to_string(options.port)));
  EXPECT_TRUE(contains(what, "cannot connect"));
}

TEST(RedisStoreConnect, RejectsBadOptionsBeforeConnecting) {
  RedisOptions ok;
  ok.unix_socket = "/nonexistent/redis.sock";
  EXPECT_THROW(RedisStore(ok, 0), ConfigError);
  auto with = [&](auto change) {
    RedisOptions o = ok;
    change(o);
    return o;
  };
  EXPECT_THROW(RedisStore(with([](RedisOptions& o) { o.batch = 0; }), 8), ConfigError);
  EXPECT_THROW(RedisStore(with([](RedisOptions& o) { o.timeout_s = 0; }), 8), ConfigError);
  EXPECT_THROW(RedisStore(with([](RedisOptions& o) { o.timeout_s = std::nan(""); }), 8),
               ConfigError);
  EXPECT_THROW(RedisStore(with([](RedisOptions& o) { o.unix_socket = std::string(200, 'x'); }), 8),
               ConfigError);
  EXPECT_THROW(RedisStore(with([](RedisOptions& o) {
                            o.unix_socket.clear();
                            o.port = 0;
                          }),
                          8),
               ConfigError);
}

// Answers the first MGET on a unix socket with one row whatever the number of keys: a reply
// no real Redis gives, to check that a short reply is caught. Bounded by poll timeouts.
class ShortReplyServer {
 public:
  explicit ShortReplyServer(const std::string& path) {
    listener_ = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    if (listener_ < 0 || bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(listener_, 1) != 0)
      throw Error("short reply server: cannot listen on " + path);
    thread_ = std::thread([this] { serve(); });
  }
  ~ShortReplyServer() {
    thread_.join();
    close(listener_);
  }

 private:
  static bool wait_readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, 5000) == 1;
  }
  void serve() {
    if (!wait_readable(listener_)) return;
    int conn = accept(listener_, nullptr, nullptr);
    if (conn < 0) return;
    std::string request;
    char buf[4096];
    while (request.find("MGET") == std::string::npos && wait_readable(conn)) {
      ssize_t n = read(conn, buf, sizeof buf);
      if (n <= 0) break;
      request.append(buf, n);
    }
    const char reply[] = "*1\r\n$4\r\n\0\0\0\0\r\n";
    if (write(conn, reply, sizeof reply - 1) < 0) {
    }
    // Until the client hangs up.
    while (wait_readable(conn) && read(conn, buf, sizeof buf) > 0) {
    }
    close(conn);
  }
  int listener_ = -1;
  std::thread thread_;
};

TEST(RedisStoreFake, ShortReplyIsAnError) {
  std::string dir = fresh_directory();
  {
    ShortReplyServer server(dir + "/short.sock");
    RedisOptions options;
    options.unix_socket = dir + "/short.sock";
    options.timeout_s = 2;
    RedisStore store(options, 1);
    std::vector<EmbKey> keys = {1, 2};
    std::vector<float> out(2);
    std::string what = error_of([&] { store.fetch(keys, out); });
    EXPECT_TRUE(contains(what, "1 rows for 2 keys"));
  }
  std::filesystem::remove_all(dir);
}

class RedisStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!RedisServer::available())
      GTEST_SKIP() << kRedisServerPath << " is absent: install redis-server to run this test";
    server_.emplace();
  }
  // Every test leaves no server running: the child is reaped and its directory gone.
  void TearDown() override {
    if (!server_) return;
    const pid_t pid = server_->pid();
    const std::string dir = server_->directory();
    server_.reset();
    if (pid > 0) {
      errno = 0;
      EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);
      EXPECT_EQ(errno, ECHILD) << "redis-server " << pid << " was not reaped";
    }
    EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
  }
  RedisOptions options(uint32_t batch = 512) const {
    RedisOptions o;
    o.unix_socket = server_->socket();
    o.batch = batch;
    return o;
  }
  std::optional<RedisServer> server_;
};

TEST_F(RedisStoreTest, StoreThenFetch5000KeysIsBitwiseSyntheticInOneRoundTripEach) {
  constexpr uint32_t kDim = 32;
  auto keys = spread_keys(5000);
  RedisStore store(options(512), kDim);
  EXPECT_EQ(store.name(), "redis unix:" + server_->socket());
  load_synthetic(store, keys);
  EXPECT_EQ(store.round_trips(), 1u);
  EXPECT_EQ(store.commands(), 10u);  // ceil(5000 / 512) MSETs

  // The wire format: prefix + decimal key, dim little-endian floats.
  std::string raw = raw_command(server_->socket(), {"GET", "emb:" + std::to_string(keys[42])});
  ASSERT_EQ(raw.size(), kDim * sizeof(float));
  std::vector<float> row(kDim);
  synthetic_row(keys[42], row);
  uint32_t first_bits;
  std::memcpy(&first_bits, row.data(), 4);
  for (int b = 0; b < 4; ++b)
    EXPECT_EQ(static_cast<unsigned char>(raw[b]), (first_bits >> (8 * b)) & 0xff);

  std::vector<EmbKey> wanted(keys.rbegin(), keys.rend());
  std::vector<float> out(wanted.size() * kDim, std::nanf(""));
  auto start = std::chrono::steady_clock::now();
  store.fetch(wanted, out);
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count();
  RecordProperty("fetch_5000_keys_us", std::to_string(us));
  EXPECT_TRUE(same_bits(out, synthetic_rows(wanted, kDim)));
  EXPECT_EQ(store.round_trips(), 2u);
  EXPECT_EQ(store.commands(), 20u);

  std::vector<float> too_small(kDim);
  EXPECT_THROW(store.fetch(wanted, too_small), Error);
  EXPECT_THROW(store.store(wanted, too_small), Error);
  EXPECT_EQ(store.round_trips(), 2u);  // rejected before any I/O
}

TEST_F(RedisStoreTest, MissingRowNamesItsKeyAndLeavesTheConnectionInStep) {
  constexpr uint32_t kDim = 4;
  auto keys = spread_keys(20);
  std::vector<EmbKey> present = keys;
  present.erase(present.begin() + 2);
  RedisStore store(options(4), kDim);  // the missing key is in the first of five MGETs
  load_synthetic(store, present);

  std::vector<float> out(keys.size() * kDim);
  std::string what = error_of([&] { store.fetch(keys, out); });
  EXPECT_TRUE(contains(what, "key " + std::to_string(keys[2])));
  EXPECT_TRUE(contains(what, "emb:" + std::to_string(keys[2])));
  EXPECT_TRUE(contains(what, "table " + std::to_string(table_of(keys[2]))));
  EXPECT_TRUE(contains(what, "missing"));

  // The replies of the four later MGETs were read, so the next fetch gets its own.
  std::vector<float> rows(present.size() * kDim);
  store.fetch(present, rows);
  EXPECT_TRUE(same_bits(rows, synthetic_rows(present, kDim)));
}

TEST_F(RedisStoreTest, RowOfTheWrongLengthNamesItsKeyAndBothLengths) {
  constexpr uint32_t kDim = 8;
  auto keys = spread_keys(10);
  RedisStore store(options(), kDim);
  load_synthetic(store, keys);
  raw_command(server_->socket(), {"SET", "emb:" + std::to_string(keys[6]), "abc"});
  std::vector<float> out(keys.size() * kDim);
  std::string what = error_of([&] { store.fetch(keys, out); });
  EXPECT_TRUE(contains(what, "key " + std::to_string(keys[6])));
  EXPECT_TRUE(contains(what, "has 3 bytes, not 32"));
}

TEST_F(RedisStoreTest, ErrorReplyIsAnError) {
  auto keys = spread_keys(10);
  RedisStore store(options(), 4);
  load_synthetic(store, keys);
  // ACL changes apply to connections already open, so this one's next MGET is refused.
  raw_command(server_->socket(), {"ACL", "SETUSER", "default", "-mget"});
  std::vector<float> out(keys.size() * 4);
  std::string what = error_of([&] { store.fetch(keys, out); });
  EXPECT_TRUE(contains(what, "NOPERM"));
  EXPECT_TRUE(contains(what, "fetch of 10 keys failed"));
}

TEST_F(RedisStoreTest, ServerKilledMidRunIsAnErrorNotASignal) {
  auto keys = spread_keys(100);
  RedisStore store(options(16), 4);
  load_synthetic(store, keys);
  std::vector<float> out(keys.size() * 4);
  store.fetch(keys, out);

  sigset_t mask_before;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask_before);
  const pid_t pid = server_->pid();
  server_->kill();
  errno = 0;
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);

  // Writing to the dead server raises SIGPIPE, which must neither kill the test nor linger.
  std::string what = error_of([&] { store.fetch(keys, out); });
  EXPECT_TRUE(contains(what, "unix:" + server_->socket()));
  EXPECT_TRUE(contains(what, "fetch of 100 keys failed"));
  EXPECT_FALSE(contains(what, "reconnect"));
  sigset_t mask_after, pending;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask_after);
  EXPECT_EQ(sigismember(&mask_after, SIGPIPE), sigismember(&mask_before, SIGPIPE));
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
  // Later calls fail the same way, trying a fresh connection rather than the dead one.
  EXPECT_TRUE(contains(error_of([&] { store.fetch(keys, out); }), "cannot connect"));
}

TEST_F(RedisStoreTest, ServerKilledWithRetriesFailsInBoundedTimeAndSaysItRetried) {
  auto keys = spread_keys(100);
  RedisOptions o = options(16);
  o.retries = 2;
  RedisStore store(o, 4);
  load_synthetic(store, keys);
  server_->kill();
  std::vector<float> out(keys.size() * 4);
  auto start = std::chrono::steady_clock::now();
  std::string what = error_of([&] { store.fetch(keys, out); });
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(contains(what, "after 2 reconnect attempts"));
  EXPECT_TRUE(contains(what, "cannot connect"));       // the last attempt's reason
  EXPECT_GE(elapsed, std::chrono::milliseconds(150));  // backoff 50 ms then 100 ms
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST(RedisAddress, HostPortAndUrlsWithCredentials) {
  RedisOptions o = parse_redis_address("10.0.0.7:6380", "--redis");
  EXPECT_EQ(o.host, "10.0.0.7");
  EXPECT_EQ(o.port, 6380);
  EXPECT_TRUE(o.password.empty());
  o = parse_redis_address("redis://cache.local", "--redis");
  EXPECT_EQ(o.host, "cache.local");
  EXPECT_EQ(o.port, 6379);
  o = parse_redis_address("redis://:p%40ss%3Aword@127.0.0.1:7000/", "--redis");
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.port, 7000);
  EXPECT_EQ(o.username, "");
  EXPECT_EQ(o.password, "p@ss:word");
  o = parse_redis_address("redis://reader:secret@h:1/0", "--redis");
  EXPECT_EQ(o.username, "reader");
  EXPECT_EQ(o.password, "secret");
  for (const char* bad : {"redis://:secret@h:1/3", "h", "h:0", "h:x", "redis://:secret@:1",
                          "redis://:%4@h:1", "redis://reader@h:1"}) {
    std::string what = error_of([&] { parse_redis_address(bad, "--redis"); });
    EXPECT_TRUE(contains(what, "--redis: ")) << bad;
    EXPECT_FALSE(contains(what, "secret")) << "the message shows the password: " << what;
  }
}

// A server with requirepass on loopback TCP: the store sends AUTH with the URL's password; a
// wrong password is one error that does not show it, and no password fails on the first fetch.
TEST(RedisStoreAuth, PasswordFromTheUrlAuthenticates) {
  if (!RedisServer::available())
    GTEST_SKIP() << kRedisServerPath << " is absent: install redis-server to run this test";
  RedisServer server({.password = "s3cr@t", .loopback_tcp = true});
  ASSERT_GT(server.port(), 0);
  const std::string at = "127.0.0.1:" + std::to_string(server.port());
  auto keys = spread_keys(100);
  {
    RedisStore store(parse_redis_address("redis://:s3cr%40t@" + at + "/", "--redis"), 8);
    load_synthetic(store, keys);
    std::vector<float> out(keys.size() * 8);
    store.fetch(keys, out);
    EXPECT_TRUE(same_bits(out, synthetic_rows(keys, 8)));
  }
  RedisOptions wrong = parse_redis_address("redis://:guess@" + at, "--redis");
  std::string what = error_of([&] { RedisStore store(wrong, 8); });
  EXPECT_TRUE(contains(what, "AUTH refused"));
  EXPECT_FALSE(contains(what, "guess"));
  RedisStore anonymous(parse_redis_address(at, "--redis"), 8);
  std::vector<float> out(8);
  std::string anonymous_error =
      error_of([&] { anonymous.fetch(std::span<const EmbKey>(keys).first(1), out); });
  EXPECT_TRUE(contains(anonymous_error, "NOAUTH")) << anonymous_error;
}

TEST(RedisStoreServer, StopsReapsAndRemovesItsDirectory) {
  if (!RedisServer::available())
    GTEST_SKIP() << kRedisServerPath << " is absent: install redis-server to run this test";
  pid_t pid;
  std::string dir;
  {
    RedisServer server;
    pid = server.pid();
    dir = server.directory();
    ASSERT_GT(pid, 0);
    EXPECT_EQ(::kill(pid, 0), 0);
    EXPECT_EQ(raw_command(server.socket(), {"PING"}), "PONG");
    // Nothing but the socket in its directory.
    std::vector<std::string> files;
    for (auto& e : std::filesystem::directory_iterator(dir))
      files.push_back(e.path().filename().string());
    EXPECT_EQ(files, std::vector<std::string>{"redis.sock"});
  }
  errno = 0;
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace kvpolicy::embed
