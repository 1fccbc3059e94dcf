#include "study/sweep.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "base/error.h"

namespace gbasim {
namespace {

class SweepFiles : public ::testing::Test {
 protected:
  // A folder of this process's own: CTest runs these tests in parallel processes, which
  // would otherwise write the same file names at once.
  void SetUp() override {
    dir_ = testing::TempDir() + "gbasim_sweep_plan_" + std::to_string(getpid()) + "/";
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "plan_base.json")
        << R"({"data": {"train_samples": 1000, "test_samples": 100}, "training": {"workers": 2}})";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& text) {
    const std::string path = dir_ + "plan_sweep_" + std::to_string(++count_) + ".json";
    std::ofstream(path) << text;
    return path;
  }
  std::string error_of(const std::string& text) {
    try {
      plan_sweep(load_sweep(write(text)));
    } catch (const InputError& e) {
      const std::string message = e.what();
      return message.substr(message.find(".json") + 5);
    }
    return "no error";
  }
  std::string dir_;
  int count_ = 0;
};

TEST_F(SweepFiles, PlansTheFirstAxisSlowestAndSeedsFastest) {
  const SweepSpec sweep = load_sweep(write(R"({"base": "plan_base.json",
      "set": {"training.local_batch": 32, "stragglers.trace.mapping": "in_order"},
      "axes": {"training.mode": ["sync", "gba"], "training.gba.iota": [1, 3]},
      "seeds": [5, 6]})"));
  const std::vector<SweepPoint> points = plan_sweep(sweep);
  ASSERT_EQ(points.size(), 8u);
  EXPECT_EQ(points[0].name, "mode-sync_iota-1_seed-5");
  EXPECT_EQ(points[1].name, "mode-sync_iota-1_seed-6");
  EXPECT_EQ(points[2].name, "mode-sync_iota-3_seed-5");
  EXPECT_EQ(points[7].name, "mode-gba_iota-3_seed-6");
  EXPECT_EQ(points[7].spec.training.mode, Mode::kGBA);
  EXPECT_EQ(points[7].spec.training.gba.iota, 3);
  EXPECT_EQ(points[7].spec.training.local_batch, 32);
  EXPECT_EQ(points[7].spec.seed, 6u);
  EXPECT_EQ(points[0].overrides, (std::vector<std::string>{
                                     "training.local_batch=32", "stragglers.trace.mapping=in_order",
                                     "training.mode=sync", "training.gba.iota=1", "seed=5"}));
}

// Two values that name alike once file-name safe once overwrote each other's result.
TEST_F(SweepFiles, PointNamesNeverCollideAndStayShort) {
  const std::string long_value(300, 'x');
  const SweepSpec sweep = load_sweep(write(R"({"base": "plan_base.json",
      "axes": {"data.criteo_path": ["a b", "a-b", "c", ")" + long_value + R"("]}})"));
  const std::vector<SweepPoint> points = plan_sweep(sweep);
  ASSERT_EQ(points.size(), 4u);
  std::set<std::string> names;
  for (const auto& p : points) {
    names.insert(p.name);
    EXPECT_LE(p.name.size(), 200u) << p.name;
  }
  EXPECT_EQ(names.size(), 4u);
  EXPECT_EQ(points[2].name, "criteo_path-c");  // a name of its own stays readable
  EXPECT_NE(points[0].name, points[1].name);
  EXPECT_EQ(points[0].name.rfind("criteo_path-a-b~", 0), 0u) << points[0].name;
  EXPECT_EQ(plan_sweep(sweep)[0].name, points[0].name);  // the same on every plan (resumable)
}

TEST_F(SweepFiles, ListValuesNameReadablyAndStringsStayStrings) {
  const SweepSpec sweep = load_sweep(write(R"({"base": "plan_base.json",
      "axes": {"training.switching.at_steps": [[], [[20, "gba"]]],
               "data.criteo_path": ["true"]}})"));
  const std::vector<SweepPoint> points = plan_sweep(sweep);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].name, "at_steps-none_criteo_path-true");
  EXPECT_EQ(points[1].name, "at_steps-20-gba_criteo_path-true");
  EXPECT_EQ(points[1].spec.switching.at_steps.at(0).second, "gba");
  EXPECT_EQ(points[1].spec.data.criteo_path, "true");  // not the JSON value true
  EXPECT_EQ(name_part(nlohmann::json("a/b c")), "a-b-c");
  EXPECT_EQ(name_part(nlohmann::json(0.25)), "0.25");
}

TEST_F(SweepFiles, AxesSharingALastKeyPartAreNamedInFull) {
  const SweepSpec sweep = load_sweep(write(R"({"base": "plan_base.json",
      "axes": {"stragglers.noise_cv": [0.1], "other.noise_cv": [0.2]}})"));
  EXPECT_THROW(plan_sweep(sweep), InputError);  // "other" is no spec section
  const SweepSpec fine =
      load_sweep(write(R"({"base": "plan_base.json", "axes": {"seed": [3], "data.seed": [4]}})"));
  EXPECT_EQ(plan_sweep(fine)[0].name, "seed-3_data.seed-4");
}

TEST_F(SweepFiles, BadSweepsNameTheKey) {
  EXPECT_EQ(error_of(R"({"base": "plan_base.json", "axes": {"training.mode": ["sync"]}, "x": 1})"),
            ": unknown key 'x' (expected base, set, axes, seeds, description, slurm)");
  EXPECT_EQ(error_of(R"({"axes": {"training.mode": ["sync"]}})"), ": 'base' is required");
  const std::string axes = R"("base": "plan_base.json", "axes": {"training.mode": ["sync"]})";
  EXPECT_EQ(error_of("{" + axes + R"(, "slurm": {"queue": "x"}})"),
            ": unknown key 'slurm.queue' (expected partition, account, time, mem, options, "
            "points_per_task)");
  EXPECT_EQ(error_of("{" + axes + R"(, "slurm": {"time": 30}})"),
            ": 'slurm.time' must be a non-empty string");
  EXPECT_EQ(error_of("{" + axes + R"(, "slurm": {"points_per_task": 0}})"),
            ": 'slurm.points_per_task' must be an integer in [1, 100000]");
  EXPECT_EQ(error_of("{" + axes + R"(, "slurm": {"options": "--qos=low"}})"),
            ": 'slurm.options' must be a list of sbatch arguments");
  EXPECT_EQ(error_of("{" + axes + R"(, "slurm": [1]})"),
            ": 'slurm' must be an object (docs/sweep.md, \"On a cluster\")");
  const SweepSpec with_slurm = load_sweep(write("{" + axes + R"(, "slurm": {"partition": "gpu",
      "time": "30:00", "options": ["--qos=low"], "points_per_task": 3}})"));
  EXPECT_EQ(with_slurm.slurm.partition, "gpu");
  EXPECT_EQ(with_slurm.slurm.time, "30:00");
  EXPECT_EQ(with_slurm.slurm.options, std::vector<std::string>{"--qos=low"});
  EXPECT_EQ(with_slurm.slurm.points_per_task, 3);
  EXPECT_EQ(error_of(R"({"base": "plan_base.json", "axes": {}})"),
            ": 'axes' must list at least one spec key and its values");
  EXPECT_EQ(error_of(R"({"base": "plan_base.json", "axes": [1]})"),
            ": 'axes' must be an object: spec key -> list of values");
  EXPECT_EQ(error_of(R"({"base": "plan_base.json", "axes": {"training.gba.iota": [1, 1.0]}})"),
            ": 'axes.training.gba.iota' lists the value 1.0 twice");
  // A key given in two places: the point would be named after one value and run the other.
  EXPECT_EQ(error_of(R"({"base": "plan_base.json", "axes": {"seed": [2]}, "seeds": [1]})"),
            ": 'seeds' sets what axes.seed sets too: give each spec key in one place");
  EXPECT_EQ(error_of(R"({"base": "plan_base.json",
                         "axes": {"training": [{"mode": "gba"}], "training.mode": ["sync"]}})"),
            ": 'axes.training.mode' sets what axes.training sets too: give each spec key in one "
            "place");
  EXPECT_EQ(error_of(R"({"base": "plan_base.json", "set": {"training.mode": "gba"},
                         "axes": {"training.mode": ["sync"]}})"),
            ": 'axes.training.mode' sets what set.training.mode sets too: give each spec key in "
            "one place");
  EXPECT_EQ(error_of(R"({"base": "plan_base.json", "axes": {"training.mode": []}})"),
            ": 'axes.training.mode' must be a non-empty list of values");
  EXPECT_EQ(error_of(R"({"base": "plan_base.json", "axes": {"training.mode": ["sync"]},
                         "seeds": [-1]})"),
            ": 'seeds' must list non-negative integers");
  const std::string bad =
      error_of(R"({"base": "plan_base.json", "axes": {"training.workers": [0]}})");
  EXPECT_NE(bad.find("point training.workers=0: "), std::string::npos) << bad;
  EXPECT_NE(bad.find("'training.workers'"), std::string::npos) << bad;
  EXPECT_EQ(error_of("{"), ": not valid JSON");
}

TEST(SweepSummary, CsvCellsAreQuotedWhenNeeded) {
  EXPECT_EQ(csv_line({"a", "b,c", "say \"hi\""}), "a,\"b,c\",\"say \"\"hi\"\"\"\n");
}

}  // namespace
}  // namespace gbasim
