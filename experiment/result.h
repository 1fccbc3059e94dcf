// Result files, as every command writes them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gbasim {

// Writes `doc` (indented, with a final newline) whole or not at all (base/files.h).
void write_json_atomically(const std::string& path, const nlohmann::ordered_json& doc);

}  // namespace gbasim
