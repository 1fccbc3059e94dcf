#include "sim/collective_timing.h"

#include <simgrid/s4u.hpp>

#include "base/enum_names.h"
#include "base/error.h"
#include "sim/cluster.h"
#include "sim/collectives.h"

namespace gbasim {

namespace {
constexpr EnumName<CollectiveOp> kCollectiveOpNames[] = {
    {CollectiveOp::kAllReduce, "allreduce"},
    {CollectiveOp::kAllGather, "allgather"},
    {CollectiveOp::kAllToAll, "alltoall"},
    {CollectiveOp::kReduceScatter, "reducescatter"}};
}  // namespace

CollectiveOp parse_collective(const std::string& name) {
  return parse_enum(name, kCollectiveOpNames);
}

std::string collective_name(CollectiveOp op) { return enum_name(op, kCollectiveOpNames); }

double bus_factor(CollectiveOp op, int ranks) {
  const double n = ranks;
  return op == CollectiveOp::kAllReduce ? 2.0 * (n - 1.0) / n : (n - 1.0) / n;
}

std::vector<CollectiveTiming> time_collectives(const ExperimentSpec& spec, CollectiveOp op,
                                               const std::vector<double>& sizes) {
  configure_network(spec.cluster);
  const ReplayedTrace no_trace;
  const Cluster cluster(spec, no_trace);
  const int n = spec.training.num_workers;
  Collectives collectives(cluster, spec.cluster, 0, n);
  std::vector<CollectiveTiming> timings;
  for (double s : sizes) {
    std::string algorithm = collectives.gather_name(s);
    if (op == CollectiveOp::kAllReduce) algorithm = collectives.all_reduce_name(s);
    if (op == CollectiveOp::kAllToAll)
      algorithm = resolve_ring_model(spec.cluster.all_to_all_model, n) == RingModel::kMessages
                      ? "pairwise"
                      : "aggregate";
    timings.push_back({s, 0.0, algorithm});
  }
  auto barrier = simgrid::s4u::Barrier::create(static_cast<unsigned>(n));
  for (int w = 0; w < n; ++w) {
    simgrid::s4u::Actor::create("rank-" + std::to_string(w), cluster.workers()[w].host, [&, w] {
      for (CollectiveTiming& t : timings) {
        barrier->wait();
        const double start = simgrid::s4u::Engine::get_clock();
        switch (op) {
          case CollectiveOp::kAllReduce:
            collectives.all_reduce(w, t.bytes);
            break;
          case CollectiveOp::kAllGather:
            collectives.all_gather(w, std::vector<double>(n, t.bytes / n));
            break;
          case CollectiveOp::kReduceScatter:
            collectives.reduce_scatter(w, t.bytes);
            break;
          case CollectiveOp::kAllToAll:
            collectives.all_to_all(w, std::vector<double>(n, t.bytes / n));
            break;
        }
        barrier->wait();
        if (w == 0) t.time_s = simgrid::s4u::Engine::get_clock() - start;
      }
    });
  }
  simgrid::s4u::Engine::get_instance()->run();
  return timings;
}

}  // namespace gbasim
