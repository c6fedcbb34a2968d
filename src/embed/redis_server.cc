#include "kvpolicy/embed/redis_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "kvpolicy/core/error.h"

namespace kvpolicy::embed {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kStartTimeout = std::chrono::seconds(5);

// Under $KVPOLICY_TEST_TMP (set by ctest) when the socket path fits a sockaddr_un there, else
// under the system temp directory.
std::string make_directory() {
  namespace fs = std::filesystem;
  const std::string tail = "/kvpolicy-redis-XXXXXX/redis.sock";
  std::string base;
  if (const char* env = std::getenv("KVPOLICY_TEST_TMP"); env && *env) base = env;
  if (base.empty() || base.size() + tail.size() >= sizeof(sockaddr_un{}.sun_path))
    base = fs::temp_directory_path().string();
  if (base.size() + tail.size() >= sizeof(sockaddr_un{}.sun_path)) base = "/tmp";
  std::error_code ec;
  fs::create_directories(base, ec);
  std::string pattern = base + "/kvpolicy-redis-XXXXXX";
  if (!mkdtemp(pattern.data()))
    throw Error("redis test server: mkdtemp " + pattern + ": " + std::strerror(errno));
  return pattern;
}

bool answers_ping(const std::string& socket) {
  redisContext* c = redisConnectUnixWithTimeout(socket.c_str(), timeval{0, 200'000});
  if (!c) return false;
  bool ok = false;
  if (!c->err && redisSetTimeout(c, timeval{0, 200'000}) == REDIS_OK) {
    auto* reply = static_cast<redisReply*>(redisCommand(c, "PING"));
    ok = reply && reply->type == REDIS_REPLY_STATUS && std::strcmp(reply->str, "PONG") == 0;
    // A server with a password answers, but asks for it first.
    ok = ok ||
         (reply && reply->type == REDIS_REPLY_ERROR && std::strncmp(reply->str, "NOAUTH", 6) == 0);
    if (reply) freeReplyObject(reply);
  }
  redisFree(c);
  return ok;
}

// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice for port 0).
int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error(std::string("redis test server: socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  if (port <= 0) throw Error("redis test server: no free port on 127.0.0.1");
  return port;
}

}  // namespace

bool RedisServer::available() { return access(kRedisServerPath, X_OK) == 0; }

RedisServer::RedisServer(const Options& options) {
  dir_ = make_directory();
  socket_ = dir_ + "/redis.sock";
  try {
    // Only a unix socket (port 0: no TCP), nothing written but the socket, logs to /dev/null.
    std::vector<std::string> args = {kRedisServerPath,
                                     "--port",
                                     "0",
                                     "--unixsocket",
                                     socket_,
                                     "--unixsocketperm",
                                     "700",
                                     "--dir",
                                     dir_,
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--daemonize",
                                     "no",
                                     "--loglevel",
                                     "warning"};
    if (options.loopback_tcp) {
      port_ = free_loopback_port();
      args[2] = std::to_string(port_);
      args.insert(args.end(), {"--bind", "127.0.0.1", "--protected-mode", "no"});
    }
    if (!options.password.empty()) args.insert(args.end(), {"--requirepass", options.password});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    // Everything the child needs is prepared above: after fork in a process that may have
    // threads, the child calls only async-signal-safe functions.
    pid_t pid = fork();
    if (pid < 0) throw Error(std::string("redis test server: fork: ") + std::strerror(errno));
    if (pid == 0) {
      // Dies with the test process, so that a crashed or killed test leaves no server behind.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      int null = open("/dev/null", O_RDWR);
      if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
      }
      // The test's own sockets must not stay open in the server.
      if (close_range(3, ~0U, 0) != 0)
        for (int fd = 3; fd < 1024; ++fd) close(fd);
      execv(kRedisServerPath, argv.data());
      _exit(127);
    }
    pid_ = pid;
    const auto deadline = Clock::now() + kStartTimeout;
    while (!answers_ping(socket_)) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw Error("redis test server: " + std::string(kRedisServerPath) + " exited (status " +
                    std::to_string(status) + ") before answering on " + socket_);
      }
      if (Clock::now() > deadline)
        throw Error("redis test server: no PONG on " + socket_ + " within 5 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  } catch (...) {
    stop(SIGKILL, 0);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

RedisServer::~RedisServer() {
  stop(SIGTERM, 5000);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void RedisServer::kill() { stop(SIGKILL, 5000); }

void RedisServer::stop(int first_signal, int wait_ms) {
  if (pid_ <= 0) return;
  ::kill(pid_, first_signal);
  const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    pid_t r = waitpid(pid_, nullptr, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) break;
    if (Clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
}

}  // namespace kvpolicy::embed
