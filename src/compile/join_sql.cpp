// Join SQL; see join_sql.hpp.
#include "compile/join_sql.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/sql_text.hpp"
#include "compile/key_codec.hpp"
#include "compile/shared_sql.hpp"
#include "compile/transform_sql.hpp"

namespace trellis::compile {

using base::ident;
using base::qualified;
using catalog::join_item;
using catalog::JoinDef;
using catalog::on_condition;
using catalog::TransformDef;

namespace {

// The joins (indexes below `upto`) that join `j` reads through, transitively.
std::set<size_t> ancestors(const TransformDef& d, size_t upto) {
  std::set<size_t> out;
  std::vector<size_t> todo{upto};
  while (!todo.empty()) {
    size_t at = todo.back();
    todo.pop_back();
    for (const auto& e : d.joins[at].on)
      for (size_t k = 0; k < at; ++k)
        if (d.joins[k].alias == e.other_alias && out.insert(k).second) todo.push_back(k);
  }
  return out;
}

}  // namespace

std::vector<JoinedKeyMap> map_joined_keys(const TransformDef& d) {
  std::vector<JoinedKeyMap> out;
  for (size_t i = 0; i < d.joins.size(); ++i) {
    const JoinDef& j = d.joins[i];
    std::string from = d.source_item();
    for (size_t k : ancestors(d, i)) from += join_item(d.joins[k], false);
    std::vector<JoinDef::Equality> by_key;
    for (const auto& e : j.on)
      if (std::any_of(j.key.begin(), j.key.end(),
                      [&](const catalog::Column& c) { return c.name == e.column; }))
        by_key.push_back(e);
    from += fmt::format(" JOIN (SELECT {} FROM {} p WHERE p.tbl = {}) AS {} ON {}",
                        decode_key_columns(j.key, "p.key"), kPageTable, j.table_id, ident(j.alias),
                        on_condition(j, by_key));
    std::string root = std::to_string(d.source_table_id);
    out.push_back({j.table_id, fmt::format("INSERT INTO {} (tbl, key) SELECT {}, __e.key FROM "
                                           "(SELECT DISTINCT {} AS key FROM {}) __e WHERE {}",
                                           kPageTable, root, encode_key(d.key, ident(d.alias)),
                                           from, page_lacks(root, "__e.key"))});
  }
  return out;
}

}  // namespace trellis::compile
