// libFuzzer target for the statement parser (SPEC §2): parse_statement and
// split_statements on arbitrary bytes. The contract checked here: no crash,
// no hang, no sanitizer report, and every rejection is a trellis::Error with
// code parse or validation and a non-empty message. Anything else (another
// exception type, code internal, an empty message, a broken invariant of an
// accepted statement) aborts, so libFuzzer records the input as a crash.
// An accepted TRANSFORM must also survive the round trip RESUME depends on:
// its canonical SQL, put back into a statement the way the catalog stores
// it, parses again to the very same canonical SQL.
// Build and run: see docs/testing.md.
//
// Known, reported bugs can be stepped over so a run explores past them:
// TRELLIS_FUZZ_SKIP=utf8 ignores inputs that are not valid UTF-8 (they make
// libpg_query's JSON output unreadable to nlohmann::json, which throws
// json::parse_error instead of trellis::Error). Unset, every input counts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>
#include <variant>
#include <vector>

#include "lang/statement.hpp"
#include "trellis/error.hpp"

namespace {

using trellis::Error;
using trellis::ErrorCode;
namespace lang = trellis::lang;

constexpr std::size_t kMaxNameBytes = 63;  // PostgreSQL's NAMEDATALEN - 1

[[noreturn]] void die(const char* what, const std::string& detail, std::string_view input) {
  std::fprintf(stderr,
               "\n*** fuzz_parser contract violation: %s\n*** detail: %s\n*** input (%zu bytes)\n",
               what, detail.c_str(), input.size());
  std::abort();
}

void check_name(const std::string& name, const char* what, std::string_view input) {
  if (name.empty()) die("accepted an empty name", what, input);
  if (name.size() > kMaxNameBytes) die("accepted a name longer than 63 bytes", what, input);
}

void check_expr(const lang::Expr& expr, std::string_view input) {
  if (expr.sql.empty()) die("accepted expression has empty canonical SQL", expr.text, input);
  if (expr.text.empty()) die("accepted expression has empty text", expr.sql, input);
  if (expr.position < 0 ||
      static_cast<std::size_t>(expr.position) + expr.text.size() > input.size() ||
      input.substr(static_cast<std::size_t>(expr.position), expr.text.size()) != expr.text) {
    die("expression position does not point at its text", expr.text, input);
  }
  for (const lang::ColumnRef& col : expr.columns) {
    if (col.column.empty()) die("empty column reference", expr.text, input);
    if (col.position < 0 || static_cast<std::size_t>(col.position) > input.size()) {
      die("column reference position out of range", expr.text, input);
    }
  }
}

void check_round_trip(const lang::TransformStmt& t, std::string_view input);

// Invariants of an accepted statement: what later stages rely on.
void check_accepted(const lang::Statement& stmt, std::string_view input) {
  if (const auto* t = std::get_if<lang::TransformStmt>(&stmt)) {
    check_name(t->target.name, "target", input);
    if (t->target.schema) check_name(*t->target.schema, "target schema", input);
    check_name(t->source.name, "source", input);
    if (t->source.schema) check_name(*t->source.schema, "source schema", input);
    if (t->alias) check_name(*t->alias, "alias", input);
    for (const std::string& key : t->key_columns) check_name(key, "key column", input);
    if (t->fields.empty()) die("accepted a TRANSFORM without fields", "", input);
    for (const lang::Field& field : t->fields) {
      check_name(field.name, "field", input);
      check_expr(field.expr, input);
    }
    for (const lang::Expr& group : t->group_by) check_expr(group, input);
    if (t->where) check_expr(*t->where, input);
    if (t->text != input) die("TransformStmt::text differs from the input", t->text, input);
    check_round_trip(*t, input);
  } else if (const auto* p = std::get_if<lang::PauseStmt>(&stmt)) {
    check_name(p->target.name, "pause target", input);
    if (p->column) check_name(*p->column, "pause column", input);
  } else if (const auto* r = std::get_if<lang::ResumeStmt>(&stmt)) {
    check_name(r->target.name, "resume target", input);
    if (r->column) check_name(*r->column, "resume column", input);
  } else if (const auto* d = std::get_if<lang::DropTransformStmt>(&stmt)) {
    check_name(d->target.name, "drop target", input);
  }
}

std::string ident(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

// The statement as the catalog stores it, built the way
// bind::normalized_statement (src/bind/validate.cpp) builds it from the
// canonical SQL: RESUME and `trellis dump`/`restore` parse this text again.
// Names the catalog would supply (schema, key, group columns) are stand-ins.
std::string normalized(const lang::TransformStmt& t) {
  std::string out = "TRANSFORM " + ident(t.target.schema.value_or("public")) + "." +
                    ident(t.target.name) + " FROM " + ident(t.source.schema.value_or("public")) +
                    "." + ident(t.source.name) + " AS " + ident(t.alias.value_or(t.source.name)) +
                    " KEY (" + ident(t.key_columns.empty() ? "id" : t.key_columns[0]) + ")";
  if (!t.group_by.empty()) {
    out += " GROUP BY ";
    for (std::size_t i = 0; i < t.group_by.size(); ++i)
      out += (i ? ", " : "") + ident("g" + std::to_string(i));
    if (t.without_source_index) out += " WITHOUT SOURCE INDEX";
  }
  out += " SELECT ";
  for (std::size_t i = 0; i < t.fields.size(); ++i) {
    out += (i ? ", " : "") + t.fields[i].expr.sql + " AS " + ident(t.fields[i].name);
  }
  if (t.where) out += " WHERE " + t.where->sql;
  return out;
}

// The canonical SQL must read back as itself from the normalised statement.
void check_round_trip(const lang::TransformStmt& t, std::string_view input) {
  std::string again = normalized(t);
  lang::Statement reparsed;
  try {
    reparsed = lang::parse_statement(again);
  } catch (const Error& error) {
    die("the normalised statement does not parse again", again + "\n*** error: " + error.what(),
        input);
  }
  const auto* r = std::get_if<lang::TransformStmt>(&reparsed);
  if (r == nullptr || r->fields.size() != t.fields.size() ||
      r->where.has_value() != t.where.has_value()) {
    die("the normalised statement parses to a different shape", again, input);
  }
  for (std::size_t i = 0; i < t.fields.size(); ++i) {
    if (r->fields[i].name != t.fields[i].name || r->fields[i].expr.sql != t.fields[i].expr.sql) {
      die("a field changes when the normalised statement is parsed again",
          again + "\n*** was: " + t.fields[i].expr.sql + "\n*** now: " + r->fields[i].expr.sql,
          input);
    }
  }
  if (t.where && r->where->sql != t.where->sql) {
    die("WHERE changes when the normalised statement is parsed again",
        again + "\n*** was: " + t.where->sql + "\n*** now: " + r->where->sql, input);
  }
}

// Runs `call`; a trellis::Error(parse|validation) with a message is a clean
// refusal, everything else that escapes aborts.
template <class Call>
bool refuses_cleanly(Call&& call, std::string_view input) {
  try {
    call();
    return false;
  } catch (const Error& error) {
    std::string message = error.what();
    if (message.empty()) die("trellis::Error with an empty message", "", input);
    if (error.code() != ErrorCode::parse && error.code() != ErrorCode::validation) {
      die("trellis::Error with a code other than parse/validation",
          std::string(trellis::to_string(error.code())) + ": " + message, input);
    }
    return true;
  } catch (const std::exception& other) {
    die("exception other than trellis::Error",
        std::string(typeid(other).name()) + ": " + other.what(), input);
  } catch (...) {
    die("non-std exception", "", input);
  }
}

// Well-formed UTF-8 as RFC 3629 defines it (no overlongs, no surrogates),
// the same rule nlohmann::json applies to the strings it reads.
bool valid_utf8(std::string_view s) {
  auto at = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  std::size_t i = 0;
  while (i < s.size()) {
    unsigned char c = at(i);
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
    if (c < 0x80) {
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    if (len > 1 && (at(i + 1) < lo || at(i + 1) > hi)) return false;
    for (std::size_t k = 2; k < len; ++k) {
      if ((at(i + k) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

bool skip_known(std::string_view input) {
  static const std::string skip = [] {
    const char* env = std::getenv("TRELLIS_FUZZ_SKIP");
    return std::string(env == nullptr ? "" : env);
  }();
  return skip.find("utf8") != std::string::npos && !valid_utf8(input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (skip_known(text)) return -1;  // -1: libFuzzer keeps it out of the corpus

  refuses_cleanly([&] { check_accepted(lang::parse_statement(text), text); }, text);

  std::vector<std::string> pieces;
  refuses_cleanly([&] { pieces = lang::split_statements(text); }, text);
  std::size_t from = 0;
  for (const std::string& piece : pieces) {
    if (piece.empty()) die("split_statements returned an empty statement", "", text);
    std::size_t at = text.find(piece, from);
    if (at == std::string::npos)
      die("split_statements piece is not in order in the input", piece, text);
    from = at + piece.size();
    if (pieces.size() > 1 || piece != text) {
      refuses_cleanly([&] { check_accepted(lang::parse_statement(piece), piece); }, piece);
    }
  }
  return 0;
}
