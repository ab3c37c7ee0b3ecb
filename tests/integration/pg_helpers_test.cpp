// The small transaction helpers of pg/: the savepoint guard.
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

}  // namespace trellis::test
