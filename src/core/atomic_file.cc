#include "kvpolicy/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "kvpolicy/core/error.h"

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

}  // namespace

AtomicOutput::AtomicOutput(std::string path) : path_(std::move(path)) {
  struct stat st {};
  bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    file_ = std::fopen(path_.c_str(), "wb");
    if (!file_) throw Error("cannot write '" + path_ + "': " + std::strerror(errno));
    return;
  }
  // mkstemp in the same directory: rename() is atomic only within one file system.
  std::filesystem::path p(path_);
  std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
  std::string templ = dir + "/." + p.filename().string() + ".tmp.XXXXXX";
  int fd = ::mkstemp(templ.data());
  if (fd < 0) throw Error("cannot write '" + path_ + "': " + std::strerror(errno));
  temp_ = templ;
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
  if (!temp_.empty()) std::remove(temp_.c_str());
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
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) fail("rename");
  temp_.clear();
}

void write_file_atomically(const std::string& path, std::string_view content) {
  AtomicOutput out(path);
  out.write(content);
  out.commit();
}

}  // namespace kvpolicy
