// Random writes and the writer threads; see write_stream.hpp.
#include "generative/write_stream.hpp"

#include <fmt/format.h>

#include <chrono>

#include "pg/connection.hpp"

namespace trellis::gen {

namespace {

std::string key_match(Rng& rng, const Table& t) {
  std::string out;
  for (const auto& k : t.key)
    out +=
        fmt::format("{}{} = {}", out.empty() ? "" : " AND ", k.name, random_key_value(rng, t, k));
  return out;
}

std::string value_match(Rng& rng, const Column& c) {
  std::string v = random_value(rng, c.kind, c.tiny, !c.not_null);
  return v == "NULL" ? c.name + " IS NULL" : fmt::format("{} = {}", c.name, v);
}

std::string set_clause(Rng& rng, const Table& t) {
  std::string out;
  int n = static_cast<int>(uniform(rng, 1, 2));
  for (int i = 0; i < n; ++i) {
    const Column& c = pick(rng, t.columns);
    std::string v = chance(rng, 0.1) ? c.name : random_value(rng, c.kind, c.tiny, !c.not_null);
    out += fmt::format("{}{} = {}", i ? ", " : "", c.name, v);
  }
  return out;
}

std::string one_statement_through(Rng& rng, const Table& t);

// A write to a partitioned table goes through its root, or (an UPDATE or a
// DELETE, which only reach that partition's rows) straight into one
// partition. A plain table's stream is drawn as before.
std::string one_statement(Rng& rng, const Table& t) {
  if (t.partitions == 0 || !chance(rng, 0.3)) return one_statement_through(rng, t);
  Table leaf = t;
  leaf.name = t.partition(static_cast<int>(uniform(rng, 0, t.partitions - 1)));
  std::string stmt = one_statement_through(rng, leaf);
  return stmt.rfind("INSERT", 0) == 0 ? one_statement_through(rng, t) : stmt;
}

std::string one_statement_through(Rng& rng, const Table& t) {
  switch (uniform(rng, 0, 13)) {
    case 0:
    case 1:
    case 2: {
      std::string rows;
      int n = static_cast<int>(uniform(rng, 1, 3));
      for (int i = 0; i < n; ++i) rows += (i ? ", " : "") + random_row(rng, t);
      return fmt::format("INSERT INTO {} VALUES {} ON CONFLICT DO NOTHING", t.name, rows);
    }
    case 3: {
      const Column& c = pick(rng, t.columns);
      std::string keys;
      for (const auto& k : t.key) keys += (keys.empty() ? "" : ", ") + k.name;
      return fmt::format("INSERT INTO {} VALUES {} ON CONFLICT ({}) DO UPDATE SET {} = EXCLUDED.{}",
                         t.name, random_row(rng, t), keys, c.name, c.name);
    }
    case 4:
    case 5:
    case 6:
      return fmt::format("UPDATE {} SET {} WHERE {}", t.name, set_clause(rng, t),
                         key_match(rng, t));
    case 7:
      return fmt::format("UPDATE {} SET {} WHERE {}", t.name, set_clause(rng, t),
                         value_match(rng, pick(rng, t.columns)));
    case 8:
      return fmt::format("UPDATE {} SET id = {} WHERE {}", t.name,
                         random_key_value(rng, t, t.key[0]), key_match(rng, t));
    case 9:
      return fmt::format("DELETE FROM {} WHERE {}", t.name, key_match(rng, t));
    case 10:
      if (chance(rng, 0.3))
        return fmt::format("DELETE FROM {} WHERE {}", t.name,
                           value_match(rng, pick(rng, t.columns)));
      return fmt::format("DELETE FROM {} WHERE {}", t.name, key_match(rng, t));
    case 12:  // a MERGE that may change the key (and so move a row between partitions)
      return fmt::format(
          "MERGE INTO {0} USING (SELECT 1) __s ON {1} WHEN MATCHED THEN UPDATE SET id = {2}",
          t.name, key_match(rng, t), random_key_value(rng, t, t.key[0]));
    case 13:  // a MERGE with every action
      return fmt::format(
          "MERGE INTO {0} USING (SELECT 1) __s ON {1} WHEN MATCHED AND {2} THEN DELETE WHEN "
          "MATCHED THEN UPDATE SET {3} WHEN NOT MATCHED THEN INSERT VALUES {4}",
          t.name, key_match(rng, t), value_match(rng, pick(rng, t.columns)), set_clause(rng, t),
          random_row(rng, t));
    default: {
      // A no-op update, or for a numeric only its scale changes (1 -> 1.000).
      const Column& c = pick(rng, t.columns);
      return fmt::format("UPDATE {} SET {} = {}{} WHERE {}", t.name, c.name, c.name,
                         c.kind == Kind::numeric ? " + 0.000" : "", key_match(rng, t));
    }
  }
}

}  // namespace

std::string random_write(Rng& rng, const Schema& schema) {
  const Table& t = pick(rng, schema.tables);
  if (chance(rng, 0.005))
    return fmt::format(
        "BEGIN; TRUNCATE {}; INSERT INTO {} VALUES {} ON CONFLICT DO NOTHING; COMMIT", t.name,
        t.name, random_row(rng, t));
  if (!chance(rng, 0.2)) return one_statement(rng, t);
  std::string out = "BEGIN";
  int n = static_cast<int>(uniform(rng, 2, 4));
  for (int i = 0; i < n; ++i) out += "; " + one_statement(rng, pick(rng, schema.tables));
  return out + (chance(rng, 0.15) ? "; ROLLBACK" : "; COMMIT");
}

WriteStream::WriteStream(std::string url, const Schema& schema, std::vector<uint64_t> seeds,
                         int ops_each)
    : url_(std::move(url)),
      schema_(schema),
      ops_each_(ops_each),
      total_(ops_each * static_cast<int>(seeds.size())) {
  for (uint64_t s : seeds) threads_.emplace_back(&WriteStream::run, this, s);
}

WriteStream::~WriteStream() {
  join();
}

void WriteStream::join() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void WriteStream::run(uint64_t seed) {
  struct Finish {
    std::atomic<int>& n;
    ~Finish() { ++n; }
  } finish{finished_};
  Rng rng(seed);
  std::unique_ptr<pg::Connection> conn;
  auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  for (int i = 0; i < ops_each_; ++i) {
    std::string stmt = random_write(rng, schema_);
    for (;;) {
      try {
        if (!conn)
          conn = pg::Connection::open(
              url_, {.search_path = "public", .application_name = "generative_writer"});
      } catch (const std::exception&) {
        // The server is restarting: try again shortly, for a bounded time.
        if (std::chrono::steady_clock::now() > give_up) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      try {
        conn->exec_script(stmt);
      } catch (const std::exception&) {
        ++failed_;
        try {
          // A failed transaction block stays open (aborted) until rolled back.
          if (stmt.starts_with("BEGIN")) conn->exec_script("ROLLBACK");
          conn->exec("SELECT 1");
        } catch (const std::exception&) {
          conn.reset();  // the connection is gone; the statement counts as failed
        }
      }
      break;
    }
    ++done_;
  }
}

}  // namespace trellis::gen
