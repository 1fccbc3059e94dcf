// Where each mode wins (`gbasim map`): a grid of straggler settings (by default the fraction of
// persistently slow workers by their slowdown), every mode over paired seeds at each cell, run as
// one sweep; at each cell the mode `gbasim compare`'s rule picks, GBA's margin over sync, and
// along the last axis the crossover where GBA overtakes sync beyond the noise.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/stats.h"
#include "study/compare.h"
#include "study/sweep.h"

namespace gbasim {

struct MapOptions {
  std::string spec, out;
  std::vector<std::string> overrides;
  std::vector<SweepAxis> axes;  // one or two; the last is the one the crossover runs along
  std::vector<std::string> modes{"sync", "gba"};
  int seeds = 5;
  double tolerance = 1e-3;
};

// The default grid: an eighth, a quarter and half of the workers persistently slowed 1.25x to
// 3x, which brackets the Alibaba PAI jobs (a tenth to a third of the workers, 1.2x to 2.35x
// the median; ../shared/traces/alibaba-pai-minibatch/README.md).
std::vector<SweepAxis> default_map_axes();

// The map's sweep file, OUT/sweep.json: the spec with the overrides, "training.mode" then the
// axes, seeds 1 to K. Written whole; returns its path. `gbasim sweep` runs it anywhere.
std::string write_map_sweep(const MapOptions& o);

// One cell's verdict (map_cell): the pick of `gbasim compare`'s rule and GBA's paired time
// and AUC differences against sync.
struct MapCell {
  std::vector<nlohmann::json> values;  // one per axis
  Recommendation pick;
  Interval gba_time_vs_sync, gba_auc_vs_sync;
  bool complete = true;  // every run of the cell has a result
  bool gba_faster() const { return gba_time_vs_sync.n >= 2 && gba_time_vs_sync.high < 0.0; }
};
MapCell map_cell(const std::vector<std::string>& modes, const std::map<std::string, ModeRuns>& runs,
                 int seeds, double tolerance, double target);

// Reads the runs of OUT/points, prints the map, and writes OUT/map.md, OUT/map.json and the
// figure (OUT/figures/map). Cells with runs missing are marked incomplete.
void write_map(const MapOptions& o);

}  // namespace gbasim
