// What this machine has, for checks that an input asks for no more than that.
#pragma once

namespace gbasim {

// The machine's physical memory in bytes; 0 where it cannot be read.
double physical_memory_bytes();

// The memory the kernel says new work can take without swapping (/proc/meminfo's
// MemAvailable), in bytes; 0 where it cannot be read.
double available_memory_bytes();

}  // namespace gbasim
