// The small transaction helpers of pg/: the savepoint guard, DDL under a
// short lock timeout, the named SQLSTATEs, and a pipeline over a connection
// whose server went away.
#include <future>

#include "pg/lock_timeout.hpp"
#include "pg/sql_error.hpp"
#include "support/harness.hpp"

namespace trellis::test {

class PgHelpers : public TrellisTest {
 protected:
  int64_t count(pg::Connection& conn) {
    return conn.exec("SELECT count(*) FROM public.helper_rows").get_int(0, 0);
  }
};

TEST_F(PgHelpers, SavepointReleaseKeepsAndRollbackUndoes) {
  sql("CREATE TABLE public.helper_rows (id int)");
  auto conn = pg::Connection::open(url_);
  pg::Transaction txn(*conn);
  {
    pg::Savepoint kept(*conn, "trellis_test");
    conn->exec("INSERT INTO public.helper_rows VALUES (1)");
    kept.release();
  }
  {
    pg::Savepoint undone(*conn, "trellis_test");
    conn->exec("INSERT INTO public.helper_rows VALUES (2)");
    undone.rollback();
    EXPECT_EQ(count(*conn), 1);
  }
  txn.commit();
  EXPECT_EQ(query("SELECT count(*) FROM public.helper_rows").get_int(0, 0), 1);
}

// Left without release(), the guard rolls back, also out of a failed
// statement, and the transaction goes on.
TEST_F(PgHelpers, SavepointRollsBackWhenLeftAndAfterAnError) {
  sql("CREATE TABLE public.helper_rows (id int)");
  auto conn = pg::Connection::open(url_);
  pg::Transaction txn(*conn);
  conn->exec("INSERT INTO public.helper_rows VALUES (1)");
  try {
    pg::Savepoint savepoint(*conn, "trellis_test");
    conn->exec("INSERT INTO public.helper_rows VALUES (2)");
    conn->exec("SELECT 1 / 0");
    FAIL() << "division by zero went through";
  } catch (const pg::SqlError& e) {
    EXPECT_EQ(e.failure_class(), pg::FailureClass::data);
  }
  {
    pg::Savepoint left(*conn, "trellis_test");
    conn->exec("INSERT INTO public.helper_rows VALUES (3)");
  }
  EXPECT_EQ(count(*conn), 1);
  txn.commit();
  EXPECT_EQ(query("SELECT count(*) FROM public.helper_rows").get_int(0, 0), 1);
}

// around(): statements in one round trip inside a savepoint, kept or
// undone as asked; a failing one is undone with the rest and rethrown, and
// the transaction goes on.
TEST_F(PgHelpers, SavepointAroundKeepsUndoesAndUndoesAFailure) {
  sql("CREATE TABLE public.helper_rows (id int)");
  auto conn = pg::Connection::open(url_);
  pg::Transaction txn(*conn);
  auto kept = pg::Savepoint::around(*conn, "trellis_test",
                                    {{"INSERT INTO public.helper_rows VALUES (1)", {}},
                                     {"SELECT count(*) FROM public.helper_rows", {}}},
                                    /*keep=*/true);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1].get_int(0, 0), 1);
  auto undone = pg::Savepoint::around(*conn, "trellis_test",
                                      {{"INSERT INTO public.helper_rows VALUES (2)", {}}},
                                      /*keep=*/false);
  EXPECT_EQ(undone.size(), 1u);
  EXPECT_EQ(count(*conn), 1);
  EXPECT_THROW(pg::Savepoint::around(
                   *conn, "trellis_test",
                   {{"INSERT INTO public.helper_rows VALUES (3)", {}}, {"SELECT 1 / 0", {}}},
                   /*keep=*/true),
               pg::SqlError);
  EXPECT_EQ(count(*conn), 1);
  txn.commit();
  EXPECT_EQ(query("SELECT count(*) FROM public.helper_rows").get_int(0, 0), 1);
}

TEST_F(PgHelpers, UnderLockTimeoutCommitsOrReportsTheLockNotAvailable) {
  sql("CREATE TABLE helper_rows (id int)");
  auto conn = pg::Connection::open(url_);
  EXPECT_TRUE(pg::try_under_lock_timeout(*conn, [&] {
    conn->exec("INSERT INTO public.helper_rows VALUES (1)");
    EXPECT_EQ(conn->exec("SHOW lock_timeout").get(0, 0), "50ms");
  }));
  EXPECT_EQ(query("SELECT count(*) FROM helper_rows").get_int(0, 0), 1);

  auto holder = pg::Connection::open(url_);
  pg::Transaction held(*holder);
  holder->exec("LOCK TABLE public.helper_rows IN ACCESS EXCLUSIVE MODE");
  EXPECT_FALSE(pg::try_under_lock_timeout(*conn, [&] {
    conn->exec("CREATE TABLE public.helper_other (id int)");
    conn->exec("TRUNCATE public.helper_rows");
  }));
  EXPECT_TRUE(conn->healthy());
  EXPECT_TRUE(conn->exec("SELECT to_regclass('public.helper_other') IS NULL").get_bool(0, 0));
  // Outside the transaction the pinned session timeout is back.
  EXPECT_EQ(conn->exec("SHOW lock_timeout").get(0, 0), "5s");
}

TEST_F(PgHelpers, UnderLockTimeoutPassesOtherErrorsOn) {
  auto conn = pg::Connection::open(url_);
  try {
    pg::try_under_lock_timeout(*conn, [&] { conn->exec("SELECT * FROM public.helper_missing"); });
    FAIL() << "the missing table went unnoticed";
  } catch (const pg::SqlError& e) {
    EXPECT_TRUE(pg::is_undefined_table(e)) << e.sqlstate();
    EXPECT_FALSE(pg::is_lock_not_available(e));
  }
}

TEST_F(PgHelpers, NamedSqlstates) {
  auto conn = pg::Connection::open(url_);
  auto error_of = [&](const std::string& statement) {
    try {
      conn->exec(statement);
    } catch (const pg::SqlError& e) {
      return e;
    }
    ADD_FAILURE() << statement << " went through";
    return pg::SqlError("", "");
  };
  conn->exec("CREATE TABLE public.helper_rows (id int, g int)");
  EXPECT_TRUE(pg::is_duplicate_table(error_of("CREATE TABLE public.helper_rows (id int)")));
  EXPECT_TRUE(pg::is_undefined_table(error_of("SELECT 1 FROM public.helper_missing")));
  EXPECT_TRUE(pg::is_grouping_error(error_of("SELECT id FROM public.helper_rows GROUP BY g")));
  EXPECT_TRUE(pg::is_duplicate_database(error_of(
      "CREATE DATABASE " + conn->quote_ident(conn->exec("SELECT current_database()").get(0, 0)))));
  EXPECT_TRUE(pg::is_connection_lost(pg::SqlError("", "server closed the connection")));
  EXPECT_FALSE(pg::is_connection_lost(error_of("SELECT 1 / 0")));
}

// A pipeline sent over a connection whose backend is gone (the server
// restarted, or the backend was terminated) fails with the connection lost,
// at once, however the loss shows: at a send, at the sync, or as a result.
// It used to wait for a sync that was never sent, spinning forever on the
// empty results, so a drain thread caught by a restart never came back.
TEST_F(PgHelpers, APipelineOverALostConnectionFailsInsteadOfWaiting) {
  for (int statements : {1, 3, 200}) {
    auto conn = pg::Connection::open(url_);
    int pid = conn->backend_pid();
    sql("SELECT pg_terminate_backend(" + std::to_string(pid) + ")");
    ASSERT_TRUE(eventually(
        [&] {
          return query("SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = " +
                       std::to_string(pid))
              .get_bool(0, 0);
        },
        std::chrono::seconds(10)));
    std::vector<std::pair<std::string, std::vector<pg::Param>>> stmts;
    for (int i = 0; i < statements; ++i) stmts.push_back({"SELECT $1::int", {std::to_string(i)}});
    auto done = std::async(std::launch::async, [&] {
      try {
        conn->pipeline(stmts);
        return std::string("went through");
      } catch (const pg::SqlError& e) {
        return std::string(pg::is_connection_lost(e) || !conn->healthy() ? "lost" : e.what());
      }
    });
    ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready)
        << statements << " statements: the pipeline still waits on a lost connection";
    EXPECT_EQ(done.get(), "lost") << statements << " statements";
    EXPECT_FALSE(conn->healthy());
  }
}

}  // namespace trellis::test
