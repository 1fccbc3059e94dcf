// libFuzzer target: the sweep file reader and planner. Any input is a plan or an InputError;
// anything else (a crash, another exception, a sanitizer report) is a defect. The input is
// written to out/fuzz/ under the working folder (scripts/fuzz.sh runs in the repository's
// root), so that the base spec the seeds name, ../../tests/fuzz/sweep_base.json, is found.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "base/error.h"
#include "study/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "out/fuzz/sweep_fuzz-" + std::to_string(getpid()) + ".json";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    gbasim::plan_sweep(gbasim::load_sweep(path));
  } catch (const gbasim::InputError&) {
  }
  return 0;
}
