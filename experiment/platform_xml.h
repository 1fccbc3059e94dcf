// A SimGrid XML platform's numbers, read before SimGrid reads the file: SimGrid ends the
// process, with no error it could catch, on a host of no cores, and later on a speed or a
// bandwidth of 0 ("The Impossible Did Happen").
#pragma once

#include <string>
#include <string_view>

namespace gbasim {

// Throws InputError naming `file` and the line of the first attribute that SimGrid cannot run
// on: `core` below 1, a `speed` (each power state of a list) or a bandwidth (`bandwidth`,
// `bw`, `bw_in`, `bw_out`, `bb_bw`) not positive, a latency (`lat`, `latency`, `bb_lat`)
// negative, or any of these not a number. A value's unit ("Gf", "Gbps", "us") is SimGrid's to
// read; only the number before it is checked here. Comments are skipped. Also refused:
// elements nested more than 64 deep, and a profile file (`speed_file`, `bandwidth_file`, any
// `*_file`) found neither beside the platform file nor in the working folder.
void check_platform_xml_numbers(std::string_view text, const std::string& file);

// The same for the file at `path`, which must be a regular file (open_input's errors for a
// missing file or a folder; a pipe or a device is refused).
void check_platform_xml_file(const std::string& path);

}  // namespace gbasim
