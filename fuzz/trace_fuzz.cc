// libFuzzer target: the trace readers. The first byte picks the format (PAI, Alibaba 2018,
// Alibaba 2017, generic); the rest is the file. A trace or an InputError, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "fuzz/input_file.h"
#include "traces/pai_trace.h"
#include "traces/usage_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* const kFormats[] = {"pai", "alibaba-v2018", "alibaba-v2017", "generic"};
  const std::string format = kFormats[data[0] % 4];
  const std::string& path = gbasim::fuzz::write_input(data + 1, size - 1);
  try {
    if (format == "pai")
      gbasim::read_pai_trace(path);
    else
      gbasim::read_usage_trace(path, format, gbasim::UsageMapping{});
  } catch (const gbasim::InputError&) {
  }
  return 0;
}
