#include "experiment/data.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <type_traits>

#include <unistd.h>

#include "base/error.h"

namespace gbasim {

namespace {

// The synthetic data cache (GBASIM_DATA_CACHE): a generated data set is a pure function of
// its configuration and of the program that generated it (the build's rounding included), so
// it is stored under a key made of both and read back instead of generated again.
// Format 2 ends with a checksum of everything after the header (format 1 had none, so a
// damaged file was used without a word).
constexpr char kCacheMagic[] = "gbasim synthetic data, format 2\n";

uint64_t fnv1a(const char* data, size_t n, uint64_t hash = 14695981039346656037ull) {
  for (size_t i = 0; i < n; ++i) hash = (hash ^ static_cast<unsigned char>(data[i])) * 1099511628211ull;
  return hash;
}

// A hash of this program's own file: any rebuild (a change to the generator, another
// instruction set) gives another key. 0 where the file cannot be read (no cache then).
uint64_t program_hash() {
  static const uint64_t hash = [] {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    if (!in) return uint64_t{0};
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return in.bad() || bytes.empty() ? uint64_t{0} : fnv1a(bytes.data(), bytes.size());
  }();
  return hash;
}

// The checksum of the cache's contents: each piece written (a value, or a whole array) hashed
// 8 bytes at a time, then folded into the running sum with its length. Reader and writer cut
// the same pieces, so they compute the same sum.
uint64_t fold(uint64_t sum, const char* data, size_t n) {
  uint64_t piece = 14695981039346656037ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);
    piece = (piece ^ word) * 1099511628211ull;
  }
  piece = fnv1a(data + i, n - i, piece);
  return ((sum ^ piece) * 1099511628211ull) ^ n;
}

// Writes pieces and keeps their checksum.
struct Writer {
  std::ostream& out;
  uint64_t sum = 0;
  void write(const char* data, size_t n) {
    out.write(data, static_cast<std::streamsize>(n));
    sum = fold(sum, data, n);
  }
};

template <class T>
void put(Writer& out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.write(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <class T>
void put(Writer& out, const std::vector<T>& values) {
  put(out, static_cast<uint64_t>(values.size()));
  out.write(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// Reads what put() wrote and sums it as Writer did; false once the file runs out or a size is
// absurd.
class Reader {
 public:
  explicit Reader(std::ifstream& in) : in_(in) {
    in_.seekg(0, std::ios::end);
    left_ = in_ ? static_cast<uint64_t>(in_.tellg()) : 0;
    in_.seekg(0);
  }
  bool get(char* data, uint64_t n) {
    if (n > left_ || !in_.read(data, static_cast<std::streamsize>(n))) return false;
    left_ -= n;
    sum_ = fold(sum_, data, n);
    return true;
  }
  // The sum of what was read so far; the header's is not counted.
  uint64_t sum() const { return sum_; }
  void restart_sum() { sum_ = 0; }
  template <class T>
  bool get(T& value) {
    return get(reinterpret_cast<char*>(&value), sizeof(T));
  }
  template <class T>
  bool get(std::vector<T>& values) {
    uint64_t n = 0;
    if (!get(n) || n > left_ / sizeof(T)) return false;
    values.resize(n);
    return get(reinterpret_cast<char*>(values.data()), n * sizeof(T));
  }
  bool at_end() const { return left_ == 0; }

 private:
  std::ifstream& in_;
  uint64_t left_ = 0;
  uint64_t sum_ = 0;
};

void put_dataset(Writer& out, const Dataset& d) {
  put(out, d.num_fields);
  put(out, d.num_dense);
  put(out, d.cardinalities);
  put(out, d.ids);
  put(out, d.dense);
  put(out, d.labels);
  put(out, d.true_prob);
}

bool get_dataset(Reader& in, Dataset& d) {
  return in.get(d.num_fields) && in.get(d.num_dense) && in.get(d.cardinalities) &&
         in.get(d.ids) && in.get(d.dense) && in.get(d.labels) && in.get(d.true_prob) &&
         d.num_fields >= 0 && d.cardinalities.size() == static_cast<size_t>(d.num_fields) &&
         d.ids.size() == d.labels.size() * static_cast<size_t>(d.num_fields) &&
         d.dense.size() == d.labels.size() * static_cast<size_t>(d.num_dense);
}

// Whether every id lies within its field's table: a model indexes its tables with them.
bool ids_in_range(const Dataset& d) {
  const size_t fields = static_cast<size_t>(d.num_fields);
  for (size_t i = 0; i < d.ids.size(); ++i) {
    const auto id = d.ids[i];
    if (id < 0 || static_cast<int64_t>(id) >= static_cast<int64_t>(d.cardinalities[i % fields]))
      return false;
  }
  return true;
}

enum class Cached { kMissing, kRead, kDamaged };

// A cache file of another key (another configuration or program) is missing for this one; a
// file of this key that is cut short, fails its checksum or holds ids outside their tables
// is damaged.
Cached read_cached(const std::string& path, const std::string& header, SyntheticData& d) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Cached::kMissing;
  if (!std::filesystem::is_regular_file(path, ec)) return Cached::kDamaged;  // a pipe would block
  std::ifstream in(path, std::ios::binary);
  if (!in) return Cached::kMissing;
  Reader reader(in);
  std::string found(header.size(), '\0');
  const std::string magic = kCacheMagic;
  if (!reader.get(found.data(), found.size()))  // shorter than a header: emptied or cut
    return Cached::kDamaged;
  if (found.compare(0, magic.size(), magic) != 0) return Cached::kDamaged;
  if (found != header) return Cached::kMissing;
  reader.restart_sum();
  uint64_t stored = 0;
  const bool whole = get_dataset(reader, d.train) && get_dataset(reader, d.test) &&
                     reader.get(d.bias) && reader.get(d.bayes_auc);
  const uint64_t sum = reader.sum();
  return whole && reader.get(stored) && reader.at_end() && stored == sum &&
                 ids_in_range(d.train) && ids_in_range(d.test)
             ? Cached::kRead
             : Cached::kDamaged;
}

// Written beside `path` and renamed into place, so that a reader never sees half a file.
void write_cached(const std::string& path, const std::string& header, const SyntheticData& d) {
  const std::string temporary = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    Writer writer{out};
    put_dataset(writer, d.train);
    put_dataset(writer, d.test);
    put(writer, d.bias);
    put(writer, d.bayes_auc);
    const uint64_t sum = writer.sum;
    out.write(reinterpret_cast<const char*>(&sum), sizeof sum);
    out.close();
    if (out && std::rename(temporary.c_str(), path.c_str()) == 0) return;
  }
  std::remove(temporary.c_str());
  std::fprintf(stderr, "gbasim: warning: the data cache (GBASIM_DATA_CACHE) could not be written: %s\n",
               path.c_str());
}

// The synthetic data of `config` from the cache folder `dir`, or generated (and then stored
// there). A cache file that is missing, of another key or damaged is generated again; one
// that cannot be written is reported and skipped: the cache only ever saves time.
SyntheticData cached_synthetic(const SyntheticConfig& config, const std::string& key_text,
                               const std::string& dir) {
  const uint64_t program = program_hash();
  if (program == 0) return generate_synthetic(config);
  const std::string key = key_text + "\nprogram " + std::to_string(program) + "\n";
  char name[32];
  std::snprintf(name, sizeof(name), "synthetic-%016llx.bin",
                static_cast<unsigned long long>(fnv1a(key.data(), key.size())));
  const std::string path = dir + "/" + name;
  const std::string header = kCacheMagic + key;
  SyntheticData d;
  const Cached cached = read_cached(path, header, d);
  if (cached == Cached::kRead) return d;
  if (cached == Cached::kDamaged) {
    std::fprintf(stderr,
                 "gbasim: warning: the data cache file %s (GBASIM_DATA_CACHE) is damaged (cut short, a checksum "
                 "that does not match, or ids outside their tables); generating the data "
                 "again and replacing it\n",
                 path.c_str());
  }
  d = generate_synthetic(config);
  std::error_code ignored;
  std::filesystem::create_directories(dir, ignored);
  write_cached(path, header, d);
  return d;
}

}  // namespace

LoadedData load_data(const DataOptions& o) {
  LoadedData out;
  if (o.criteo_path.empty()) {
    const SyntheticConfig& s = o.synthetic;
    out.description = {{"source", "synthetic"},
                       {"train_samples", s.train_samples},
                       {"test_samples", s.test_samples},
                       {"fields", s.num_fields},
                       {"dense", s.num_dense},
                       {"min_cardinality", s.min_cardinality},
                       {"max_cardinality", s.max_cardinality},
                       {"zipf_exponent", s.zipf_exponent},
                       {"target_ctr", s.target_ctr},
                       {"linear_std", s.linear_std},
                       {"dense_std", s.dense_std},
                       {"interaction_std", s.interaction_std},
                       {"mlp_std", s.mlp_std},
                       {"nonlinear_max_cardinality", s.nonlinear_max_cardinality},
                       {"interaction_fields", s.interaction_fields},
                       {"teacher_dim", s.teacher_dim},
                       {"teacher_mlp_width", s.teacher_mlp_width},
                       {"label_flip", s.label_flip},
                       {"days", s.days},
                       {"day_drift", s.day_drift},
                       {"seed", s.seed}};
    // The description is the cache's key: a field added to SyntheticConfig joins it too.
    static_assert(sizeof(SyntheticConfig) == 144, "a new SyntheticConfig field joins the key");
    const char* cache = std::getenv("GBASIM_DATA_CACHE");
    SyntheticData d = cache != nullptr && *cache != '\0'
                          ? cached_synthetic(s, out.description.dump(), cache)
                          : generate_synthetic(s);
    out.train = std::move(d.train);
    out.test = std::move(d.test);
    out.bayes_auc = d.bayes_auc;
  } else {
    if (!(o.test_fraction > 0.0 && o.test_fraction < 1.0)) {
      throw InputError("--test-fraction must lie in (0, 1), got " +
                       std::to_string(o.test_fraction));
    }
    CriteoFile file;
    try {
      file = read_criteo(o.criteo_path, o.criteo);
    } catch (const InputError& e) {
      const std::string what = e.what();
      if (what.find(": cannot open") != std::string::npos ||
          what.find(": is a folder") != std::string::npos)
        throw InputError(std::string(e.what()) + " (named by " + o.path_key + ")");
      throw;
    }
    auto [train, test] = split_train_test(file.data, o.test_fraction);
    if (train.size() < 1 || test.size() < 1) {
      throw InputError(o.criteo_path + ": holds " + std::to_string(file.data.size()) +
                       " samples, too few for a training and a test set (test fraction " +
                       std::to_string(o.test_fraction) + ")");
    }
    out.train = std::move(train);
    out.test = std::move(test);
    out.description = {{"source", "criteo"},
                       {"path", o.criteo_path},
                       {"samples", file.data.size()},
                       {"bad_lines", file.bad_lines},
                       {"test_fraction", o.test_fraction},
                       {"table_size", o.criteo.table_size}};
  }
  out.description["train_ctr"] = out.train.positive_rate();
  out.description["test_ctr"] = out.test.positive_rate();
  return out;
}

}  // namespace gbasim
