#include "kvpolicy/core/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/file_identity.h"

namespace kvpolicy {
namespace {

// From /proc: umask() can only be read by setting it, which races with other threads' files.
mode_t current_umask() {
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned mask = 022;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "Umask: %o", &mask) == 1) break;
    std::fclose(f);
    return static_cast<mode_t>(mask);
  }
  return 022;
}

// The temporaries being written, for remove_temporary_outputs() in a signal handler: plain
// pointers in a fixed array, as a handler may neither lock nor allocate.
std::array<std::atomic<const char*>, 64> live_temporaries{};

void track(const std::string& temp) {
  for (auto& slot : live_temporaries) {
    const char* empty = nullptr;
    if (slot.compare_exchange_strong(empty, temp.c_str())) return;
  }
}

void untrack(const std::string& temp) {
  for (auto& slot : live_temporaries) {
    const char* mine = temp.c_str();
    if (slot.compare_exchange_strong(mine, nullptr)) return;
  }
}

// Temporaries of `name` in `dir` left by a process that no longer runs (a kill -9): the pid in
// their name (.NAME.tmp.PID.XXXXXX) tells.
void remove_stale_temporaries(const std::filesystem::path& dir, const std::string& name) {
  std::string prefix = "." + name + ".tmp.";
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::string file = it->path().filename().string();
    if (!file.starts_with(prefix)) continue;
    pid_t pid = static_cast<pid_t>(std::atoll(file.c_str() + prefix.size()));
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) std::filesystem::remove(it->path(), ec);
  }
}

}  // namespace

void remove_temporary_outputs() noexcept {
  for (auto& slot : live_temporaries)
    if (const char* temp = slot.load()) ::unlink(temp);
}

AtomicOutput::AtomicOutput(std::string path)
    : path_(std::move(path)), target_(resolve_symlinks(path_)) {
  struct stat st {};
  bool exists = ::stat(target_.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    file_ = std::fopen(path_.c_str(), "wb");
    if (!file_) throw Error("cannot write '" + path_ + "': " + std::strerror(errno));
    return;
  }
  // mkstemp in the same directory as the file written (a symlink's target, so that the link
  // stays a link): rename() is atomic only within one file system.
  std::filesystem::path p(target_);
  std::filesystem::path dir = p.parent_path().empty() ? "." : p.parent_path();
  remove_stale_temporaries(dir, p.filename().string());
  std::string templ =
      (dir / ("." + p.filename().string() + ".tmp." + std::to_string(::getpid()) + ".XXXXXX"))
          .string();
  int fd = ::mkstemp(templ.data());
  if (fd < 0) throw Error("cannot write '" + path_ + "': " + std::strerror(errno));
  temp_ = templ;
  track(temp_);
  // mkstemp creates mode 0600; give the file what a plain open would (0666 less the umask), or
  // the existing file's mode.
  mode_t mode = exists ? st.st_mode & 07777 : 0666 & ~current_umask();
  ::fchmod(fd, mode);
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    int err = errno;
    ::close(fd);
    std::remove(temp_.c_str());
    throw Error("cannot write '" + path_ + "': " + std::strerror(err));
  }
}

AtomicOutput::~AtomicOutput() { discard(); }

void AtomicOutput::discard() noexcept {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  if (!temp_.empty()) {
    std::remove(temp_.c_str());
    untrack(temp_);
  }
  temp_.clear();
}

void AtomicOutput::fail(const std::string& what) {
  std::string reason = errno ? std::string(": ") + std::strerror(errno) : "";
  discard();
  throw Error("writing '" + path_ + "' failed" + (what.empty() ? "" : " (" + what + ")") + reason);
}

void AtomicOutput::write(const void* data, size_t bytes) {
  if (!file_) throw Error("writing '" + path_ + "' after it was closed");
  errno = 0;
  if (bytes && std::fwrite(data, 1, bytes, file_) != bytes) fail("");
}

void AtomicOutput::check() {
  if (!file_) throw Error("writing '" + path_ + "' after it was closed");
  if (std::ferror(file_)) fail("");
}

void AtomicOutput::commit() {
  check();
  errno = 0;
  if (std::fflush(file_) != 0) fail("flush");
  std::FILE* f = file_;
  file_ = nullptr;
  errno = 0;
  if (std::fclose(f) != 0) fail("close");
  if (temp_.empty()) return;
  if (std::rename(temp_.c_str(), target_.c_str()) != 0) fail("rename");
  untrack(temp_);
  temp_.clear();
}

void check_writable(const std::string& path) {
  std::filesystem::path target = resolve_symlinks(path);
  std::string dir = target.parent_path().empty() ? "." : target.parent_path().string();
  bool exists = ::access(target.c_str(), F_OK) == 0;
  if (::access(exists ? target.c_str() : dir.c_str(), exists ? W_OK : W_OK | X_OK) != 0)
    throw ConfigError("cannot write '" + path + "': " + std::strerror(errno));
}

void write_file_atomically(const std::string& path, std::string_view content) {
  AtomicOutput out(path);
  out.write(content);
  out.commit();
}

}  // namespace kvpolicy
