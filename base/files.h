// Output files: written whole or not at all.
#pragma once

#include <string>

namespace gbasim {

// Writes `text` to a temporary file beside `path`, then renames it into place, creating
// missing parent folders. Throws InputError on failure, leaving any earlier file at `path`
// untouched.
void write_text_atomically(const std::string& path, const std::string& text);

}  // namespace gbasim
