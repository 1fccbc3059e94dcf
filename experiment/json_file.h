// JSON documents as gbasim reads them: every one checked for depth before it is parsed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gbasim {

// The deepest nesting of arrays and objects any JSON that gbasim reads may have. A spec needs
// 4 levels; the parser is iterative, but printing, comparing and walking a document recurse,
// so a deeper one would overflow the stack.
constexpr int kJsonDepthLimit = 64;

// The deepest nesting of arrays and objects in `text`, strings skipped (escapes included), up
// to kJsonDepthLimit + 1; `line` gets the line where that depth is first reached. A text that
// is not JSON is left to the parser.
int json_depth(std::string_view text, long* line = nullptr);

// Throws InputError naming `source` and the line where the nesting passes kJsonDepthLimit.
void check_json_depth(std::string_view text, const std::string& source);

// `text` parsed, or a discarded value (is_discarded()) when it is not JSON or nests deeper than
// kJsonDepthLimit: for files gbasim wrote itself (a sweep's points), which it redoes when bad.
nlohmann::json parse_json_or_discarded(std::string_view text);

// Throws InputError naming `source` and the key path of the first key that comes twice in one
// object: JSON parsers keep only the last, so the first would be dropped without a word.
void check_unique_keys(std::string_view text, const std::string& source);

// `j` with every whole number written as a float (2e6, 16.0) made an integer, in a value or a
// list or object of them, nested: JSON has one kind of number, and a key that takes an integer
// takes 2e6 as 2000000. A float that is not whole, or beyond 2^63, stays as it is.
nlohmann::json whole_numbers(const nlohmann::json& j);

// A file's whole text, opened with open_input's errors (naming it `what`) and checked for
// depth and for keys given twice.
std::string read_json_text(const std::string& path, const std::string& what);

}  // namespace gbasim
