// A real redis-server of our own, for the tests and for `kvpolicy embed bench --store redis`
// without an address: a child process listening only on a unix socket in a fresh temporary
// directory, stopped, reaped and removed with this object.
#pragma once

#include <sys/types.h>

#include <string>

namespace kvpolicy::embed {

inline constexpr const char* kRedisServerPath = "/usr/bin/redis-server";

class RedisServer {
 public:
  // Whether kRedisServerPath can be run (Debian's redis-server, tools/install-deps.sh).
  static bool available();

  struct Options {
    std::string password;       // --requirepass: clients must AUTH (empty: none)
    bool loopback_tcp = false;  // also listen on 127.0.0.1 at a free port (port())
  };
  // Starts the server and waits (at most 5 s) until its socket answers PING; throws
  // kvpolicy::Error, leaving no process or directory behind, when it does not.
  RedisServer() : RedisServer(Options{}) {}
  explicit RedisServer(const Options& options);
  // Stops the server if it runs (SIGTERM, then SIGKILL after 5 s), reaps it, removes the
  // directory.
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  const std::string& socket() const { return socket_; }
  int port() const { return port_; }  // 0 without loopback_tcp
  const std::string& directory() const { return dir_; }
  // The server's process id, -1 once it is stopped and reaped.
  pid_t pid() const { return pid_; }
  // Kills the server at once (SIGKILL, as a crash would) and reaps it, to test a server dying
  // mid-run. The directory stays until destruction.
  void kill();

 private:
  void stop(int first_signal, int wait_ms);

  std::string dir_;
  std::string socket_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace kvpolicy::embed
