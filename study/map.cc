// Where each mode wins (study/map.h): the map's sweep file, each cell's verdict, the grid table,
// the crossover and the figure.
#include "study/map.h"

#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "base/files.h"
#include "experiment/result.h"
#include "experiment/spec.h"
#include "study/report.h"

namespace gbasim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// A JSON value as a cell shows it: strings bare.
std::string plain(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string values_text(const std::vector<SweepAxis>& axes, const std::vector<nlohmann::json>& v) {
  std::string text;
  for (size_t a = 0; a < axes.size(); ++a)
    text += (a ? ", " : "") + axes[a].key + " " + plain(v[a]);
  return text;
}

// The cell's verdict in a grid cell: the pick, then GBA's paired time against sync.
std::string grid_text(const MapCell& c) {
  if (!c.complete) return "incomplete";
  std::string text = c.pick.pick.empty() ? "none" : c.pick.pick;
  if (c.gba_time_vs_sync.n > 0)
    text += " (GBA " + ::gbasim::text(c.gba_time_vs_sync, "%.3g", true) + " s" +
            (c.gba_faster() ? " *" : "") + ")";
  return text;
}

Json cell_json(const std::vector<SweepAxis>& axes, const MapCell& c) {
  Json values = Json::object();
  for (size_t a = 0; a < axes.size(); ++a) values[axes[a].key] = c.values[a];
  return {{"values", values},
          {"complete", c.complete},
          {"pick", c.pick.pick.empty() ? Json() : Json(c.pick.pick)},
          {"why", c.pick.why},
          {"gba_time_vs_sync", interval_json(c.gba_time_vs_sync)},
          {"gba_auc_vs_sync", interval_json(c.gba_auc_vs_sync)},
          {"gba_faster_beyond_noise", c.gba_faster()}};
}

// The cells in the grid's order (the first axis slowest), each with its runs read.
std::vector<MapCell> read_cells(const MapOptions& o, const std::vector<SweepPoint>& points,
                                double target) {
  std::vector<MapCell> cells;
  std::map<std::string, size_t> index;  // a cell's values, as JSON, to its place
  std::vector<std::vector<SweepPoint>> cell_points;
  for (const SweepPoint& p : points) {
    const std::vector<nlohmann::json> values(p.values.begin() + 1, p.values.end());
    const std::string key = nlohmann::json(values).dump();
    if (!index.count(key)) {
      index[key] = cells.size();
      cells.push_back({});
      cells.back().values = values;
      cell_points.emplace_back();
    }
    cell_points[index[key]].push_back(p);
  }
  for (size_t i = 0; i < cells.size(); ++i) {
    std::map<std::string, ModeRuns> runs;
    bool complete = true;
    for (const std::string& m : o.modes) {
      runs[m] = read_mode(m, cell_points[i], o.out);
      for (double t : runs[m].simulated_time) complete = complete && std::isfinite(t);
    }
    const std::vector<nlohmann::json> values = cells[i].values;
    cells[i] = map_cell(o.modes, runs, o.seeds, o.tolerance, target);
    cells[i].values = values;
    cells[i].complete = complete;
  }
  return cells;
}

}  // namespace

std::vector<SweepAxis> default_map_axes() {
  return {{"stragglers.persistent_fraction", {0.125, 0.25, 0.5}},
          {"stragglers.persistent_slowdown", {1.25, 1.5, 2, 3}}};
}

std::string write_map_sweep(const MapOptions& o) {
  Json set = Json::object();
  for (const std::string& s : o.overrides) {
    const size_t eq = s.find('=');
    const Json value = Json::parse(s.substr(eq + 1), nullptr, false);
    set[s.substr(0, eq)] = value.is_discarded() ? Json(s.substr(eq + 1)) : value;
  }
  Json axes = Json::object();
  axes["training.mode"] = o.modes;
  for (const SweepAxis& a : o.axes) axes[a.key] = a.values;
  Json seeds = Json::array();
  for (int s = 1; s <= o.seeds; ++s) seeds.push_back(s);
  // The spec relative to the sweep file's folder, as a sweep file names its base, so that the
  // folder can move with the tree.
  const fs::path spec = fs::absolute(o.spec).lexically_normal();
  const fs::path relative = spec.lexically_relative(fs::absolute(o.out).lexically_normal());
  const std::string base = relative.empty() ? spec.string() : relative.string();
  const Json doc = {{"description", "gbasim map of " + o.spec + " (written by gbasim map)"},
                    {"base", base},
                    {"set", set},
                    {"axes", axes},
                    {"seeds", seeds}};
  const std::string path = (fs::path(o.out) / "sweep.json").string();
  fs::create_directories(o.out);
  write_json_atomically(path, doc);
  return path;
}

MapCell map_cell(const std::vector<std::string>& modes, const std::map<std::string, ModeRuns>& runs,
                 int seeds, double tolerance, double target) {
  MapCell c;
  c.pick = recommend(modes, runs, seeds, tolerance, target);
  if (runs.count("gba") && runs.count("sync")) {
    c.gba_time_vs_sync = paired(runs.at("gba").time_to_auc, runs.at("sync").time_to_auc);
    c.gba_auc_vs_sync = paired(runs.at("gba").final_auc, runs.at("sync").final_auc);
  }
  return c;
}

void write_map(const MapOptions& o) {
  const SweepSpec sweep = load_sweep((fs::path(o.out) / "sweep.json").string());
  const std::vector<SweepPoint> points = plan_sweep(sweep);
  const ExperimentSpec base = load_spec(o.spec, o.overrides);
  const double target = base.evaluation.target_auc;
  const std::vector<MapCell> cells = read_cells(o, points, target);

  std::ostringstream md;
  md << "Spec `" << o.spec << "`, " << o.seeds << " paired seeds, target AUC "
     << fmt(target, "%.4g")
     << ". Each cell names the mode `gbasim compare`'s rule picks (the fastest to the target "
        "on every seed among the modes whose final AUC is within "
     << fmt(o.tolerance, "%.4g")
     << " of sync's, and sync unless it is faster beyond the noise), then GBA's paired "
        "time-to-AUC difference against sync with its 95% interval; * where GBA is faster "
        "beyond the noise.\n\n";
  const SweepAxis& last = o.axes.back();
  const size_t columns = last.values.size();
  const bool rows = o.axes.size() > 1;
  md << "| " << (rows ? o.axes[0].key + " \\ " : std::string()) << last.key << " |";
  for (const auto& v : last.values) md << " " << plain(v) << " |";
  md << "\n| --- |";
  for (size_t c = 0; c < columns; ++c) md << " --- |";
  md << "\n";
  Json cells_json = Json::array(), crossover = Json::array();
  for (size_t r = 0; r * columns < cells.size(); ++r) {
    const MapCell& first = cells[r * columns];
    md << "| " << (rows ? plain(first.values[0]) : std::string()) << " |";
    Json first_faster;
    for (size_t c = 0; c < columns; ++c) {
      const MapCell& cell = cells[r * columns + c];
      md << " " << grid_text(cell) << " |";
      cells_json.push_back(cell_json(o.axes, cell));
      if (first_faster.is_null() && cell.gba_faster()) first_faster = Json(cell.values.back());
    }
    md << "\n";
    crossover.push_back({{"row", rows ? Json(first.values[0]) : Json()}, {last.key, first_faster}});
  }
  std::string where;
  for (const auto& c : crossover) {
    where += (where.empty() ? " " : "; ") +
             (rows ? o.axes[0].key + " " + plain(c["row"]) + ": " : std::string()) +
             (c[last.key].is_null() ? std::string("none in the grid") : plain(c[last.key]));
  }
  md << "\nCrossover (the first " << last.key
     << " where GBA reaches the target faster than sync beyond the noise):" << where
     << ".\n\nPer cell:\n\n";
  for (const MapCell& c : cells)
    md << "- " << values_text(o.axes, c.values) << ": "
       << (c.complete ? c.pick.why : "incomplete (runs missing)") << "\n";
  const std::string table = md.str();
  std::cout << table;
  Json axes = Json::array();
  for (const SweepAxis& a : o.axes) axes.push_back({{"key", a.key}, {"values", a.values}});
  const Json doc = {{"spec", o.spec},   {"overrides", o.overrides}, {"seeds", o.seeds},
                    {"modes", o.modes}, {"target_auc", target},     {"tolerance", o.tolerance},
                    {"axes", axes},     {"cells", cells_json},      {"crossover", crossover}};
  const fs::path out = o.out;
  write_json_atomically((out / "map.json").string(), doc);
  write_text_atomically((out / "map.md").string(), table);
  draw_figure("plot_map.py", {(out / "map.json").string(), (out / "figures" / "map").string()},
              "gbasim map");
  std::cerr << "gbasim map: wrote " << (out / "map.md").string() << " and "
            << (out / "map.json").string() << "\n";
}

}  // namespace gbasim
