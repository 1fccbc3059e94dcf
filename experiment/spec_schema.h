// The spec's schema (experiment/spec_schema.cc): every key, its type and its default, in one
// walk that reads a spec from JSON and writes it back.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "experiment/spec.h"

namespace gbasim {

// Fills `spec` from `doc`'s keys (defaults where absent). Throws InputError naming `source`
// and the key on an unknown key, a wrong type, or a value that is not finite or not UTF-8.
void read_spec_keys(const nlohmann::json& doc, const std::string& source, ExperimentSpec& spec);

// Every key of `spec`, in the schema's order.
nlohmann::ordered_json write_spec_keys(ExperimentSpec spec);

}  // namespace gbasim
