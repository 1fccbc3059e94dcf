// Markdown tables of a sweep's summary (OUT/summary.csv), as `gbasim sweep --table` prints them
// (docs/sweep.md, "Tables"):
// 1. one row a combination of axis values: each headline metric's mean over seeds with its 95%
//    interval (Student's t), and how many seeds reached the target AUC;
// 2. with training.mode an axis that has sync or gba among its values: per combination of the
//    other axes, each mode's paired difference (by seed) of time-to-AUC and of final AUC
//    against sync and against GBA, "*" where the interval excludes 0;
// 3. with `against` (KEY=VALUE pairs naming one combination): every combination's paired
//    difference against that one.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gbasim {

// The tables of `folder`/summary.csv. Throws InputError on a missing or malformed file, and on
// an `against` that is not an axis or names other than one combination.
std::string sweep_table(const std::string& folder,
                        const std::vector<std::pair<std::string, std::string>>& against);

}  // namespace gbasim
