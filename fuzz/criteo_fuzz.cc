// libFuzzer target: the Criteo reader, strict and skipping bad lines. Data or an InputError,
// nothing else.
#include <cstddef>
#include <cstdint>

#include "base/error.h"
#include "fuzz/input_file.h"
#include "models/criteo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = gbasim::fuzz::write_input(data, size);
  for (bool skip : {false, true}) {
    gbasim::CriteoOptions options;
    options.table_size = 1000;
    options.skip_bad_lines = skip;
    try {
      gbasim::read_criteo(path, options);
    } catch (const gbasim::InputError&) {
    }
  }
  return 0;
}
