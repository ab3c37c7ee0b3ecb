// What Trellis's role needs (README.md, "Privileges"; bind/privileges.hpp,
// catalog/migrate.cpp), checked at the call: a role that lacks a privilege
// gets a validation error naming the object, the privilege and the GRANT to
// run, nothing is registered, and once the grant is given the same call goes
// through and the transform converges.
#include <fmt/format.h>

#include "support/harness.hpp"

namespace trellis::test {

namespace {

constexpr const char* kRole = "trellis_privileges_app";

}  // namespace

class Privileges : public TrellisTest {
 protected:
  void SetUp() override {
    TrellisTest::SetUp();
    ensure_login_role(kRole);
    db_ = query("SELECT current_database()").get(0, 0);
    sql("CREATE TABLE pv_src (id int PRIMARY KEY, v int); INSERT INTO pv_src SELECT g, g FROM "
        "generate_series(1, 20) g; CREATE SCHEMA pv_out");
  }
  std::unique_ptr<Trellis> connect_as_role(int drain_threads = 0, bool staging = false) {
    Options o = options(drain_threads, staging);
    o.url = url_as(kRole);
    return Trellis::connect(o);
  }
  // The message of the validation error `f` throws ("" when it does not).
  template <typename F>
  std::string refusal(F&& f) {
    try {
      f();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::validation) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "not refused";
    return "";
  }
  std::string db_;
};

TEST_F(Privileges, EachMissingPrivilegeIsRefusedWithTheGrantThatGivesIt) {
  std::string role = kRole;
  // No CREATE on the database: the catalog schema cannot be created.
  std::string msg = refusal([&] { connect_as_role(); });
  EXPECT_NE(msg.find(fmt::format("role {} may not create the Trellis catalog schema", role)),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find(fmt::format("run: GRANT CREATE ON DATABASE {} TO {}", db_, role)),
            std::string::npos)
      << msg;
  EXPECT_EQ(query("SELECT count(*) FROM pg_namespace WHERE nspname = 'trellis'").get_int(0, 0), 0);

  sql(fmt::format("GRANT CREATE ON DATABASE \"{}\" TO {}", db_, role));
  auto t = connect_as_role();
  const std::string define = "TRANSFORM pv_out.pv_t FROM pv_src SELECT v * 2 AS v2";

  msg = refusal([&] { t->apply(define); });
  EXPECT_NE(msg.find(fmt::format("role \"{}\" lacks SELECT on table \"public\".\"pv_src\", which "
                                 "transform \"pv_out\".\"pv_t\" reads; run: GRANT SELECT ON "
                                 "\"public\".\"pv_src\" TO \"{}\"",
                                 role, role)),
            std::string::npos)
      << msg;

  sql(fmt::format("GRANT SELECT ON pv_src TO {}", role));
  msg = refusal([&] { t->apply(define); });
  EXPECT_NE(msg.find(fmt::format(
                "role \"{}\" cannot install capture on table \"public\".\"pv_src\"", role)),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find(fmt::format("run: GRANT \"postgres\" TO \"{0}\" (or ALTER TABLE "
                                 "\"public\".\"pv_src\" OWNER TO \"{0}\")",
                                 role)),
            std::string::npos)
      << msg;

  sql(fmt::format("ALTER TABLE pv_src OWNER TO {}", role));
  msg = refusal([&] { t->apply(define); });
  EXPECT_NE(msg.find(fmt::format("role \"{0}\" lacks USAGE on schema \"pv_out\", where the target "
                                 "of transform \"pv_out\".\"pv_t\" is created; run: GRANT USAGE, "
                                 "CREATE ON SCHEMA \"pv_out\" TO \"{0}\"",
                                 role)),
            std::string::npos)
      << msg;
  sql(fmt::format("GRANT USAGE ON SCHEMA pv_out TO {}", role));
  msg = refusal([&] { t->apply(define); });
  EXPECT_NE(msg.find(fmt::format("role \"{}\" lacks CREATE on schema \"pv_out\"", role)),
            std::string::npos)
      << msg;
  EXPECT_TRUE(t->definitions().empty()) << "a refused definition registers nothing";

  sql(fmt::format("GRANT CREATE ON SCHEMA pv_out TO {}", role));
  EXPECT_EQ(t->apply(define).status, "waiting_to_backfill");
  t.reset();
  auto running = connect_as_role(2, true);
  await_status(*running, "pv_out.pv_t", "live");
  sql("UPDATE pv_src SET v = v + 1 WHERE id <= 5");
  await_converged(*running);
  expect_oracle("pv_out.pv_t");
}

// Another role's catalog: refused at connect, naming its owner and the grant.
TEST_F(Privileges, ACatalogOfAnotherRoleIsRefusedAtConnect) {
  start(0, false);  // the catalog, created by postgres
  sql(fmt::format("GRANT CREATE ON DATABASE \"{}\" TO {}", db_, kRole));
  std::string msg = refusal([&] { connect_as_role(); });
  EXPECT_NE(msg.find(fmt::format("the catalog schema \"trellis\" belongs to role postgres, and "
                                 "role {0} is not a member of it; connect as postgres, or run: "
                                 "GRANT postgres TO {0}",
                                 kRole)),
            std::string::npos)
      << msg;
}

}  // namespace trellis::test
