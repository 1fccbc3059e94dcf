// Reader of the Criteo display-advertising format: one sample a line, tab-separated
// label, 13 integer features and 26 hexadecimal categorical features, any feature empty.
#pragma once

#include <cstdint>
#include <istream>
#include <string>

#include "models/dataset.h"

namespace gbasim {

constexpr int kCriteoDense = 13;
constexpr int kCriteoFields = 26;

struct CriteoOptions {
  // Rows of each field's hashed embedding table. Row 0 holds the missing value; other
  // values hash into rows 1 .. table_size - 1.
  int64_t table_size = 100'000;
  bool skip_bad_lines = false;  // count malformed lines instead of failing on the first
  int64_t max_samples = -1;     // stop after this many samples; -1 reads everything
};

struct CriteoFile {
  Dataset data;
  int64_t bad_lines = 0;  // malformed lines skipped (only with skip_bad_lines)
};

// Integer feature x becomes sign(x) log(1 + |x|); an empty one becomes 0. Throws
// InputError naming `name` and the line of the first malformed line, unless skipping.
CriteoFile parse_criteo(std::istream& in, const std::string& name, const CriteoOptions& options);
CriteoFile read_criteo(const std::string& path, const CriteoOptions& options);

// The table row of categorical value `value` (already parsed from hex) in `field`.
int32_t criteo_hash(uint64_t value, int field, int64_t table_size);

}  // namespace gbasim
