#include "kvpolicy/trace/fingerprint.h"

#include <gtest/gtest.h>

#include "kvpolicy/trace/trace_io.h"
#include "kvpolicy/trace/trace_stream.h"
#include "support/random_workload.h"
#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

// A trace read whole and the same file streamed (in chunks) have one fingerprint, so rows of a
// --stream run resume in a --no-stream one; any change of content changes it.
TEST(TraceFingerprint, SameWholeOrStreamedAndChangesWithContent) {
  Trace t = testing::random_workload({.seed = 3, .requests = 500});
  std::string path = testing::temp_path("t.kvtrace");
  write_native(t, path);
  Trace read = read_trace(path, "auto", {}, nullptr);
  std::string whole = trace_fingerprint(read);
  EXPECT_EQ(whole.substr(0, whole.find('/', whole.find('/') + 1)),
            "500/" + std::to_string(t.num_block_accesses()));
  EXPECT_EQ(stream_fingerprint(*open_trace_stream(path, "auto", {})), whole);
  TraceChecksum in_chunks;
  auto stream = open_trace_stream(path, "auto", {});
  for (Trace chunk; stream->next(chunk, 7);) in_chunks.add(chunk);
  EXPECT_EQ(in_chunks.fingerprint(), whole);

  Trace changed = read;
  changed.blocks[changed.blocks.size() / 2] ^= 1;
  EXPECT_NE(trace_fingerprint(changed), whole);
  changed = read;
  changed.time.back() += 1;
  EXPECT_NE(trace_fingerprint(changed), whole);
}

}  // namespace
}  // namespace kvpolicy
