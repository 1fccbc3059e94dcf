// libFuzzer target: the check of an XML platform's numbers that runs before SimGrid reads the
// file. Any input passes or is an InputError; anything else is a defect. (SimGrid's own XML
// reader cannot be fuzzed in one process: a process loads one platform.)
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/error.h"
#include "experiment/platform_xml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    gbasim::check_platform_xml_numbers(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.xml");
  } catch (const gbasim::InputError&) {
  }
  return 0;
}
