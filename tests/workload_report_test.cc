// gbasim workload's bounds on a server-mode round (sim/workload_report.h) against hand counts.
#include "sim/workload_report.h"

#include <gtest/gtest.h>

namespace gbasim {
namespace {

ExperimentSpec cluster(int workers, int shards, int gpus_per_node, int nics_per_node) {
  ExperimentSpec spec;
  spec.training.num_workers = workers;
  spec.cluster.ps_shards = shards;
  spec.cluster.nic_bandwidth = 1e9;
  spec.cluster.gpu_node.gpus_per_node = gpus_per_node;
  spec.cluster.gpu_node.nics_per_node = nics_per_node;
  return spec;
}

StepBytes bytes(double request, double pull, double push) {
  return {.request_per_shard = request, .pull_per_shard = pull, .push_per_shard = push};
}

TEST(RoundBounds, CountTheBusierDirectionOfEachSplitDuplexLink) {
  // 8 workers on 2 nodes of 4 with 2 NICs; 2 shards. In: 100 + 1,200 B a shard; out: 1,000 B.
  const Round r = round_bounds(cluster(8, 2, 4, 2), bytes(100, 1000, 1200));
  EXPECT_DOUBLE_EQ(r.shard_links_s, 8 * 1300 / 1e9);
  EXPECT_DOUBLE_EQ(r.shard_links_serial_s, 8 * 2300 / 1e9);
  EXPECT_DOUBLE_EQ(r.node_link_bandwidth, 2e9);
  EXPECT_DOUBLE_EQ(r.node_links_s, 4 * 2 * 1300 / 2e9);  // 4 workers, each to 2 shards
  EXPECT_DOUBLE_EQ(r.node_links_serial_s, 4 * 2 * 2300 / 2e9);
}

TEST(RoundBounds, PullsBindWhenTheyAreTheLargerDirection) {
  const Round r = round_bounds(cluster(8, 2, 4, 2), bytes(10, 5000, 1000));
  EXPECT_DOUBLE_EQ(r.shard_links_s, 8 * 5000 / 1e9);
  EXPECT_DOUBLE_EQ(r.shard_links_serial_s, 8 * 6010 / 1e9);
}

TEST(RoundBounds, AWorkerOfItsOwnHasOneNicWhateverNicsPerNodeSays) {
  // gpus_per_node 1: every worker a host with one NIC (sim/cluster.cc); nics_per_node is for
  // GPU nodes only.
  const Round r = round_bounds(cluster(8, 4, 1, 2), bytes(0, 1000, 1000));
  EXPECT_DOUBLE_EQ(r.node_link_bandwidth, 1e9);
  EXPECT_DOUBLE_EQ(r.node_links_s, 1 * 4 * 1000 / 1e9);
}

}  // namespace
}  // namespace gbasim
