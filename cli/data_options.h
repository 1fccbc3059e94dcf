// Command-line options that choose and shape the data set (gbasim train, gbasim data).
#pragma once

#include <boost/program_options.hpp>

#include "experiment/data.h"

namespace gbasim {

// Adds --data, --test-fraction, --table-size, --skip-bad-lines, --max-samples and the
// synthetic generator's options to `desc`, bound to `options`.
void add_data_options(boost::program_options::options_description& desc, DataOptions& options);

}  // namespace gbasim
