#include "kvpolicy/core/file_identity.h"

#include <sys/stat.h>

#include <filesystem>

namespace kvpolicy {

std::string resolve_symlinks(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  std::error_code ec;
  // 40 links at most, as the kernel's own resolution (ELOOP).
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p.string();
}

std::optional<FileIdentity> file_identity(const std::string& path) {
  if (path.empty()) return std::nullopt;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return std::nullopt;
    return FileIdentity{st.st_dev, st.st_ino, ""};
  }
  std::filesystem::path target = resolve_symlinks(path);
  std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") return std::nullopt;
  std::string dir = target.parent_path().empty() ? "." : target.parent_path().string();
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return std::nullopt;
  return FileIdentity{st.st_dev, st.st_ino, name};
}

}  // namespace kvpolicy
