#include "sim/server.h"

#include "sim/messages.h"

namespace gbasim {

std::optional<Gradient> take_in(Training& training, const Cluster& cluster, int worker,
                                int64_t token, Gradient gradient) {
  const double start = sg4::Engine::get_clock();
  const ExperimentSpec& spec = training.spec();
  double own = spec.cost.server_flops_per_push;
  const Mode mode = training.rule().mode();
  if (mode == Mode::kGBA || mode == Mode::kBackupWorkers) {
    own += spec.cost.merge_flops_per_value * training.sizes().updated_values(gradient);
  }
  if (own > 0.0) cluster.run_flops(own);
  std::unique_lock lock(*training.mutex());
  std::optional<Gradient> update = training.receive(worker, token, std::move(gradient));
  if (update) training.apply_update(*update);
  if (Timeline* timeline = training.timeline())
    timeline->server_span("take in", start, sg4::Engine::get_clock());
  return update;
}

void charge_update(const Training& training, const Cluster& cluster, const Gradient& update) {
  const ExperimentSpec& spec = training.spec();
  const double flops =
      spec.cost.update_flops_per_value * training.sizes().updated_values(update) /
      static_cast<double>(cluster.servers().size());
  const double start = sg4::Engine::get_clock();
  cluster.run_flops(flops, spec.cluster.ps_cores);
  // Each shard applies its part of the update at once, on its own track.
  if (Timeline* timeline = training.timeline()) {
    for (size_t k = 0; k < cluster.servers().size(); ++k)
      timeline->shard_span(static_cast<int>(k), "apply update", start, sg4::Engine::get_clock());
  }
}

}  // namespace gbasim
