// The spec reader and its checks (experiment/spec.h): each bad value is refused with the file,
// the key and what is wrong, a section at a time; a spec written back reads the same.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "experiment/spec.h"

namespace gbasim {
namespace {

using Json = nlohmann::json;

// A small spec, as the tests' other specs, with `patch` merged over it.
Json small(const Json& patch) {
  Json doc = Json::parse(R"({"data": {"train_samples": 4000, "test_samples": 500},
    "model": {"name": "fm", "embedding_dim": 4},
    "training": {"workers": 3, "local_batch": 50}, "evaluation": {"interval_s": 0.01}})");
  doc.merge_patch(patch);
  return doc;
}

// The message parse_spec refuses `patch` with ("" when it reads it).
std::string refusal(const Json& patch) {
  try {
    parse_spec(small(patch), "spec.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

struct Case {
  const char* patch;
  const char* message;
};

class Refused : public ::testing::TestWithParam<Case> {};

TEST_P(Refused, WithTheFileTheKeyAndWhatIsWrong) {
  const Case c = GetParam();
  EXPECT_EQ(refusal(Json::parse(c.patch)), std::string("spec.json: ") + c.message) << c.patch;
}

INSTANTIATE_TEST_SUITE_P(
    Sections, Refused,
    ::testing::Values(
        // The schema: keys and types.
        Case{R"({"training": {"wrkers": 3}})", "unknown key 'training.wrkers'"},
        Case{R"({"training": {"workers": "x"}})", "'training.workers' must be an integer"},
        Case{R"({"training": {"mode": "fast"}})",
             "'training.mode' must be \"sync\", \"async\", \"gba\", \"ssp\" or \"backup\", not "
             "'fast'"},
        // The pools, before the rules divide by them.
        Case{R"({"cluster": {"pools": [{"workers": 2, "local_batch": 0}]}})",
             "'cluster.pools[0].local_batch' must be at least 1"},
        // The cluster's ranges and the server model.
        Case{R"({"cluster": {"ps_shards": 0}})", "'cluster.ps_shards' must lie in [1, 4096]"},
        Case{R"({"cluster": {"nic_bandwidth": 1}})",
             "'cluster.nic_bandwidth' must lie in [1000, 1e+13], not 1"},
        Case{R"({"cluster": {"server_model": "one_queue", "ps_shards": 2}})",
             "'cluster.server_model' one_queue needs cluster.ps_shards = 1"},
        // A topology's settings with another topology.
        Case{R"({"cluster": {"torus": {"dimensions": [2, 2]}}})",
             "'cluster.torus.dimensions' is for cluster.topology \"torus\", and the topology is "
             "\"star\" (it would be ignored)"},
        Case{R"({"cluster": {"dragonfly": {"routers": [3, 1]}}})",
             "'cluster.dragonfly.routers' is for cluster.topology \"dragonfly\", and the topology "
             "is \"star\" (it would be ignored)"},
        // Learning: evaluation, optimizer.
        Case{R"({"evaluation": {"interval_s": 0}})", "'evaluation.interval_s' must be positive"},
        Case{R"({"optimizer": {"beta1": 1}})", "'optimizer.beta1' must lie in [0, 1)"},
        // The data against the global batch.
        Case{R"({"data": {"train_samples": 100}})",
             "'data.train_samples' (100) must hold at least one global batch (3 workers x 50 = "
             "150)"}));

TEST(Spec, TheSmallSpecIsRead) { EXPECT_EQ(refusal(Json::object()), ""); }

// JSON has one kind of number: a key that takes an integer takes a whole number written as a
// float, in a value or a list; a number that is not whole is still refused.
TEST(Spec, WholeNumbersWrittenAsFloatsAreIntegers) {
  const ExperimentSpec spec =
      parse_spec(small(Json::parse(R"({"training": {"workers": 4.0}, "budget": {"max_samples": 2e3},
                            "cluster": {"topology": "torus", "torus": {"dimensions": [3.0, 2]}}})")),
                 "spec.json");
  EXPECT_EQ(spec.training.num_workers, 4);
  EXPECT_EQ(spec.budget.max_samples, 2000);
  EXPECT_EQ(spec.cluster.torus.dimensions, (std::vector<int>{3, 2}));
  EXPECT_EQ(spec_to_json(spec)["training"]["workers"].dump(), "4");
  EXPECT_EQ(refusal(Json::parse(R"({"training": {"workers": 4.5}})")),
            "spec.json: 'training.workers' must be an integer");
  EXPECT_EQ(refusal(Json::parse(R"({"cluster": {"topology": "torus",
                                                "torus": {"dimensions": [2.5, 2]}}})")),
            "spec.json: 'cluster.torus.dimensions' must be a list of integers");
  EXPECT_EQ(refusal(Json::parse(R"({"training": {"workers": 1e30}})")),
            "spec.json: 'training.workers' must be an integer");
}

TEST(Spec, ASpecWrittenBackReadsTheSame) {
  const ExperimentSpec spec = parse_spec(small(Json::parse(
                                             R"({"training": {"mode": "gba"},
                                                 "cluster": {"topology": "fat_tree"}})")),
                                         "spec.json");
  const nlohmann::ordered_json written = spec_to_json(spec);
  const ExperimentSpec again = parse_spec(Json::parse(written.dump()), "written");
  EXPECT_EQ(spec_to_json(again), written);
  EXPECT_EQ(written["training"]["mode"], "gba");
  EXPECT_EQ(written["cluster"]["topology"], "fat_tree");
}

}  // namespace
}  // namespace gbasim
