// Result files: written whole or not at all.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gbasim {

// Writes `doc` (indented, with a final newline) to a temporary file beside `path`, then
// renames it into place, creating missing parent folders. Throws InputError on failure,
// leaving any earlier file at `path` untouched.
void write_json_atomically(const std::string& path, const nlohmann::ordered_json& doc);
// The same for any text.
void write_text_atomically(const std::string& path, const std::string& text);

}  // namespace gbasim
