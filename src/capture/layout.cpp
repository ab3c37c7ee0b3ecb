// Capture signatures and layouts; see layout.hpp.
#include "capture/layout.hpp"

#include <map>
#include <nlohmann/json.hpp>

namespace trellis::capture {

using catalog::Column;
using compile::PlacedColumn;

namespace {

nlohmann::json layout_to_json(const std::vector<PlacedColumn>& layout) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : layout) out.push_back({c.name, c.attnum});
  return out;
}

}  // namespace

std::vector<Column> union_reads(const std::vector<catalog::TransformDef>& readers, int table_id) {
  std::map<std::string, Column> by_name;
  for (const auto& d : readers)
    for (const auto& c : d.reads_of(table_id)) by_name.emplace(c.name, c);
  std::vector<Column> out;
  for (auto& [name, c] : by_name) out.push_back(c);
  return out;
}

std::vector<PlacedColumn> placed_columns(const bind::TableDescription& info) {
  std::vector<PlacedColumn> out;
  for (const auto& c : info.columns) out.push_back({c.column.name, c.attnum});
  return out;
}

std::string capture_signature(const catalog::CapturedTable& t, const std::vector<Column>& reads,
                              const std::vector<PlacedColumn>& layout,
                              const std::vector<compile::WatchedColumn>& moves) {
  // "v": the version of the functions' SQL, so that a new version that
  // renders them differently reinstalls them once (3: no pinned
  // search_path, every name qualified).
  nlohmann::json j = {{"v", 3},
                      {"key", catalog::columns_to_json(t.key)},
                      {"reads", catalog::columns_to_json(reads)},
                      {"layout", layout_to_json(layout)}};
  for (const auto& c : moves) j["moves"].push_back(c.name);
  return j.dump();
}

bool installed_move_guard(const catalog::CapturedTable& t) {
  if (!t.installed_signature) return false;
  auto j = nlohmann::json::parse(*t.installed_signature, nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains("moves");
}

bool layout_moved(const catalog::CapturedTable& t, const bind::TableDescription& info) {
  if (!t.installed_signature) return false;
  auto j = nlohmann::json::parse(*t.installed_signature, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("layout") || !j.contains("reads"))
    return false;  // already marked stale, or written by an earlier version (reinstalled anyway)
  auto reads = catalog::columns_from_json(j["reads"]);
  auto now = compile::capture_layout(t, reads, placed_columns(info));
  return layout_to_json(now) != j["layout"];
}

}  // namespace trellis::capture
