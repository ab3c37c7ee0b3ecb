// The lifecycle table enforced by the catalog's own statements: every
// operation of catalog/lifecycle (and the halt of compile/quarantine_sql)
// is run against a real catalog row from every status, and it changes the
// row exactly when the table (catalog/transitions) allows the operation from
// that status, leaving the status the table gives; otherwise the row is as
// it was.
#include "catalog/lifecycle.hpp"

#include <fmt/format.h>

#include "catalog/transitions.hpp"
#include "compile/quarantine_sql.hpp"
#include "compile/transform_sql.hpp"
#include "support/harness.hpp"

namespace trellis::test {

using catalog::Operation;
using catalog::Status;

class LifecycleWalk : public TrellisTest {
 protected:
  void SetUp() override {
    TrellisTest::SetUp();
    sql("CREATE TABLE src (id int PRIMARY KEY, v int); INSERT INTO src VALUES (1, 10)");
    api_ = start(0, false);  // no workers: only the operation under test moves the row
  }

  // A fresh transform whose row is at `status` (and, for backfilling, owned
  // by `conn`'s backend, past awaiting capture, as a build mid-way is).
  catalog::TransformDef at(pg::Connection& conn, Status status) {
    std::string name = fmt::format("t{}", ++n_);
    api_->apply(fmt::format("TRANSFORM {} FROM src SELECT v AS f", name));
    conn.exec(
        fmt::format("UPDATE trellis.transforms SET status = '{}', build_phase = CASE WHEN "
                    "'{}' = 'backfilling' THEN 'source' END, build_owner_pid = "
                    "pg_backend_pid() WHERE target_table = '{}'",
                    catalog::name(status), catalog::name(status), name));
    return *store_.transform(conn, "public", name);
  }

  std::optional<Status> status_now(pg::Connection& conn, int id) {
    auto d = store_.transform_by_id(conn, id);
    if (!d) return std::nullopt;
    return d->status;
  }

  // Runs `op` through `run` from every status and checks the outcome.
  void walk(Operation op,
            const std::function<void(pg::Connection&, const catalog::TransformDef&)>& run) {
    const auto& t = catalog::transition(op);
    for (auto from : {Status::waiting_to_backfill, Status::backfilling, Status::live,
                      Status::paused, Status::quarantined}) {
      auto conn = pg::Connection::open(url_);
      for (const auto& ddl : compile::create_temp_tables_sql()) conn->exec(ddl);
      auto def = at(*conn, from);
      pg::Transaction txn(*conn);
      run(*conn, def);
      txn.commit();
      auto now = status_now(*conn, def.id);
      if (catalog::allowed(op, from)) {
        EXPECT_EQ(now, t.to) << t.name << " from " << catalog::name(from);
      } else {
        EXPECT_EQ(now, from) << t.name << " must not apply from " << catalog::name(from);
      }
    }
  }

  catalog::Store store_{"trellis"};
  catalog::Lifecycle lifecycle_{store_};
  std::unique_ptr<Trellis> api_;
  int n_ = 0;
};

TEST_F(LifecycleWalk, Pause) {
  walk(Operation::pause,
       [&](pg::Connection& c, const catalog::TransformDef& d) { lifecycle_.pause(c, d.id); });
}

TEST_F(LifecycleWalk, PauseOnDrift) {
  walk(Operation::pause_on_drift, [&](pg::Connection& c, const catalog::TransformDef& d) {
    bool paused = lifecycle_.pause_on_drift(c, d.id, R"({"kind":"capture","error":"e"})");
    EXPECT_EQ(paused, catalog::running(d.status));
  });
}

TEST_F(LifecycleWalk, Halt) {
  auto halt = compile::compile_quarantine("trellis").halt;
  walk(Operation::halt, [&](pg::Connection& c, const catalog::TransformDef& d) {
    c.exec(halt, {std::to_string(d.id), "permission denied", "42501"});
  });
}

TEST_F(LifecycleWalk, Resume) {
  walk(Operation::resume, [&](pg::Connection& c, const catalog::TransformDef& d) {
    EXPECT_EQ(lifecycle_.resume(c, d.id, d), catalog::allowed(Operation::resume, d.status));
  });
}

TEST_F(LifecycleWalk, Drop) {
  const auto& t = catalog::transition(Operation::drop);
  for (auto from : {Status::waiting_to_backfill, Status::backfilling, Status::live, Status::paused,
                    Status::quarantined}) {
    auto conn = pg::Connection::open(url_);
    auto def = at(*conn, from);
    bool dropped = lifecycle_.drop(*conn, def.id);
    EXPECT_EQ(dropped, catalog::allowed(Operation::drop, from)) << t.name << catalog::name(from);
    EXPECT_EQ(status_now(*conn, def.id), dropped ? std::nullopt : std::optional(from));
  }
}

TEST_F(LifecycleWalk, RebuildInPlace) {
  walk(Operation::rebuild_in_place, [&](pg::Connection& c, const catalog::TransformDef& d) {
    lifecycle_.rebuild_readers_of(c, d.source_table_id);
  });
}

TEST_F(LifecycleWalk, StartFieldBuild) {
  walk(Operation::start_field_build, [&](pg::Connection& c, const catalog::TransformDef& d) {
    lifecycle_.start_field_build(c, d.id, std::vector<std::string>{"f"});
  });
}

TEST_F(LifecycleWalk, StartBuild) {
  walk(Operation::start_build, [&](pg::Connection& c, const catalog::TransformDef& d) {
    catalog::Versions covered;
    covered.add(d);
    lifecycle_.start_builds(c, d.source_table_id, "public.src", covered);
  });
}

TEST_F(LifecycleWalk, GoLive) {
  auto go_live = lifecycle_.build_statements(compile::kPageTable).go_live;
  walk(Operation::go_live, [&](pg::Connection& c, const catalog::TransformDef& d) {
    c.exec(go_live, {std::to_string(d.id)});
  });
}

TEST_F(LifecycleWalk, Quarantine) {
  auto q = compile::compile_quarantine("trellis");
  walk(Operation::quarantine, [&](pg::Connection& c, const catalog::TransformDef& d) {
    // Enough held keys to trip the fuse, none narrowed to a field.
    for (int k = 0; k < compile::kHeldKeysToTrip; ++k)
      c.exec(fmt::format("INSERT INTO trellis.held_keys (transform_id, tbl, key, error, sqlstate, "
                         "held, held_at, charges) VALUES ($1::int, $2::int, ARRAY['{}'], 'e', "
                         "'22012', true, now(), 5)",
                         k),
             {std::to_string(d.id), std::to_string(d.source_table_id)});
    c.exec(q.trip_fuse, {std::to_string(d.id)});
  });
}

}  // namespace trellis::test
