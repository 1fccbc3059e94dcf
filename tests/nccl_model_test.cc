// NCCL's tuner model (sim/nccl_model.h) against numbers worked out by hand from NCCL v2.21.5-1's
// constants (results/published-collectives/nccl-constants.md).
#include "sim/nccl_model.h"

#include <gtest/gtest.h>

namespace gbasim {
namespace {

constexpr double kUs = 1e-6;
const NcclJob kOneNode{8, 1, GpuGeneration::kHopper, CpuVendor::kIntel};
const NcclJob kTwoNodes{16, 2, GpuGeneration::kHopper, CpuVendor::kIntel};

TEST(NcclModel, OneNodeLatenciesAreTheBaseAndAHopEachStep) {
  // 8 ranks on NVLink, 14 ring steps: 6.6 + 14 x 0.6 (LL), 8.4 + 14 x 3.4 (Simple); the tree's
  // chain of 7 hops up and down: 6.8 + 2 x 7 x 0.6.
  EXPECT_NEAR(nccl_latency(NcclAlgorithm::kRing, NcclProtocol::kLL, kOneNode, 1e6), 15.0 * kUs,
              1e-12);
  EXPECT_NEAR(nccl_latency(NcclAlgorithm::kRing, NcclProtocol::kSimple, kOneNode, 1e6), 56.0 * kUs,
              1e-12);
  EXPECT_NEAR(nccl_latency(NcclAlgorithm::kTree, NcclProtocol::kLL, kOneNode, 1e6), 15.2 * kUs,
              1e-12);
}

TEST(NcclModel, TheRingCrossesTheNetworkTwiceANodeAndPaysThePostOverhead) {
  // 2 nodes of 8: 30 steps, 4 of them across at 2.7 us (LL), the other 26 at max(0.6, 1.0)
  // for LL on an Intel host; Simple: 26 x max(3.4, 3.0) + 4 x 14, times the
  // plateau's 1.4 above 64 bytes a channel and rank.
  EXPECT_NEAR(nccl_latency(NcclAlgorithm::kRing, NcclProtocol::kLL, kTwoNodes, 1e6),
              (6.6 + 26 * 1.0 + 4 * 2.7) * kUs, 1e-12);
  EXPECT_NEAR(nccl_latency(NcclAlgorithm::kRing, NcclProtocol::kSimple, kTwoNodes, 1e6),
              1.4 * (8.4 + 26 * 3.4 + 4 * 14.0) * kUs, 1e-12);
  EXPECT_NEAR(nccl_latency(NcclAlgorithm::kRing, NcclProtocol::kSimple, kTwoNodes, 1024),
              (8.4 + 26 * 3.4 + 4 * 14.0) * kUs, 1e-12);
  // An AMD host's post overhead is 2 us, above LL's NVLink hop.
  const NcclJob amd{16, 2, GpuGeneration::kHopper, CpuVendor::kAmd};
  EXPECT_NEAR(nccl_latency(NcclAlgorithm::kRing, NcclProtocol::kLL, amd, 1e6),
              (6.6 + 26 * 2.0 + 4 * 2.7) * kUs, 1e-12);
}

TEST(NcclModel, ProtocolsDeliverTheirShareOfTheLinks) {
  EXPECT_DOUBLE_EQ(nccl_efficiency(NcclAlgorithm::kRing, NcclProtocol::kLL, kTwoNodes, 1e9), 0.5);
  EXPECT_DOUBLE_EQ(nccl_efficiency(NcclAlgorithm::kRing, NcclProtocol::kLL128, kTwoNodes, 1e9),
                   0.92);
  EXPECT_DOUBLE_EQ(nccl_efficiency(NcclAlgorithm::kRing, NcclProtocol::kSimple, kTwoNodes, 1e9),
                   1.0);
  // The tree: 0.92, then by size: 1 MiB is 2^14 lines of 64 bytes, where Simple's correction
  // is 0.5; from 512 MiB (2^23 lines) on there is none.
  EXPECT_DOUBLE_EQ(nccl_efficiency(NcclAlgorithm::kTree, NcclProtocol::kSimple, kTwoNodes, 1 << 20),
                   0.92 * 0.5);
  EXPECT_DOUBLE_EQ(nccl_efficiency(NcclAlgorithm::kTree, NcclProtocol::kSimple, kTwoNodes, 1 << 30),
                   0.92);
  EXPECT_DOUBLE_EQ(nccl_efficiency(NcclAlgorithm::kTree, NcclProtocol::kLL128, kTwoNodes, 1 << 30),
                   0.92 * 120.0 / 128.0);
  EXPECT_NEAR(nvlink_efficiency(GpuGeneration::kHopper), 370.8 / 450.0, 1e-12);
  EXPECT_NEAR(nvlink_efficiency(GpuGeneration::kAmpere), 240.0 / 300.0, 1e-12);
  EXPECT_NEAR(nvlink_efficiency(GpuGeneration::kVolta), 120.0 / 150.0, 1e-12);
}

TEST(NcclModel, LLIsCappedAtItsBusBandwidth) {
  // On 2 nodes of Intel hosts LL's bus bandwidth stops at 39 GB/s: 39 x 16 / 30 of algorithm
  // bandwidth for the ring.
  EXPECT_NEAR(nccl_bandwidth_cap(NcclAlgorithm::kRing, NcclProtocol::kLL, kTwoNodes),
              39e9 * 16.0 / 30.0, 1.0);
  EXPECT_NEAR(nccl_bandwidth_cap(NcclAlgorithm::kTree, NcclProtocol::kLL, kOneNode), 141e9 * 0.5,
              1.0);
  const double spb = 1.0 / 400e9;
  const NcclChoice ll = nccl_time(NcclAlgorithm::kRing, NcclProtocol::kLL, kTwoNodes, 1e8, spb);
  EXPECT_NEAR(ll.transfer_s, 1e8 / (39e9 * 16.0 / 30.0), 1e-12);
}

TEST(NcclModel, TheTunerTakesLLForSmallBuffersAndSimpleForLargeOnes) {
  // One node of 8 H100s, the ring's busiest link at NCCL's 370.8 GB/s.
  const double ring = 2.0 * 7.0 / 8.0 / 370.8e9;
  const double spb[3] = {ring, ring, ring};
  const NcclChoice small = nccl_choose(kOneNode, 65536, spb);
  EXPECT_EQ(small.algorithm, NcclAlgorithm::kRing);
  EXPECT_EQ(small.protocol, NcclProtocol::kLL);
  const NcclChoice large = nccl_choose(kOneNode, 1 << 30, spb);
  EXPECT_EQ(large.algorithm, NcclAlgorithm::kRing);
  EXPECT_EQ(large.protocol, NcclProtocol::kSimple);
  EXPECT_NEAR(large.time_s(), 56.0 * kUs + (1 << 30) * ring, 1e-12);
  // Where the tree's busiest link carries half the ring's bytes (2 nodes behind one NIC each,
  // the NIC the bottleneck), it wins at large sizes despite its 0.92.
  const double across[3] = {30.0 / 16.0 / 50e9, 1.0 / 50e9, 0.0};
  const NcclChoice tree = nccl_choose(kTwoNodes, 1 << 30, across);
  EXPECT_EQ(tree.algorithm, NcclAlgorithm::kTree);
  EXPECT_EQ(tree.protocol, NcclProtocol::kSimple);
}

TEST(NcclModel, NvlsRunsOnHopperNodesAloneAndSimpleAlone) {
  NcclJob hopper = kTwoNodes;
  hopper.nvls = true;
  // NVLS: the switch's 25 us in place of the base latency; NVLSTree: and 2 x 14 a tree level.
  NcclJob one = kOneNode;
  one.nvls = true;
  EXPECT_NEAR(nccl_latency(NcclAlgorithm::kNvls, NcclProtocol::kSimple, one, 1e9), 25 * kUs, 1e-12);
  EXPECT_NEAR(nccl_latency(NcclAlgorithm::kNvls, NcclProtocol::kSimple, hopper, 1e9), 53 * kUs,
              1e-12);
  EXPECT_EQ(nccl_efficiency(NcclAlgorithm::kNvls, NcclProtocol::kLL, hopper, 1e9), 0.0);
  EXPECT_NEAR(nvls_efficiency(), 0.85 * 15 / 16, 1e-12);
  EXPECT_TRUE(nccl_enabled(NcclAlgorithm::kNvls, hopper));
  EXPECT_FALSE(nccl_enabled(NcclAlgorithm::kNvls, kTwoNodes));
  // A forced algorithm alone; NVLS forced where there is none falls back to the ring.
  NcclJob forced = kTwoNodes;
  forced.only = NcclAlgorithm::kNvls;
  EXPECT_TRUE(nccl_enabled(NcclAlgorithm::kRing, forced));
  EXPECT_FALSE(nccl_enabled(NcclAlgorithm::kTree, forced));
  const double spb[3] = {1e-11, 1e-11, 1e-12};
  const NcclChoice c = nccl_choose(forced, 1 << 30, spb);
  EXPECT_EQ(c.algorithm, NcclAlgorithm::kRing);
  EXPECT_EQ(nccl_choice_name(nccl_choose(hopper, 1 << 30, spb), hopper), "nvlstree/Simple");
}

TEST(NcclModel, NvlsChunksAreCutForSmallerBuffersAsNcclCutsThem) {
  // One node of 8: 16 channels x 8 heads = 128 concurrent chunks of 128 KiB; below 64 x 128
  // of them (1 GiB) 64 KiB, below 8 x 128 x 64 KiB (64 MiB) 32 KiB, below 2 x 128 x 32 KiB
  // (8 MiB) 16 KiB.
  NcclJob one = kOneNode;
  one.nvls = true;
  EXPECT_EQ(nccl_nvls_chunk(one, 1 << 30), 131072);
  EXPECT_EQ(nccl_nvls_chunk(one, (1 << 30) - 1), 65536);
  EXPECT_EQ(nccl_nvls_chunk(one, 1 << 26), 65536);
  EXPECT_EQ(nccl_nvls_chunk(one, 1 << 24), 32768);
  EXPECT_EQ(nccl_nvls_chunk(one, 1 << 22), 16384);
  // 2 nodes of 8 (NVLSTree): 128 KiB down to 64 MiB, 64 KiB below it, 32 KiB below 8 MiB.
  NcclJob two = kTwoNodes;
  two.nvls = true;
  EXPECT_EQ(nccl_nvls_chunk(two, 1 << 26), 131072);
  EXPECT_EQ(nccl_nvls_chunk(two, 1 << 24), 65536);
  EXPECT_EQ(nccl_nvls_chunk(two, 1 << 20), 32768);
  // 4 nodes or more: at most 64 KiB.
  const NcclJob four{32, 4, GpuGeneration::kHopper, CpuVendor::kIntel, true};
  EXPECT_EQ(nccl_nvls_chunk(four, 1 << 30), 65536);
}

TEST(NcclModel, NvlsPipelinesFillAndDrainOverTheirStages) {
  NcclJob one = kOneNode;
  one.nvls = true;
  NcclJob two = kTwoNodes;
  two.nvls = true;
  // 1 GiB on one node: 2^30 / (128 x 128 KiB) = 64 steps through 3 stages.
  EXPECT_DOUBLE_EQ(nccl_pipeline_stretch(NcclAlgorithm::kNvls, one, 1 << 30), 66.0 / 64.0);
  // 16 MiB: 4 steps of 32 KiB chunks.
  EXPECT_DOUBLE_EQ(nccl_pipeline_stretch(NcclAlgorithm::kNvls, one, 1 << 24), 6.0 / 4.0);
  // 2 nodes, 16 MiB: 2 steps of 64 KiB chunks through 4 stages.
  EXPECT_DOUBLE_EQ(nccl_pipeline_stretch(NcclAlgorithm::kNvls, two, 1 << 24), 5.0 / 2.0);
  // 8 nodes: 2 more network hops for each of the 2 levels beyond the first, 8 stages; 1 GiB
  // over 16 x 8 chunks of 64 KiB is 128 steps.
  const NcclJob eight{64, 8, GpuGeneration::kHopper, CpuVendor::kIntel, true};
  EXPECT_DOUBLE_EQ(nccl_pipeline_stretch(NcclAlgorithm::kNvls, eight, 1 << 30), 135.0 / 128.0);
  // The ring and the tree count their pipelines in NCCL's latency.
  EXPECT_EQ(nccl_pipeline_stretch(NcclAlgorithm::kRing, two, 1 << 24), 1.0);
  EXPECT_EQ(nccl_pipeline_stretch(NcclAlgorithm::kTree, two, 1 << 24), 1.0);
}

TEST(NcclModel, TreesAreNcclsDoubleBinaryTrees) {
  // NCCL's own drawings (src/graph/trees.cc): on 12 nodes, 0 - 8, 8's children 4 and 10;
  // the mirror has 11 at the root over 3.
  NcclTreeLinks t = nccl_tree_links(12, 0, 0);
  EXPECT_EQ(t.parent, -1);
  EXPECT_EQ(t.children[1], 8);
  t = nccl_tree_links(12, 8, 0);
  EXPECT_EQ(t.parent, 0);
  EXPECT_EQ(t.children[0], 4);
  EXPECT_EQ(t.children[1], 10);
  t = nccl_tree_links(12, 11, 1);
  EXPECT_EQ(t.parent, -1);
  EXPECT_EQ(t.children[1], 3);
  // On 13 (odd: the second tree shifted by one), 12 has the single child 10, and the second
  // tree gives 0 the parent 9.
  t = nccl_tree_links(13, 12, 0);
  EXPECT_EQ(t.parent, 8);
  EXPECT_EQ(t.children[0], 10);
  EXPECT_EQ(t.children[1], -1);
  EXPECT_EQ(nccl_tree_links(13, 0, 1).parent, 9);
  // Every node but the root has a parent that lists it as a child, in both trees.
  for (int nodes : {2, 3, 4, 7, 8, 64}) {
    for (int tree = 0; tree < 2; ++tree) {
      int roots = 0;
      for (int k = 0; k < nodes; ++k) {
        const NcclTreeLinks links = nccl_tree_links(nodes, k, tree);
        if (links.parent < 0) {
          ++roots;
          continue;
        }
        const NcclTreeLinks up = nccl_tree_links(nodes, links.parent, tree);
        EXPECT_TRUE(up.children[0] == k || up.children[1] == k) << nodes << " " << tree << " " << k;
      }
      EXPECT_EQ(roots, 1);
    }
  }
}

}  // namespace
}  // namespace gbasim
