// Incremental field planning; see incremental_plan.hpp.
#include "bind/incremental_plan.hpp"

#include <regex>

#include "bind/probe_sql.hpp"
#include "bind/table_description.hpp"
#include "lang/aggregate_calls.hpp"
#include "pg/sql_error.hpp"

namespace trellis::bind {
namespace {

using catalog::Accumulator;
using catalog::IncrementalCall;
using catalog::TransformDef;
using lang::AggregateCall;

// The argument's type as PostgreSQL resolves it, or "" when it cannot tell.
std::string argument_type(pg::Connection& conn, const TransformDef& def, const std::string& arg) {
  const std::string view = "trellis_probe_argument";
  try {
    // One round trip; the rollback drops the view.
    auto results = pg::Savepoint::around(
        conn, "trellis_argument",
        {{probe_view_over(view, def.from_clause(), arg), {}}, {view_column_sql(), {view}}},
        /*keep=*/false);
    return view_column_from(results.at(1), "f").type;
  } catch (const pg::SqlError&) {
    if (!conn.healthy()) throw;
    return "";
  }
}

bool exact_summable(const std::string& type) {
  static const std::regex kScaledNumeric(R"(numeric\(\d+,\d+\))");
  return type == "smallint" || type == "integer" || type == "bigint" ||
         std::regex_match(type, kScaledNumeric);
}

class Planner {
 public:
  Planner(pg::Connection& conn, TransformDef& def) : conn_(conn), def_(def) {}

  void plan_field(catalog::Field& field) {
    std::vector<Accumulator> before = def_.accumulators;
    std::vector<IncrementalCall> calls;
    for (const auto& call : lang::find_aggregate_calls(field.sql)) {
      auto planned = plan_call(call);
      if (!planned) {  // recomputed from the ledger
        def_.accumulators = std::move(before);
        return;
      }
      calls.push_back(*planned);
    }
    field.incremental = true;
    field.calls = std::move(calls);
  }

 private:
  std::optional<IncrementalCall> plan_call(const AggregateCall& call) {
    if (!call.builtin || !call.plain) return std::nullopt;
    IncrementalCall out{call.begin, call.end, "", 0, ""};
    if ((call.name == "min" || call.name == "max") &&
        (call.arg_qualifier.empty() || call.arg_qualifier == def_.alias) &&
        indexable(call.arg_column)) {
      out.kind = call.name;
      out.column = call.arg_column;
      return out;
    }
    if (call.name == "count" && call.star) {
      out.kind = "count_star";
      return out;
    }
    if (call.args != 1 || call.arg_sql.empty()) return std::nullopt;
    if (call.name == "count") {
      out.kind = "count";
      out.accumulator = accumulator(call.arg_sql, "", false);
      return out;
    }
    if (call.name != "sum" && call.name != "avg") return std::nullopt;
    std::string type = typed(call.arg_sql);
    if (!exact_summable(type)) return std::nullopt;
    out.kind = call.name;
    out.accumulator = accumulator(call.arg_sql, type, true);
    return out;
  }

  // A column the ledger holds whose type has a btree order (so MIN/MAX of
  // it can be read from an index on the ledger).
  bool indexable(const std::string& column) const {
    if (column.empty()) return false;
    for (const auto& c : def_.reads)
      if (c.name == column) return c.comparable;
    return false;
  }

  std::string typed(const std::string& arg) {
    for (const auto& a : def_.accumulators)
      if (a.arg_sql == arg && !a.arg_type.empty()) return a.arg_type;
    return argument_type(conn_, def_, arg);
  }

  // Index (1-based) of the accumulator for `arg`, created or widened to sum.
  int accumulator(const std::string& arg, const std::string& type, bool summed) {
    auto& accs = def_.accumulators;
    for (size_t i = 0; i < accs.size(); ++i) {
      if (accs[i].arg_sql != arg) continue;
      if (summed) {
        accs[i].summed = true;
        accs[i].arg_type = type;
      }
      return static_cast<int>(i + 1);
    }
    accs.push_back(Accumulator{arg, type, summed});
    return static_cast<int>(accs.size());
  }

  pg::Connection& conn_;
  TransformDef& def_;
};

}  // namespace

void plan_incremental(pg::Connection& conn, TransformDef& def) {
  def.accumulators.clear();
  Planner planner(conn, def);
  for (auto& f : def.fields) planner.plan_field(f);
}

}  // namespace trellis::bind
