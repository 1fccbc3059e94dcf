#include "base/system.h"

#include <unistd.h>

#include <fstream>
#include <string>

namespace gbasim {

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<double>(pages) * static_cast<double>(size) : 0.0;
}

double available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0.0;
  while (meminfo >> key) {
    if (key == "MemAvailable:") {
      meminfo >> kib;
      return kib * 1024.0;
    }
    meminfo.ignore(256, '\n');
  }
  return 0.0;
}

}  // namespace gbasim
