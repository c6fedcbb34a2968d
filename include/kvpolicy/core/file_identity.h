// Which file a path names, however it is spelt (./x, dir/../x, a symlink, a hard link): what
// decides whether an output would write over an input.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace kvpolicy {

struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;   // the file's, or, for one not created yet, its directory's
  std::string name;  // empty for an existing file; else the name it would be created under
  bool operator==(const FileIdentity&) const = default;
};

// A regular file, or a path whose file does not exist yet but could be created (its directory
// exists; symlinks followed, a dangling one to the file it would create). Anything else (a
// device, a pipe, a directory, a path in a missing directory) has none: writing it destroys no
// file.
std::optional<FileIdentity> file_identity(const std::string& path);

// The file a write to `path` lands in: symlinks followed to the last one's target, which may not
// exist yet (a write through a link replaces its target and keeps the link).
std::string resolve_symlinks(const std::string& path);

}  // namespace kvpolicy
