// The LPC continuation classifier on fastText's C++ API: the feature encoding of a turn, training
// through a temporary file, probabilities from the 2-label softmax, and a model file whose
// trailer is checked before fastText (which trusts its input) reads it.
#include <fasttext/fasttext.h>
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/types.h"
#include "kvpolicy/predict/continuation.h"

namespace kvpolicy {

static_assert(std::endian::native == std::endian::little, "model trailers are little-endian");

namespace {

constexpr char kTrailerMagic[8] = {'K', 'V', 'P', 'L', 'P', 'C', 'M', '1'};
// Version 1: 48 bytes; version 2 adds the Platt map and the feature flags (64 bytes); version 3
// (72 bytes) the isotonic map's size, its breakpoints stored between the fastText part and the
// trailer. All end in the version (4 bytes, 4 of padding) and the magic, so the version is read
// before the trailer's size is known (docs/formats.md, continuation model files).
constexpr uint32_t kTrailerVersion = 3;
constexpr size_t kTrailerBytes = 72;
constexpr size_t kTrailerBytesV2 = 64;
constexpr size_t kTrailerBytesV1 = 48;
constexpr uint32_t kKnownFlags = 7;
// fastText 0.9.2's own header: int32 magic, int32 version.
constexpr int32_t kFastTextMagic = 793712314;
constexpr int32_t kFastTextVersion = 12;
constexpr const char* kLabel0 = "__label__0";
constexpr const char* kLabel1 = "__label__1";

// FNV-1a over 8-byte words (then the tail): enough to catch truncation and corruption.
uint64_t checksum(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
  }
  for (; i < bytes.size(); ++i) h = (h ^ static_cast<unsigned char>(bytes[i])) * 0x100000001b3ULL;
  return mix64(h ^ bytes.size());
}

template <typename T>
void put(std::string& s, size_t at, T v) {
  std::memcpy(s.data() + at, &v, sizeof v);
}
template <typename T>
T get(const std::string& s, size_t at) {
  T v;
  std::memcpy(&v, s.data() + at, sizeof v);
  return v;
}

std::string read_all(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("cannot read {} '{}'", what, path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A temporary directory removed with everything in it when this goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kvpolicy-fasttext-XXXXXX");
    if (!mkdtemp(pattern.data()))
      throw ConfigError("cannot create a temporary directory for fastText's training file");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// The trailer's feature flags: bit 0 = no turn token, bit 1 = answer length, bit 2 = turn
// quantile (0: the defaults).
uint32_t feature_flags(const ContinuationFeatureOptions& f) {
  return (f.turn_token ? 0u : 1u) | (f.answer_length ? 2u : 0u) | (f.turn_quantile ? 4u : 0u);
}

}  // namespace

struct ContinuationClassifier::Impl {
  fasttext::FastText model;
  ContinuationFeatureOptions features;
  double base_rate = 0;
  PlattScaling calibration;
  IsotonicCalibration isotonic;
};

ContinuationClassifier::ContinuationClassifier() = default;
ContinuationClassifier::ContinuationClassifier(ContinuationClassifier&&) noexcept = default;
ContinuationClassifier& ContinuationClassifier::operator=(ContinuationClassifier&&) noexcept =
    default;
ContinuationClassifier::~ContinuationClassifier() = default;

ContinuationClassifier ContinuationClassifier::train(std::span<const ContinuationExample> examples,
                                                     const ContinuationTrainOptions& o,
                                                     uint64_t seed) {
  if (o.epochs <= 0 || !(o.lr > 0) || o.dim <= 0 || o.word_ngrams < 1 || o.min_count < 1 ||
      o.minn < 0 || o.maxn < o.minn || (o.maxn > 0 && o.minn == 0) || o.bucket < 0 ||
      ((o.word_ngrams > 1 || o.maxn > 0) && o.bucket == 0))
    throw ConfigError(
        "continuation classifier: epochs, lr, dim, word_ngrams and min_count must be positive, "
        "0 <= minn <= maxn (both 0 for no character n-grams), and bucket > 0 with n-grams");
  if (o.features.window == 0 || o.features.max_chars == 0)
    throw ConfigError("continuation classifier: window and max_chars must be positive");
  size_t positives = 0;
  for (const auto& e : examples) positives += e.label;
  if (positives == 0 || positives == examples.size())
    throw ConfigError(fmt::format(
        "continuation classifier: the {} training example(s) need both labels ({} positive)",
        examples.size(), positives));

  // fastText learns by SGD in file order: shuffle so that one conversation's turns (or one
  // label) do not come in runs. A hand-written Fisher-Yates keeps the order the same everywhere.
  std::vector<size_t> order(examples.size());
  std::iota(order.begin(), order.end(), 0);
  uint64_t state = seed;
  for (size_t i = order.size(); i > 1; --i) {
    state += 0x9e3779b97f4a7c15ULL;
    std::swap(order[i - 1], order[mix64(state) % i]);
  }
  TempDir dir;
  const std::string input = dir.file("train.txt");
  {
    std::ofstream out(input, std::ios::binary);
    for (size_t i : order) {
      const ContinuationExample& e = examples[i];
      if (e.features.find('\n') != std::string::npos)
        throw ConfigError("continuation classifier: a feature line holds a newline");
      out << (e.label ? kLabel1 : kLabel0) << ' ' << e.features << '\n';
    }
    if (!out) throw ConfigError("cannot write fastText's training file '" + input + "'");
  }

  fasttext::Args args;
  args.input = input;
  args.model = fasttext::model_name::sup;
  args.loss = fasttext::loss_name::softmax;  // 2 labels: calibrated-ish probabilities that sum to 1
  args.lr = o.lr;
  args.epoch = o.epochs;
  args.dim = o.dim;
  args.wordNgrams = o.word_ngrams;
  args.minn = o.minn;
  args.maxn = o.maxn;
  args.minCount = o.min_count;
  args.bucket = o.bucket;
  args.thread = 1;  // one thread: the same examples and seed give the same model
  args.verbose = 0;
  args.seed = static_cast<int>(seed & 0x7fffffff);
  args.label = "__label__";

  ContinuationClassifier c;
  c.impl_ = std::make_unique<Impl>();
  c.impl_->features = o.features;
  c.impl_->base_rate = double(positives) / double(examples.size());
  try {
    c.impl_->model.train(args);
  } catch (const std::exception& e) {
    throw ConfigError(std::string("continuation classifier: fastText training failed: ") +
                      e.what());
  }
  return c;
}

double ContinuationClassifier::predict(std::string_view features) const {
  const double p = predict_uncalibrated(features);
  return impl_->isotonic.identity() ? impl_->calibration.apply(p) : impl_->isotonic.apply(p);
}

const IsotonicCalibration& ContinuationClassifier::isotonic() const {
  if (!impl_) throw Error("continuation classifier: not trained or loaded");
  return impl_->isotonic;
}

void ContinuationClassifier::set_isotonic(IsotonicCalibration c) {
  if (!impl_) throw Error("continuation classifier: not trained or loaded");
  if (!c.valid())
    throw Error(
        "continuation classifier: an isotonic map needs increasing finite x and non-decreasing y "
        "in [0, 1]");
  impl_->isotonic = std::move(c);
}

const PlattScaling& ContinuationClassifier::calibration() const {
  if (!impl_) throw Error("continuation classifier: not trained or loaded");
  return impl_->calibration;
}

void ContinuationClassifier::set_calibration(const PlattScaling& c) {
  if (!impl_) throw Error("continuation classifier: not trained or loaded");
  if (!(c.a >= 0) || !std::isfinite(c.a) || !std::isfinite(c.b))
    throw Error("continuation classifier: a Platt map needs a finite a >= 0 and a finite b");
  impl_->calibration = c;
}

double ContinuationClassifier::predict_uncalibrated(std::string_view features) const {
  if (!impl_) throw Error("continuation classifier: not trained or loaded");
  std::string line(features);
  line += '\n';
  std::istringstream in(line);
  std::vector<std::pair<fasttext::real, std::string>> out;
  impl_->model.predictLine(in, out, 2, 0.0);
  double p0 = 0, p1 = 0;
  for (auto& [prob, label] : out) {
    if (label == kLabel1) p1 = prob;
    if (label == kLabel0) p0 = prob;
  }
  if (!(p0 + p1 > 0)) return impl_->base_rate;  // no feature known to the model
  return std::clamp(p1 / (p0 + p1), 0.0, 1.0);
}

double ContinuationClassifier::predict(std::span<const std::string> prompts, uint32_t turn,
                                       int64_t previous_answer_chars, double turn_quantile) const {
  if (!impl_) throw Error("continuation classifier: not trained or loaded");
  return predict(
      continuation_features(prompts, turn, impl_->features, previous_answer_chars, turn_quantile));
}

const ContinuationFeatureOptions& ContinuationClassifier::feature_options() const {
  if (!impl_) throw Error("continuation classifier: not trained or loaded");
  return impl_->features;
}

double ContinuationClassifier::train_base_rate() const {
  if (!impl_) throw Error("continuation classifier: not trained or loaded");
  return impl_->base_rate;
}

void ContinuationClassifier::save(const std::string& path) const {
  if (!impl_) throw Error("continuation classifier: not trained or loaded");
  try {
    impl_->model.saveModel(path);
  } catch (const std::exception& e) {
    throw ConfigError(fmt::format("cannot write continuation model '{}': {}", path, e.what()));
  }
  std::string bytes = read_all(path, "continuation model");
  const size_t model_bytes = bytes.size();
  std::string iso(16 * impl_->isotonic.x.size(), '\0');
  for (size_t i = 0; i < impl_->isotonic.x.size(); ++i) {
    put<double>(iso, 16 * i, impl_->isotonic.x[i]);
    put<double>(iso, 16 * i + 8, impl_->isotonic.y[i]);
  }
  std::string trailer(kTrailerBytes, '\0');
  put<uint64_t>(trailer, 0, model_bytes);
  put<uint32_t>(trailer, 16, impl_->features.window);
  put<uint32_t>(trailer, 20, impl_->features.max_chars);
  put<double>(trailer, 24, impl_->base_rate);
  put<double>(trailer, 32, impl_->calibration.a);
  put<double>(trailer, 40, impl_->calibration.b);
  put<uint32_t>(trailer, 48, feature_flags(impl_->features));
  put<uint32_t>(trailer, 52, uint32_t(impl_->isotonic.x.size()));
  put<uint32_t>(trailer, 56, kTrailerVersion);
  // The checksum covers the isotonic map and the trailer's fields too (a flipped bit of a map
  // would otherwise give another valid map).
  put<uint64_t>(trailer, 8, checksum(bytes + iso + trailer.substr(16, 40)));
  std::memcpy(trailer.data() + 64, kTrailerMagic, 8);
  trailer = iso + trailer;
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out.write(trailer.data(), std::streamsize(trailer.size()));
  out.close();
  if (!out) throw ConfigError("error writing continuation model '" + path + "'");
}

ContinuationClassifier ContinuationClassifier::load(const std::string& path) {
  auto bad = [&](const std::string& why) {
    return ConfigError(fmt::format("continuation model '{}': {}", path, why));
  };
  if (!std::filesystem::is_regular_file(path))
    throw bad("no such file (train one with `kvpolicy classifier train`)");
  std::string bytes = read_all(path, "continuation model");
  if (bytes.size() < kTrailerBytesV1 + 8 ||
      std::memcmp(bytes.data() + bytes.size() - 8, kTrailerMagic, 8) != 0)
    throw bad("not a kvpolicy continuation model, or truncated (no trailer)");
  const uint32_t version = get<uint32_t>(bytes, bytes.size() - 16);
  if (version < 1 || version > kTrailerVersion)
    throw bad(
        fmt::format("trailer version {}, this build reads 1 to {}", version, kTrailerVersion));
  const size_t trailer_bytes = version == 1   ? kTrailerBytesV1
                               : version == 2 ? kTrailerBytesV2
                                              : kTrailerBytes;
  if (bytes.size() < trailer_bytes + 8) throw bad("truncated (no trailer)");
  size_t t = bytes.size() - trailer_bytes;
  const std::string trailer = bytes.substr(t);
  // Version 3: the isotonic map's breakpoints (16 bytes each) before the trailer.
  const uint64_t points = version == 3 ? get<uint32_t>(trailer, 52) : 0;
  if (points > t / 16) throw bad("corrupt (size mismatch)");
  t -= 16 * points;
  if (get<uint64_t>(trailer, 0) != t) throw bad("corrupt (size mismatch)");
  const std::string iso = bytes.substr(t, 16 * points);
  bytes.resize(t);
  const std::string summed = version == 1   ? bytes
                             : version == 2 ? bytes + trailer.substr(16, 32) + trailer.substr(52, 4)
                                            : bytes + iso + trailer.substr(16, 40);
  if (checksum(summed) != get<uint64_t>(trailer, 8)) throw bad("corrupt (checksum mismatch)");
  if (get<int32_t>(bytes, 0) != kFastTextMagic || get<int32_t>(bytes, 4) != kFastTextVersion)
    throw bad("not a fastText 0.9 model inside");
  ContinuationClassifier c;
  c.impl_ = std::make_unique<Impl>();
  c.impl_->features.window = get<uint32_t>(trailer, 16);
  c.impl_->features.max_chars = get<uint32_t>(trailer, 20);
  c.impl_->base_rate = get<double>(trailer, 24);
  if (version >= 2) {
    c.impl_->calibration.a = get<double>(trailer, 32);
    c.impl_->calibration.b = get<double>(trailer, 40);
    const uint32_t flags = get<uint32_t>(trailer, version == 2 ? 52 : 48);
    if (flags & ~(version == 2 ? 3u : kKnownFlags))
      throw bad("corrupt trailer (unknown feature flags)");
    c.impl_->features.turn_token = !(flags & 1);
    c.impl_->features.answer_length = (flags & 2) != 0;
    c.impl_->features.turn_quantile = (flags & 4) != 0;
  }
  for (uint64_t i = 0; i < points; ++i) {
    c.impl_->isotonic.x.push_back(get<double>(iso, 16 * i));
    c.impl_->isotonic.y.push_back(get<double>(iso, 16 * i + 8));
  }
  if (!c.impl_->isotonic.valid()) throw bad("corrupt trailer (isotonic map)");
  const PlattScaling& cal = c.impl_->calibration;
  if (c.impl_->features.window == 0 || c.impl_->features.max_chars == 0 ||
      !(c.impl_->base_rate >= 0 && c.impl_->base_rate <= 1) || !(cal.a >= 0) ||
      !std::isfinite(cal.a) || !std::isfinite(cal.b))
    throw bad("corrupt trailer");
  try {
    c.impl_->model.loadModel(path);  // reads the model and stops before the trailer
  } catch (const std::exception& e) {
    throw bad(std::string("fastText cannot read it: ") + e.what());
  }
  auto dict = c.impl_->model.getDictionary();
  if (c.impl_->model.getArgs().model != fasttext::model_name::sup || dict->nlabels() != 2)
    throw bad("not a 2-label supervised fastText model");
  for (int32_t l = 0; l < 2; ++l)
    if (dict->getLabel(l) != kLabel0 && dict->getLabel(l) != kLabel1)
      throw bad("unexpected label '" + dict->getLabel(l) + "'");
  return c;
}

}  // namespace kvpolicy
