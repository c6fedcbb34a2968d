// Embedding-lookup workloads for the DLRM embedding cache (docs/results/embed.md): Meta's
// reuse-factor histograms (traces/dlrm-locality), a generator whose trace matches one of them, a
// Zipf generator for tests, and a CSV format for bringing one's own lookups.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/embed/embedding.h"

namespace kvpolicy::embed {

// Bins of a key's reuse count (its lookups in the trace), as in Meta's files: b = 0 is (0, 1],
// b is (2^(b-1), 2^b] up to (16384, 32768], and the last bin, (32768+, is open.
inline constexpr size_t kReuseBins = 17;
// The bin of a reuse count r >= 1.
size_t reuse_bin(uint64_t reuse);
// The label of bin b as the files print it: "(0, 1]", "(2, 4]", ..., "(32768+".
std::string reuse_bin_label(size_t b);

struct ReuseHistogram {
  std::string source;                // the block's dataset file, or the trace's name
  double avg_reuse = 0;              // lookups per distinct key
  std::vector<double> key_share;     // [b]: share of distinct keys whose reuse count is in bin b
  std::vector<double> lookup_share;  // [b]: share of lookups that go to keys of bin b
};

// Every block of a locality_stats file. avg_reuse is "Avg # of indices" / "Avg # of unique cols"
// (four digits where "Avg col size" prints two; the two must agree); the cumulative lines are
// skipped. Throws InputError naming file, line and field for a missing, malformed or out-of-order
// line, a block cut short, shares outside [0, 1] or not summing to 1 within the files' rounding.
std::vector<ReuseHistogram> read_locality_stats(const std::string& path);

// The same statistics measured on a trace, reuse counted over the whole trace; kReuseBins bins.
ReuseHistogram reuse_histogram(const EmbeddingTrace& trace);

struct DlrmOptions {
  ReuseHistogram target;
  uint32_t tables = 8;
  uint64_t samples = 20000;
  double pooling = 50;   // mean lookups per sample, >= 1
  uint32_t batch = 512;  // samples per SLS query: a batch shares one time stamp
  double drift = 0;      // 0..1: share of the hot set replaced over the trace
  double samples_per_second = 10000;
  uint64_t seed = 1;
};

// A trace whose key_share matches opts.target (the model is described in workload.cc). Throws
// ConfigError for options out of range or a target without key shares.
EmbeddingTrace generate_dlrm(const DlrmOptions& opts);

// `samples` samples of about `pooling` lookups drawn independently from `keys` keys with
// popularity of rank i (0-based) proportional to (i + 1)^-alpha; rank i is
// make_key(i % tables, i / tables). Times as generate_dlrm's defaults (batches of 512 at 10,000
// samples per second). Throws ConfigError for options out of range.
EmbeddingTrace generate_zipf(uint64_t keys, double alpha, uint64_t samples, double pooling,
                             uint32_t tables, uint64_t seed);

// The user format: CSV with the header `timestamp_us,table,index,sample` and one row per lookup;
// the rows of a sample are consecutive and share its time stamp, samples come in non-decreasing
// time. Sample ids are any non-negative integers (a new id starts a new sample); the trace
// numbers samples in file order.
struct EmbeddingCsvReport {
  uint64_t rows = 0;          // lookups read
  uint64_t skipped_rows = 0;  // bad rows skipped (skip_bad_lines)
  std::string first_skipped;  // the first skipped row's error
};

// Reads the CSV; the trace is named after the file's stem. A bad row (wrong column count, a
// negative, non-integer or out-of-range number, table >= 2^24, index >= 2^40, a time stamp that
// disagrees with its sample's or goes back, a sample id seen before) throws InputError naming
// file, line and column (as the field), or with skip_bad_lines is skipped and counted. An empty
// file, a bad header or no valid row throws InputError.
EmbeddingTrace read_embedding_csv(const std::string& path, bool skip_bad_lines = false,
                                  EmbeddingCsvReport* report = nullptr);

// Writes the trace in that format, samples numbered from 0, through a temporary file renamed
// into place. Throws Error naming the file when a write fails, and for a trace the format
// cannot carry (an empty sample, a negative time) or that does not validate().
void write_embedding_csv(const EmbeddingTrace& trace, const std::string& path);

}  // namespace kvpolicy::embed
