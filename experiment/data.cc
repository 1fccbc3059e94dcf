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
constexpr char kCacheMagic[] = "gbasim synthetic data, format 1\n";

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

template <class T>
void put(std::ostream& out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.write(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <class T>
void put(std::ostream& out, const std::vector<T>& values) {
  put(out, static_cast<uint64_t>(values.size()));
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(T)));
}

// Reads what put() wrote; false once the file runs out or a size is absurd.
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
    return true;
  }
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
};

void put_dataset(std::ostream& out, const Dataset& d) {
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
         d.ids.size() == d.labels.size() * static_cast<size_t>(d.num_fields) &&
         d.dense.size() == d.labels.size() * static_cast<size_t>(d.num_dense);
}

bool read_cached(const std::string& path, const std::string& header, SyntheticData& d) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  Reader reader(in);
  std::string found(header.size(), '\0');
  return reader.get(found.data(), found.size()) && found == header &&
         get_dataset(reader, d.train) && get_dataset(reader, d.test) && reader.get(d.bias) &&
         reader.get(d.bayes_auc) && reader.at_end();
}

// Written beside `path` and renamed into place, so that a reader never sees half a file.
void write_cached(const std::string& path, const std::string& header, const SyntheticData& d) {
  const std::string temporary = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    put_dataset(out, d.train);
    put_dataset(out, d.test);
    put(out, d.bias);
    put(out, d.bayes_auc);
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
  if (read_cached(path, header, d)) return d;
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
    CriteoFile file = read_criteo(o.criteo_path, o.criteo);
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
