// gbasim data: what a data set looks like to the models.
#include <boost/program_options.hpp>
#include <iostream>

#include "base/files.h"
#include "cli/commands.h"
#include "cli/data_options.h"
#include "experiment/result.h"

namespace gbasim {

namespace po = boost::program_options;

int run_data(const std::vector<std::string>& args) {
  DataOptions data_options;
  std::string out_path;
  po::options_description desc(
      "gbasim data [options]\n\nDescribes a data set as JSON on standard output");
  desc.add_options()("help,h", "show this help")("out", po::value(&out_path)->value_name("FILE"),
                                                 "also write the description to FILE");
  add_data_options(desc, data_options);
  po::variables_map vm;
  if (!parse_options(args, desc, vm)) return 0;
  if (!out_path.empty()) check_output_file(out_path, "description");

  const LoadedData data = load_data(data_options);
  nlohmann::ordered_json doc;
  doc["data"] = data.description;
  doc["cardinalities"] = data.train.cardinalities;
  if (data.bayes_auc) doc["bayes_auc"] = *data.bayes_auc;
  if (!out_path.empty()) write_json_atomically(out_path, doc);
  std::cout << doc.dump(2) << '\n';
  return 0;
}

}  // namespace gbasim
