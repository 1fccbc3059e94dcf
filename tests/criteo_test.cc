#include "models/criteo.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "base/error.h"

namespace gbasim {
namespace {

// A Criteo line from a label, 13 integer texts and 26 categorical texts.
std::string line(const std::string& label, std::vector<std::string> ints,
                 std::vector<std::string> cats) {
  ints.resize(kCriteoDense);
  cats.resize(kCriteoFields);
  std::string s = label;
  for (const auto& v : ints) s.append("\t").append(v);
  for (const auto& v : cats) s.append("\t").append(v);
  return s + "\n";
}

CriteoFile parse(const std::string& text, CriteoOptions options = {}) {
  std::istringstream in(text);
  return parse_criteo(in, "day_0.tsv", options);
}

std::string error_of(const std::string& text, CriteoOptions options = {}) {
  try {
    parse(text, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Criteo, ParsesValuesMissingOnesAndNegatives) {
  const CriteoFile f = parse(line("1", {"0", "3", "", "-2"}, {"68fd1e64", "", "0"}) +
                             line("0", {"7"}, {"68fd1e64"}));
  ASSERT_EQ(f.data.size(), 2);
  EXPECT_EQ(f.data.labels, (std::vector<float>{1, 0}));
  EXPECT_FLOAT_EQ(f.data.dense[0], 0.0f);
  EXPECT_FLOAT_EQ(f.data.dense[1], std::log1p(3.0f));
  EXPECT_FLOAT_EQ(f.data.dense[2], 0.0f);
  EXPECT_FLOAT_EQ(f.data.dense[3], -std::log1p(2.0f));
  EXPECT_FLOAT_EQ(f.data.dense[kCriteoDense], std::log1p(7.0f));
  const int32_t* ids = f.data.ids.data();
  EXPECT_EQ(ids[0], criteo_hash(0x68fd1e64, 0, 100'000));
  EXPECT_EQ(ids[0], ids[kCriteoFields]) << "the same value in the same field, the same row";
  EXPECT_EQ(ids[1], 0) << "missing values take row 0";
  EXPECT_NE(ids[2], 0) << "the value 0 is not missing";
  for (int32_t id : f.data.ids) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 100'000);
  }
}

TEST(Criteo, HashSpreadsOverTheTableAndDependsOnTheField) {
  EXPECT_NE(criteo_hash(42, 0, 1000), criteo_hash(42, 1, 1000));
  std::vector<int> hits(16, 0);
  for (uint64_t v = 0; v < 16'000; ++v) ++hits[criteo_hash(v, 3, 17) - 1];
  for (int h : hits) EXPECT_NEAR(h, 1000, 150);
}

TEST(Criteo, MalformedLinesNameTheFileAndLine) {
  const std::string good = line("0", {"1"}, {"a"});
  EXPECT_EQ(error_of(good + "1\t2\t3\n"),
            "day_0.tsv:2: expected 40 tab-separated columns, found 3");
  EXPECT_EQ(error_of(good + good + line("2", {}, {})),
            "day_0.tsv:3: label must be 0 or 1, found '2'");
  EXPECT_EQ(error_of(line("1", {"1", "x7"}, {})),
            "day_0.tsv:1: integer feature I2 is not an integer: 'x7'");
  EXPECT_EQ(error_of(line("1", {}, {"", "", "zz"})),
            "day_0.tsv:1: categorical feature C3 is not hexadecimal: 'zz'");
  EXPECT_EQ(error_of(""), "day_0.tsv: no samples");
}

TEST(Criteo, SkipsAndCountsBadLinesWhenAsked) {
  CriteoOptions options;
  options.skip_bad_lines = true;
  const std::string good = line("1", {"5"}, {"ff"});
  const CriteoFile f = parse(good + "garbage\n" + good + line("1", {"1.5"}, {}), options);
  EXPECT_EQ(f.data.size(), 2);
  EXPECT_EQ(f.bad_lines, 2);
}

TEST(Criteo, AcceptsWindowsLineEndsAndStopsAtMaxSamples) {
  std::string good = line("1", {"5"}, {"ff"});
  good.back() = '\r';
  good.push_back('\n');
  CriteoOptions options;
  options.max_samples = 2;
  EXPECT_EQ(parse(good + good + good, options).data.size(), 2);
}

TEST(Criteo, MissingFileIsAnError) {
  try {
    read_criteo("/nonexistent/train.txt", {});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/train.txt: cannot open the data file");
  }
}

}  // namespace
}  // namespace gbasim
