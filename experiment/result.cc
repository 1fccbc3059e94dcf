#include "experiment/result.h"

#include "base/files.h"

namespace gbasim {

void write_json_atomically(const std::string& path, const nlohmann::ordered_json& doc) {
  write_text_atomically(path, doc.dump(2) + "\n");
}

}  // namespace gbasim
