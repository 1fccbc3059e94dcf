#include "study/sweep.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "base/error.h"
#include "base/files.h"
#include "experiment/json_file.h"

namespace gbasim {
namespace {

using Json = nlohmann::ordered_json;

std::string value_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// The value as --set takes it: JSON, except a string that would not read back as itself
// ("true", "12") goes bare only when it reads as a string.
std::string set_text(const nlohmann::json& v) {
  if (!v.is_string()) return v.dump();
  const std::string text = v.get<std::string>();
  if (json_depth(text) > kJsonDepthLimit) return text;  // the spec reader refuses it, named
  const nlohmann::json back = nlohmann::json::parse(text, nullptr, false);
  return back.is_discarded() || back.is_string() ? v.get<std::string>() : v.dump();
}

// "axes": spec key -> its values, each listed once.
std::vector<SweepAxis> parse_axes(const Json& value, const std::string& path) {
  auto fail = [&](const std::string& key, const std::string& what) {
    throw InputError(path + ": '" + key + "' " + what);
  };
  if (!value.is_object()) fail("axes", "must be an object: spec key -> list of values");
  if (value.empty()) fail("axes", "must list at least one spec key and its values");
  std::vector<SweepAxis> axes;
  for (const auto& [k, v] : value.items()) {
    if (!v.is_array() || v.empty()) fail("axes." + k, "must be a non-empty list of values");
    SweepAxis axis{k, {}};
    for (const auto& e : v) {
      // By their text (clang finds nlohmann's == ambiguous under C++20's reversed
      // operators), numbers by their value: 1 and 1.0 are one point.
      const std::string text = e.dump();
      auto same = [&](const nlohmann::json& x) {
        if (x.is_number() && e.is_number()) return x.get<double>() == e.get<double>();
        return x.dump() == text;
      };
      if (std::any_of(axis.values.begin(), axis.values.end(), same))
        fail("axes." + k, "lists the value " + text + " twice");
      axis.values.push_back(nlohmann::json(e));
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

}  // namespace

SweepSpec load_sweep(const std::string& path) {
  Json doc = Json::parse(read_json_text(path, "sweep file"), nullptr, false);
  if (doc.is_discarded()) throw InputError(path + ": not valid JSON");
  if (!doc.is_object()) throw InputError(path + ": the sweep must be a JSON object");
  SweepSpec sweep;
  sweep.path = path;
  auto fail = [&](const std::string& key, const std::string& what) {
    throw InputError(path + ": '" + key + "' " + what);
  };
  for (const auto& [key, value] : doc.items()) {
    if (key == "base") {
      if (!value.is_string() || value.get<std::string>().empty())
        fail(key, "must name the base spec file");
      const std::filesystem::path base(value.get<std::string>());
      sweep.base =
          base.is_absolute()
              ? base.string()
              : (std::filesystem::path(path).parent_path() / base).lexically_normal().string();
    } else if (key == "set") {
      if (!value.is_object()) fail(key, "must be an object of spec keys and values");
      for (const auto& [k, v] : value.items()) sweep.fixed.push_back(k + "=" + set_text(v));
    } else if (key == "axes") {
      sweep.axes = parse_axes(value, path);
    } else if (key == "seeds") {
      if (!value.is_array() || value.empty()) fail(key, "must be a non-empty list of seeds");
      for (const auto& e : value) {
        if (!e.is_number_unsigned()) fail(key, "must list non-negative integers");
        const uint64_t seed = e.get<uint64_t>();
        if (std::find(sweep.seeds.begin(), sweep.seeds.end(), seed) != sweep.seeds.end())
          fail(key, "lists seed " + std::to_string(seed) + " twice");
        sweep.seeds.push_back(seed);
      }
    } else if (key == "description") {
      if (!value.is_string()) fail(key, "must be a string");
      sweep.description = value.get<std::string>();
    } else if (key == "slurm") {
      if (!value.is_object()) fail(key, "must be an object (docs/sweep.md, \"On a cluster\")");
      SlurmSettings& s = sweep.slurm;
      for (const auto& [k, v] : value.items()) {
        const std::string name = "slurm." + k;
        if (k == "partition" || k == "account" || k == "time" || k == "mem") {
          if (!v.is_string() || v.get<std::string>().empty())
            fail(name, "must be a non-empty string");
          (k == "partition" ? s.partition
           : k == "account" ? s.account
           : k == "time"    ? s.time
                            : s.mem) = v.get<std::string>();
        } else if (k == "options") {
          if (!v.is_array()) fail(name, "must be a list of sbatch arguments");
          for (const auto& o : v) {
            if (!o.is_string()) fail(name, "must be a list of strings");
            s.options.push_back(o.get<std::string>());
          }
        } else if (k == "points_per_task") {
          if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 100000)
            fail(name, "must be an integer in [1, 100000]");
          s.points_per_task = v.get<int>();
        } else {
          throw InputError(path + ": unknown key '" + name +
                           "' (expected partition, account, time, mem, options, points_per_task)");
        }
      }
    } else {
      throw InputError(path + ": unknown key '" + key +
                       "' (expected base, set, axes, seeds, description, slurm)");
    }
  }
  if (sweep.base.empty()) fail("base", "is required");
  if (sweep.axes.empty()) fail("axes", "is required");
  // A key set twice, or inside another one set: a point would run one value and be named
  // after the other.
  std::vector<std::pair<std::string, std::string>> keys;  // key, where it is set
  for (const std::string& f : sweep.fixed) keys.emplace_back(f.substr(0, f.find('=')), "set");
  for (const SweepAxis& a : sweep.axes) keys.emplace_back(a.key, "axes");
  if (!sweep.seeds.empty()) keys.emplace_back("seed", "seeds");
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t j = 0; j < keys.size(); ++j) {
      const std::string &a = keys[i].first, &b = keys[j].first;
      if (i == j || (keys[i].second == "set" && keys[j].second == "set")) continue;
      if (a == b ? i < j : b.rfind(a + ".", 0) == 0) {
        fail(keys[j].second == "seeds" ? "seeds" : keys[j].second + "." + b,
             "sets what " + keys[i].second + (keys[i].second == "seeds" ? "" : "." + a) +
                 " sets too: give each spec key in one place");
      }
    }
  }
  return sweep;
}

std::string name_part(const nlohmann::json& value) {
  std::string text;
  for (char c : value_text(value)) {
    // Lists and objects lose their brackets and quotes: [[250,"gba"]] names as 250-gba.
    if (!value.is_structured() || std::string("[]{}\"").find(c) == std::string::npos) text += c;
  }
  if (text.empty()) text = "none";
  for (char& c : text) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-';
    if (!ok) c = '-';
  }
  return text;
}

namespace {

// FNV-1a: a hash of the point's overrides that is the same on every machine and run.
std::string hash_of(const std::vector<std::string>& texts) {
  uint64_t h = 14695981039346656037ULL;
  for (const std::string& t : texts) {
    for (unsigned char c : t + '\n') h = (h ^ c) * 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// Names that two values share once made file-name safe ("a b" and "a-b"), or that are too long
// for a file name, get a hash of the point's overrides, so that no two points write one file.
void make_names_safe(std::vector<SweepPoint>& points, const std::string& source) {
  constexpr size_t kMaxName = 200, kReadable = 160;  // file names may have 255 bytes
  std::map<std::string, int> uses;
  for (const auto& p : points) ++uses[p.name];
  std::set<std::string> names;
  for (auto& p : points) {
    if (uses[p.name] > 1 || p.name.size() > kMaxName)
      p.name = p.name.substr(0, kReadable) + "~" + hash_of(p.overrides);
    if (!names.insert(p.name).second) {
      throw InputError(source + ": point '" + p.name +
                       "' comes twice (an axis, or the seeds, lists a value twice)");
    }
  }
}

}  // namespace

std::vector<SweepPoint> plan_sweep(const SweepSpec& sweep) {
  std::vector<std::optional<uint64_t>> seeds;
  for (uint64_t s : sweep.seeds) seeds.emplace_back(s);
  if (seeds.empty()) seeds.emplace_back();
  size_t count = seeds.size();
  for (const auto& axis : sweep.axes) count *= axis.values.size();

  // The last part of each key names it in point names, unless two axes share it.
  std::vector<std::string> labels;
  std::set<std::string> seen;
  bool clash = false;
  for (const auto& axis : sweep.axes) {
    const std::string last = axis.key.substr(axis.key.rfind('.') + 1);
    clash = clash || !seen.insert(last).second;
    labels.push_back(last);
  }
  if (clash) {
    labels.clear();
    for (const auto& axis : sweep.axes) labels.push_back(name_part(axis.key));
  }

  std::vector<SweepPoint> points;
  std::vector<size_t> index(sweep.axes.size(), 0);
  for (size_t n = 0; n < count; ++n) {
    size_t rest = n;
    const auto& seed = seeds[rest % seeds.size()];
    rest /= seeds.size();
    for (size_t a = sweep.axes.size(); a-- > 0;) {
      index[a] = rest % sweep.axes[a].values.size();
      rest /= sweep.axes[a].values.size();
    }
    SweepPoint p;
    p.overrides = sweep.fixed;
    for (size_t a = 0; a < sweep.axes.size(); ++a) {
      const nlohmann::json& v = sweep.axes[a].values[index[a]];
      p.values.push_back(v);
      p.overrides.push_back(sweep.axes[a].key + "=" + set_text(v));
      p.name += (a ? "_" : "") + labels[a] + "-" + name_part(v);
    }
    p.seed = seed;
    if (seed) {
      p.overrides.push_back("seed=" + std::to_string(*seed));
      p.name += "_seed-" + std::to_string(*seed);
    }
    try {
      p.spec = load_spec(sweep.base, p.overrides);
    } catch (const InputError& e) {
      std::string where;
      for (size_t a = 0; a < sweep.axes.size(); ++a)
        where += (a ? ", " : "") + sweep.axes[a].key + "=" + value_text(p.values[a]);
      // An error of the base spec's file itself names the key that named it.
      const std::string what = e.what();
      const std::string base_error =
          what.rfind(sweep.base + ":", 0) == 0 && e.key().empty() ? " ('base')" : "";
      throw InputError(sweep.path + ": point " + where + ": " + what + base_error);
    }
    points.push_back(std::move(p));
  }
  make_names_safe(points, sweep.path);
  return points;
}

std::vector<std::string> summary_header(const SweepSpec& sweep) {
  std::vector<std::string> h{"point", "seed"};
  for (const auto& axis : sweep.axes) h.push_back(axis.key);
  for (const char* c :
       {"status", "time_to_auc_s", "target_auc", "final_auc", "final_logloss", "mean_staleness",
        "dropped_share", "decayed_share", "simulated_time_s", "global_steps", "error"})
    h.emplace_back(c);
  return h;
}

std::vector<std::string> summary_row(const SweepSpec& sweep, const SweepPoint& point,
                                     const std::string& status, const nlohmann::json& result,
                                     const std::string& error) {
  std::vector<std::string> row{point.name, std::to_string(point.spec.seed)};
  for (size_t a = 0; a < sweep.axes.size(); ++a) row.push_back(value_text(point.values[a]));
  row.push_back(status);
  auto get = [&](const char* key) -> std::string {
    if (result.is_null()) return "";
    const auto& s = result.at("summary");
    if (!s.contains(key) || s.at(key).is_null()) return "";
    return csv_number(s.at(key).get<double>());
  };
  row.push_back(get("time_to_auc"));
  row.push_back(get("target_auc"));
  row.push_back(get("final_auc"));
  row.push_back(get("final_logloss"));
  row.push_back(get("mean_staleness"));
  std::string dropped, decayed;
  if (!result.is_null()) {
    const auto& g = result.at("summary").at("gradients");
    const double received = g.at("received").get<double>();
    if (received > 0) {
      dropped = csv_number(g.at("dropped").get<double>() / received);
      decayed = csv_number(g.at("decayed").get<double>() / received);
    }
  }
  row.push_back(dropped);
  row.push_back(decayed);
  row.push_back(get("simulated_time"));
  row.push_back(get("global_steps"));
  row.push_back(error);
  return row;
}

std::string csv_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) line += ',';
    const std::string& c = cells[i];
    if (c.find_first_of(",\"\n") == std::string::npos) {
      line += c;
      continue;
    }
    line += '"';
    for (char ch : c) {
      if (ch == '"') line += '"';
      line += ch == '\n' ? ' ' : ch;
    }
    line += '"';
  }
  return line + "\n";
}

}  // namespace gbasim
