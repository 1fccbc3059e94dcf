// Result files, as every command writes them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gbasim {

// A result file's text: `doc` indented, with a final newline.
std::string json_text(const nlohmann::ordered_json& doc);
// Writes json_text(doc) whole or not at all (base/files.h).
void write_json_atomically(const std::string& path, const nlohmann::ordered_json& doc);

}  // namespace gbasim
