#include "kvpolicy/trace/external_oracle.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/key_map.h"

namespace kvpolicy {
namespace {

// A temporary file, removed when destroyed; written at the end, read anywhere.
class TempFile {
 public:
  explicit TempFile(const std::string& dir) {
    std::string base = dir;
    if (base.empty()) {
      const char* env = std::getenv("TMPDIR");
      base = env && *env ? env : "/tmp";
    }
    path_ = base + "/kvpolicy-oracle-XXXXXX";
    fd_ = ::mkstemp(path_.data());
    if (fd_ < 0) throw ConfigError("cannot create a temporary file in '" + base + "'");
    // Unlinked at once: the open descriptor (and a mapping) keeps it, and even a kill -9 leaves
    // nothing behind.
    ::unlink(path_.c_str());
  }
  ~TempFile() { ::close(fd_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  template <typename T>
  void append(const std::vector<T>& v) {
    write_at(v.data(), v.size() * sizeof(T), size_);
  }
  void write_at(const void* data, size_t bytes, uint64_t at) {
    const char* p = static_cast<const char*>(data);
    size_ = std::max(size_, at + bytes);
    while (bytes) {
      ssize_t put = ::pwrite(fd_, p, bytes, static_cast<off_t>(at));
      if (put <= 0) throw Error("writing the temporary file '" + path_ + "' failed (disk full?)");
      p += put, at += put, bytes -= put;
    }
  }
  template <typename T>
  void read(std::vector<T>& v, uint64_t first, size_t count) {
    v.resize(count);
    char* p = reinterpret_cast<char*>(v.data());
    uint64_t at = first * sizeof(T), bytes = count * sizeof(T);
    while (bytes) {
      ssize_t got = ::pread(fd_, p, bytes, static_cast<off_t>(at));
      if (got <= 0) throw Error("reading the temporary file '" + path_ + "' failed");
      p += got, at += got, bytes -= got;
    }
  }
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Column buffers of the forward pass, appended to their files when full.
template <typename T>
struct Spool {
  TempFile& file;
  std::vector<T> buf;
  void push(T v) {
    buf.push_back(v);
    if (buf.size() == kStreamChunkRequests) flush();
  }
  void flush() {
    file.append(buf);
    buf.clear();
  }
};

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

}  // namespace

ExternalOracle::ExternalOracle(TraceStream& stream, const std::string& temp_dir) {
  TempFile keys(temp_dir), lengths(temp_dir), sessions(temp_dir), times(temp_dir),
      prompts(temp_dir), next(temp_dir), next_session(temp_dir);
  // Forward: the columns the reverse pass and the view need.
  {
    Spool<uint32_t> len{lengths, {}}, ses{sessions, {}}, tok{prompts, {}};
    Spool<Time> tim{times, {}};
    Trace chunk;
    while (stream.next(chunk, kStreamChunkRequests)) {
      facts_.name = chunk.name;
      facts_.block_tokens = chunk.block_tokens;
      for (size_t r = 0; r < chunk.size(); ++r) {
        len.push(chunk.prompt_blocks(r));
        ses.push(chunk.session[r]);
        tok.push(chunk.prompt_tokens[r]);
        tim.push(chunk.time[r]);
        facts_.prompt_tokens += chunk.prompt_tokens[r];
        facts_.longest_prompt_blocks =
            std::max(facts_.longest_prompt_blocks, chunk.prompt_blocks(r));
      }
      keys.append(chunk.blocks);
      facts_.requests += chunk.size();
      facts_.block_accesses += chunk.num_block_accesses();
    }
    len.flush(), ses.flush(), tok.flush(), tim.flush();
  }
  if (facts_.block_accesses >= OracleView::kNoNext || facts_.requests >= OracleView::kNoNext)
    throw Error("oracle: over 2^32 - 1 block accesses");

  // Reverse, a batch of requests at a time: a key's entry holds the request of its next access.
  {
    KeyMap later;
    std::vector<uint32_t> lens, out;
    std::vector<BlockKey> batch;
    uint64_t r_end = facts_.requests, a_end = facts_.block_accesses;
    while (r_end > 0) {
      uint64_t r_begin = r_end > kStreamChunkRequests ? r_end - kStreamChunkRequests : 0;
      lengths.read(lens, r_begin, r_end - r_begin);
      uint64_t blocks = 0;
      for (uint32_t l : lens) blocks += l;
      uint64_t a_begin = a_end - blocks;
      keys.read(batch, a_begin, blocks);
      out.resize(blocks);
      size_t a = blocks;
      for (size_t i = lens.size(); i-- > 0;) {
        uint32_t r = static_cast<uint32_t>(r_begin + i);
        for (uint32_t j = 0; j < lens[i]; ++j) {
          --a;
          bool inserted;
          uint32_t& slot = later.get_or_insert(batch[a], r, &inserted);
          out[a] = inserted ? OracleView::kNoNext : slot;
          slot = r;
        }
      }
      next.write_at(out.data(), out.size() * 4, a_begin * 4);
      r_end = r_begin, a_end = a_begin;
    }
    facts_.unique_blocks = later.size();
  }
  {
    KeyMap later_in_session;
    std::vector<uint32_t> ses, out;
    for (uint64_t r_end = facts_.requests; r_end > 0;) {
      uint64_t r_begin = r_end > kStreamChunkRequests ? r_end - kStreamChunkRequests : 0;
      sessions.read(ses, r_begin, r_end - r_begin);
      out.assign(ses.size(), OracleView::kNoNext);
      for (size_t i = ses.size(); i-- > 0;) {
        if (ses[i] == kNoSession) continue;
        bool inserted;
        uint32_t& slot =
            later_in_session.get_or_insert(ses[i], static_cast<uint32_t>(r_begin + i), &inserted);
        if (!inserted) {
          out[i] = slot;
          slot = static_cast<uint32_t>(r_begin + i);
        }
      }
      next_session.write_at(out.data(), out.size() * 4, r_begin * 4);
      r_end = r_begin;
    }
  }
  next_request_ = map_file(next.fd(), next.path(), facts_.block_accesses * 4);
  next_in_session_ = map_file(next_session.fd(), next_session.path(), facts_.requests * 4);
  request_time_ = map_file(times.fd(), times.path(), facts_.requests * sizeof(Time));
  prompt_tokens_ = map_file(prompts.fd(), prompts.path(), facts_.requests * 4);
}

ExternalOracle::~ExternalOracle() {
  for (Mapping* m : {&next_request_, &next_in_session_, &request_time_, &prompt_tokens_}) unmap(*m);
}

ExternalOracle::Mapping ExternalOracle::map_file(int fd, const std::string& path, size_t bytes) {
  Mapping m;
  if (bytes == 0) return m;
  void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);  // kept once fd is closed
  if (p == MAP_FAILED) throw Error("cannot map the temporary file '" + path + "'");
  ::madvise(p, bytes, MADV_SEQUENTIAL);
  m.data = p;
  m.bytes = bytes;
  return m;
}

void ExternalOracle::unmap(Mapping& m) {
  if (m.data) ::munmap(m.data, m.bytes);
  m = {};
}

OracleView ExternalOracle::view() const {
  auto span_of = [](const Mapping& m, auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    return std::span<const T>(static_cast<const T*>(m.data), m.bytes / sizeof(T));
  };
  OracleView v;
  v.next_request = span_of(next_request_, static_cast<uint32_t*>(nullptr));
  v.next_in_session = span_of(next_in_session_, static_cast<uint32_t*>(nullptr));
  v.request_time = span_of(request_time_, static_cast<Time*>(nullptr));
  v.prompt_tokens = span_of(prompt_tokens_, static_cast<uint32_t*>(nullptr));
  v.longest_prompt_blocks = facts_.longest_prompt_blocks;
  return v;
}

void ExternalOracle::release(Cursor& cursor, uint64_t request, uint64_t access) const {
  auto drop = [](const Mapping& m, uint64_t from_byte, uint64_t to_byte) {
    if (!m.data) return;
    uint64_t lo = from_byte / kPage * kPage,
             hi = std::min<uint64_t>(to_byte, m.bytes) / kPage * kPage;
    if (hi > lo) ::madvise(static_cast<char*>(m.data) + lo, hi - lo, MADV_DONTNEED);
  };
  drop(next_request_, cursor.access * 4, access * 4);
  drop(next_in_session_, cursor.request * 4, request * 4);
  drop(request_time_, cursor.request * sizeof(Time), request * sizeof(Time));
  drop(prompt_tokens_, cursor.request * 4, request * 4);
  cursor.request = std::max(cursor.request, request);
  cursor.access = std::max(cursor.access, access);
}

}  // namespace kvpolicy
