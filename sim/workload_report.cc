// gbasim workload's report (sim/workload_report.h).
#include "sim/workload_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "base/files.h"
#include "experiment/result.h"
#include "experiment/workload.h"
#include "sim/workload_timing.h"

namespace gbasim {
namespace {

// 1234567 -> "1.23 M"; bytes with "B".
std::string si(double v, const char* unit = "") {
  const char* prefixes[] = {"", " k", " M", " G", " T", " P"};
  int k = 0;
  while (std::abs(v) >= 1000.0 && k < 5) {
    v /= 1000.0;
    ++k;
  }
  const char* gap = k == 0 && *unit ? " " : "";
  char text[64];
  std::snprintf(text, sizeof text, k == 0 ? "%.0f%s%s%s" : "%.3g%s%s%s", v, prefixes[k], gap, unit);
  return text;
}

std::string layers_text(const WorkloadSpec& w) {
  std::string out;
  for (const auto& widths : w.dense_layers) {
    if (!out.empty()) out += ", ";
    for (size_t k = 0; k < widths.size(); ++k) {
      if (k > 0) out += '-';
      out += std::to_string(widths[k]);
    }
  }
  return out.empty() ? "none" : out;
}

// The report's numbers as JSON.
nlohmann::ordered_json report_json(const ExperimentSpec& spec, const Workload& workload,
                                   const Workload::Rows& rows, const StepBytes& bytes,
                                   const WorkloadTiming& t, const Round& round) {
  const WorkloadSpec& w = workload.spec();
  const int n = spec.training.num_workers;
  return {{"workload", workload_to_json(w)},
          {"dense_params", workload.dense_params()},
          {"flops_per_sample", workload.flops_per_sample()},
          {"embedding_rows", workload.embedding_rows()},
          {"embedding_values", workload.embedding_values()},
          {"ids_per_sample", workload.ids_per_sample()},
          {"distinct_rows_per_batch", rows.rows},
          {"bytes",
           {{"sync_allreduce", bytes.allreduce},
            {"sync_exchange_ids", bytes.exchange_ids},
            {"sync_exchange_vectors", bytes.exchange_vectors},
            {"sync_exchange_gradients", bytes.exchange_gradients},
            {"request_per_shard", bytes.request_per_shard},
            {"pull_per_shard", bytes.pull_per_shard},
            {"push_per_shard", bytes.push_per_shard}}},
          {"cluster", spec_to_json(spec)["cluster"]},
          {"workers", n},
          {"time_s",
           {{"compute", t.compute_s},
            {"sync_exchange", t.sync_exchange_s},
            {"sync_allreduce", t.sync_allreduce_s},
            {"sync_step", t.sync_step_s()},
            {"ps_request", t.ps_request_s},
            {"ps_pull", t.ps_pull_s},
            {"ps_push", t.ps_push_s},
            {"ps_step_alone", t.ps_step_s()},
            {"ps_round_shard_links", round.shard_links_s},
            {"ps_round_shard_links_serial", round.shard_links_serial_s},
            {"ps_round_node_links", round.node_links_s},
            {"ps_round_node_links_serial", round.node_links_serial_s}}}};
}

}  // namespace

Round round_bounds(const ExperimentSpec& spec, const StepBytes& bytes) {
  // NIC links are split-duplex (sim/cluster.cc): a shard's pulls leave on one direction while
  // the pushes (and the requests) arrive on the other.
  const double n = spec.training.num_workers;
  const double shards = spec.cluster.ps_shards;
  const double out = bytes.pull_per_shard;
  const double in = bytes.request_per_shard + bytes.push_per_shard;
  const int g = spec.cluster.gpu_node.gpus_per_node;
  Round r;
  r.node_link_bandwidth =
      spec.cluster.nic_bandwidth * (g > 1 ? spec.cluster.gpu_node.nics_per_node : 1);
  r.shard_links_s = n * std::max(out, in) / spec.cluster.nic_bandwidth;
  r.shard_links_serial_s = n * (out + in) / spec.cluster.nic_bandwidth;
  r.node_links_s = g * shards * std::max(out, in) / r.node_link_bandwidth;
  r.node_links_serial_s = g * shards * (out + in) / r.node_link_bandwidth;
  return r;
}

void report_workload(const ExperimentSpec& spec, const std::string& out_path) {
  const Workload workload(*spec.workload);
  const WorkloadSpec& w = workload.spec();
  const int shards = spec.cluster.ps_shards;
  const int n = spec.training.num_workers;
  const StepBytes bytes = step_bytes(workload, w.local_batch, w.placement, shards);
  const Workload::Rows& rows = workload.distinct(w.local_batch);
  const double ids = static_cast<double>(w.local_batch) * workload.ids_per_sample();
  const WorkloadTiming t = time_workload(spec);

  std::printf("# workload %s\n# %s\n", w.preset.empty() ? "(given)" : w.preset.c_str(),
              w.source.c_str());
  std::printf("dense parameters     %s (layers %s)\n", si(workload.dense_params()).c_str(),
              layers_text(w).c_str());
  std::printf("flops a sample       %s%s\n", si(workload.flops_per_sample()).c_str(),
              w.flops_per_sample > 0.0 ? " (given)" : " (6 x the dense parameters)");
  std::printf("embedding tables     %lld, %s rows, %s values (%s at %g B a value)\n",
              static_cast<long long>(workload.tables()),
              si(static_cast<double>(workload.embedding_rows())).c_str(),
              si(workload.embedding_values()).c_str(),
              si(workload.embedding_values() * w.value_bytes, "B").c_str(), w.value_bytes);
  std::printf("ids a sample         %.4g; pooled values a sample %s\n", workload.ids_per_sample(),
              si(workload.pooled_values_per_sample()).c_str());
  std::printf("local batch          %lld; distinct rows %s (%.1f%% of its %s ids), %s values\n",
              static_cast<long long>(w.local_batch), si(rows.rows).c_str(),
              ids > 0.0 ? 100.0 * rows.rows / ids : 0.0, si(ids).c_str(), si(rows.values).c_str());
  std::printf("\nbytes a worker step\n");
  std::printf("  sync, tables %s: all-reduce %s; exchange ids %s, vectors %s, gradients %s\n",
              w.placement == TablePlacement::kReplicated
                  ? "replicated"
                  : ("on the " + table_placement_name(w.placement)).c_str(),
              si(bytes.allreduce, "B").c_str(), si(bytes.exchange_ids, "B").c_str(),
              si(bytes.exchange_vectors, "B").c_str(), si(bytes.exchange_gradients, "B").c_str());
  std::printf(
      "  server modes, %d shards: per shard request %s, pull %s, push %s (all shards: %s, "
      "%s, %s)\n",
      shards, si(bytes.request_per_shard, "B").c_str(), si(bytes.pull_per_shard, "B").c_str(),
      si(bytes.push_per_shard, "B").c_str(), si(bytes.request_per_shard * shards, "B").c_str(),
      si(bytes.pull_per_shard * shards, "B").c_str(),
      si(bytes.push_per_shard * shards, "B").c_str());
  std::printf(
      "\nstep time on the cluster (%d workers, %d per node, %d shards; %s), nothing else "
      "running\n",
      n, spec.cluster.gpu_node.gpus_per_node, shards, spec.cluster.network_model.c_str());
  std::printf("  compute              %.4g s (%s flop at %s flop/s)\n", t.compute_s,
              si(workload.flops_per_sample() * static_cast<double>(w.local_batch)).c_str(),
              si(spec.cluster.worker_speed).c_str());
  std::printf("  sync                 %.4g s: exchange %.4g s, all-reduce %.4g s, compute\n",
              t.sync_step_s(), t.sync_exchange_s, t.sync_allreduce_s);
  std::printf("  server mode, alone   %.4g s: request %.4g s, pull %.4g s, compute, push %.4g s\n",
              t.ps_step_s(), t.ps_request_s, t.ps_pull_s, t.ps_push_s);
  const Round round = round_bounds(spec, bytes);
  std::printf("  server modes, a round of all %d (each worker pulls and pushes once), at least:\n",
              n);
  std::printf("    %.4g s on each shard's link (%s/s each way: the pulls out, the pushes in)\n",
              round.shard_links_s, si(spec.cluster.nic_bandwidth, "B").c_str());
  std::printf(
      "    %.4g s on it where no pull overlaps a push, as when the workers move in "
      "lockstep\n",
      round.shard_links_serial_s);
  std::printf(
      "    %.4g s on each worker node's link (%d worker%s at %s/s each way); %.4g s "
      "where no pull overlaps a push\n",
      round.node_links_s, spec.cluster.gpu_node.gpus_per_node,
      spec.cluster.gpu_node.gpus_per_node == 1 ? "" : "s",
      si(round.node_link_bandwidth, "B").c_str(), round.node_links_serial_s);

  if (!out_path.empty())
    write_json_atomically(out_path, report_json(spec, workload, rows, bytes, t, round));
}

}  // namespace gbasim
