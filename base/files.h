// Files: opened to read with a clear error, written whole or not at all.
#pragma once

#include <fstream>
#include <string>

namespace gbasim {

// Opens a file to read. Throws InputError naming it when it cannot be opened or is a folder
// (which a stream would open, and then fail to read).
std::ifstream open_input(const std::string& path, const std::string& what = "file");

// Writes `text` (any bytes) to a temporary file beside `path`, synced to disk, then renames it
// into place, creating missing parent folders. Throws InputError on failure (a full disk, a
// read-only folder), saying that any earlier file at `path` is untouched, as it is.
void write_text_atomically(const std::string& path, const std::string& text);

}  // namespace gbasim
