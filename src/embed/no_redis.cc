// The Redis store and test server of a build without hiredis (-DKVPOLICY_REDIS=OFF): each
// refuses with an error naming the option, so `embed bench --store redis` says how to get it.
#include "kvpolicy/core/error.h"
#include "kvpolicy/embed/redis_server.h"
#include "kvpolicy/embed/stores.h"

namespace kvpolicy::embed {
namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw ConfigError(what +
                    " needs Redis support: this kvpolicy was built with -DKVPOLICY_REDIS=OFF; "
                    "rebuild with -DKVPOLICY_REDIS=ON (hiredis, Debian libhiredis-dev)");
}

}  // namespace

RedisStore::RedisStore(RedisOptions options, uint32_t dim)
    : options_(std::move(options)), dim_(dim) {
  refuse("the Redis store");
}
RedisStore::~RedisStore() = default;
void RedisStore::ContextDeleter::operator()(redisContext*) const {}
std::string RedisStore::address() const {
  if (!options_.unix_socket.empty()) return "unix:" + options_.unix_socket;
  return options_.host + ":" + std::to_string(options_.port);
}
std::string RedisStore::name() const { return "redis " + address(); }
// Never reached: the constructor refuses.
void RedisStore::fetch(std::span<const EmbKey>, std::span<float>) { refuse("the Redis store"); }
void RedisStore::store(std::span<const EmbKey>, std::span<const float>) {
  refuse("the Redis store");
}

void load_synthetic(RedisStore&, std::span<const EmbKey>) { refuse("loading Redis"); }

bool RedisServer::available() { return false; }
RedisServer::RedisServer(const Options&) { refuse("a Redis server"); }
RedisServer::~RedisServer() = default;
void RedisServer::kill() {}
void RedisServer::stop(int, int) {}

}  // namespace kvpolicy::embed
