// How statements and API calls name transforms (README, "The statement language"): a target name
// with an optional schema, and for PAUSE/RESUME and sample_quarantined one
// field of it. A dotted `a.b` is transform b in schema a when there is one,
// else field b of transform a; `s.a.b` is field b of transform s.a. Every
// lookup that fails says the same thing, whichever call made it.
#include <fmt/format.h>

#include "api/instance.hpp"

namespace trellis::api {

catalog::TransformDef require_transform(Trellis::Impl& impl, pg::Connection& conn,
                                        const lang::QualifiedName& name) {
  std::string schema = name.schema.value_or(impl.options.target_schema);
  auto def = impl.store.transform(conn, schema, name.name);
  if (!def)
    throw Error(ErrorCode::not_found,
                fmt::format("no transform named {}.{}; `trellis status` lists the transforms",
                            schema, name.name));
  return *def;
}

catalog::TransformDef require_transform(Trellis::Impl& impl, pg::Connection& conn,
                                        const std::string& target) {
  auto [schema, table] = split_target(impl, target);
  return require_transform(impl, conn, lang::QualifiedName{schema, table});
}

Address locate(Trellis::Impl& impl, pg::Connection& conn, const lang::QualifiedName& target,
               const std::optional<std::string>& column) {
  if (column && !target.schema && impl.store.transform(conn, target.name, *column))
    return {require_transform(impl, conn, {target.name, *column}), std::nullopt};
  return {require_transform(impl, conn, target), column};
}

Address locate(Trellis::Impl& impl, pg::Connection& conn, const std::string& dotted) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t dot = dotted.find('.', start);
    parts.push_back(dotted.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (parts.size() == 1) return locate(impl, conn, {std::nullopt, parts[0]}, std::nullopt);
  if (parts.size() == 2) return locate(impl, conn, {std::nullopt, parts[0]}, parts[1]);
  if (parts.size() == 3) return locate(impl, conn, {parts[0], parts[1]}, parts[2]);
  throw Error(ErrorCode::validation,
              fmt::format("\"{}\" has too many name parts; expected target, schema.target, "
                          "target.field or schema.target.field",
                          dotted));
}

std::vector<catalog::TransformDef> readers_of_target(Trellis::Impl& impl, pg::Connection& conn,
                                                     const catalog::TransformDef& def) {
  std::vector<catalog::TransformDef> out;
  for (auto& d : impl.store.transforms(conn))
    if (d.source_schema == def.target_schema && d.source_table == def.target_table)
      out.push_back(d);
  return out;
}

}  // namespace trellis::api
