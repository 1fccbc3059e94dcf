// libFuzzer target: the spec reader. Any input is either a spec or an InputError; anything
// else (a crash, another exception, a sanitizer report) is a defect.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "experiment/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, false);
  if (doc.is_discarded()) return 0;  // load_spec reports it as "not valid JSON"
  try {
    gbasim::parse_spec(doc, "fuzz.json");
  } catch (const gbasim::InputError&) {
  }
  return 0;
}
