#include "experiment/result.h"

#include "base/files.h"

namespace gbasim {

std::string json_text(const nlohmann::ordered_json& doc) { return doc.dump(2) + "\n"; }

void write_json_atomically(const std::string& path, const nlohmann::ordered_json& doc) {
  write_text_atomically(path, json_text(doc));
}

}  // namespace gbasim
