/* The C interface (include/trellis/trellis.h) end to end, in plain C, against
 * the PostgreSQL whose URL TRELLIS_DATABASE_URL gives (run_with_cluster.sh
 * starts one with `trellis dev`): every call, its JSON, and its errors. The
 * source tables are made and written with libpq; targets are compared with
 * their definitions run as plain SELECTs. Exits non-zero at the first check
 * that fails, naming it. */
#define _POSIX_C_SOURCE 200809L
#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trellis/trellis.h"

static int checks = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    ++checks;                                                                  \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/* A call that must succeed; on failure prints its error. Every call below
 * takes `&error` as its last argument. */
#define OK(call)                                                     \
  do {                                                               \
    trellis_code code_ = (call);                                     \
    CHECK(code_ == TRELLIS_OK, "%s -> %s", trellis_code_name(code_), \
          trellis_error_message(error));                             \
  } while (0)

static trellis_error* error = NULL;

static PGconn* db;

static void sql(const char* statement) {
  PGresult* r = PQexec(db, statement);
  ExecStatusType s = PQresultStatus(r);
  CHECK(s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK, "%s: %s", statement, PQerrorMessage(db));
  PQclear(r);
}

/* The one value a query returns, as text (caller frees). */
static char* value(const char* query) {
  PGresult* r = PQexec(db, query);
  CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1, "%s: %s", query,
        PQerrorMessage(db));
  char* out = strdup(PQgetisnull(r, 0, 0) ? "NULL" : PQgetvalue(r, 0, 0));
  PQclear(r);
  return out;
}

/* The rows of `target` (its visible `columns`) that differ from `definition`
 * either way: 0 when equal. */
static long differences(const char* columns, const char* target, const char* definition) {
  char query[2048];
  snprintf(query, sizeof query,
           "SELECT count(*) FROM ((SELECT %s FROM %s EXCEPT ALL %s) UNION ALL "
           "(%s EXCEPT ALL SELECT %s FROM %s)) d",
           columns, target, definition, definition, columns, target);
  char* v = value(query);
  long n = atol(v);
  free(v);
  return n;
}

/* Expects `code` and a message containing `needle`, then frees the error. */
static void expect_error(trellis_code got, trellis_code want, const char* needle,
                         const char* what) {
  CHECK(got == want, "%s: expected %s, got %s (%s)", what, trellis_code_name(want),
        trellis_code_name(got), trellis_error_message(error));
  CHECK(error != NULL && trellis_error_code(error) == want, "%s: the error carries its code", what);
  CHECK(strstr(trellis_error_message(error), needle) != NULL, "%s: message '%s' lacks '%s'", what,
        trellis_error_message(error), needle);
  trellis_error_free(error);
  error = NULL;
}

static void contains(const char* text, const char* needle, const char* what) {
  CHECK(text && strstr(text, needle) != NULL, "%s: '%s' lacks '%s'", what, text ? text : "(null)",
        needle);
}

static void await_all(trellis_handle* t) {
  int64_t token = 0;
  int converged = 0;
  OK(trellis_watermark_token(t, &token, &error));
  OK(trellis_await_converged(t, token, 60000, &converged, &error));
  CHECK(converged == 1, "converged within 60 s after token %lld", (long long)token);
}

/* Waits with the library's own call until the target is built and caught up
 * (at most 60 s); the status it returns reads live. */
static void await_live(trellis_handle* t, const char* target) {
  char* json = NULL;
  OK(trellis_await_live(t, target, 60000, &json, &error));
  contains(json, "\"status\":\"live\"", target);
  trellis_string_free(json);
}

int main(void) {
  const char* url = getenv("TRELLIS_DATABASE_URL");
  CHECK(url && *url, "TRELLIS_DATABASE_URL names the database to test against");
  db = PQconnectdb(url);
  CHECK(PQstatus(db) == CONNECTION_OK, "connect: %s", PQerrorMessage(db));

  /* Functions without a handle. */
  CHECK(strlen(trellis_version()) >= 5, "version '%s'", trellis_version());
  CHECK(strcmp(trellis_code_name(TRELLIS_ERROR_NOT_FOUND), "not_found") == 0, "code name");
  CHECK(trellis_error_code(NULL) == TRELLIS_OK, "no error reads as ok");
  trellis_close(NULL);
  trellis_string_free(NULL);

  /* Options are checked field by field. */
  trellis_handle* t = NULL;
  expect_error(trellis_connect("{\"nope\": 1}", &t, &error), TRELLIS_ERROR_VALIDATION,
               "unknown option \"nope\"", "unknown option");
  expect_error(trellis_connect("{\"drain_threads\": \"two\"}", &t, &error),
               TRELLIS_ERROR_VALIDATION, "option \"drain_threads\" must be an integer",
               "mistyped option");
  expect_error(trellis_connect("{\"drain_threads\": 4294967297}", &t, &error),
               TRELLIS_ERROR_VALIDATION, "option \"drain_threads\" must be from 0 to",
               "an option out of range does not wrap around");
  expect_error(trellis_connect("{\"pool_size\": 0}", &t, &error), TRELLIS_ERROR_VALIDATION,
               "option \"pool_size\" must be from 1", "a pool of no connections");
  expect_error(trellis_connect("{url", &t, &error), TRELLIS_ERROR_VALIDATION,
               "the options are not valid JSON", "options that do not parse");
  expect_error(trellis_connect("[1]", &t, &error), TRELLIS_ERROR_VALIDATION,
               "must be a JSON object", "options not an object");
  expect_error(
      trellis_connect("{\"url\": \"postgresql://127.0.0.1:1/none?connect_timeout=2\"}", &t, &error),
      TRELLIS_ERROR_CONNECTIVITY, "", "unreachable database");
  CHECK(t == NULL, "a failed connect leaves the handle untouched");

  sql("DROP TABLE IF EXISTS c_orders, c_customers, c_adopted CASCADE");
  sql("CREATE TABLE c_customers (id int PRIMARY KEY, region text NOT NULL)");
  sql("CREATE TABLE c_orders (id bigint PRIMARY KEY, customer_id int NOT NULL, "
      "amount numeric(12,2) NOT NULL)");
  sql("CREATE INDEX ON c_orders (customer_id)");
  sql("INSERT INTO c_customers SELECT g, 'r' || (g % 3) FROM generate_series(1, 20) g");
  sql("INSERT INTO c_orders SELECT g, 1 + g % 20, g * 1.5 FROM generate_series(1, 2000) g");

  char options[2048];
  snprintf(options, sizeof options,
           "{\"url\": \"%s\", \"schema\": \"trellis_c\", \"staging\": true, "
           "\"drain_threads\": 1, \"tick_ms\": 50}",
           url);
  OK(trellis_connect(options, &t, &error));
  CHECK(t != NULL, "connect gives a handle");

  /* The workers register as they start: poll for them (at most 30 s). */
  int alive = 0;
  for (int i = 0; i < 1500 && !alive; ++i) {
    OK(trellis_has_live_staging_worker(t, &alive, &error));
    if (!alive) nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
  }
  CHECK(alive == 1, "the staging worker this handle runs is alive");
  alive = 0;
  for (int i = 0; i < 1500 && !alive; ++i) {
    OK(trellis_has_live_drain_workers(t, &alive, &error));
    if (!alive) nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
  }
  CHECK(alive == 1, "the drain threads this handle runs are alive");

  /* apply: a 1-1 transform, an aggregate, a relationship; errors by code. */
  char* json = NULL;
  OK(trellis_apply(t,
                   "TRANSFORM c_totals FROM c_orders GROUP BY customer_id "
                   "SELECT SUM(amount) AS total, COUNT(*) AS n",
                   &json, &error));
  contains(json, "\"kind\":\"transform\"", "applied kind");
  contains(json, "\"note\":\"\"", "a plain define has an empty note");
  contains(json, "\"target\":\"public.c_totals\"", "applied target");
  trellis_string_free(json);
  OK(trellis_apply(t,
                   "TRANSFORM c_big FROM c_orders SELECT amount * 2 AS doubled WHERE amount > 100",
                   &json, &error));
  trellis_string_free(json);
  /* ADOPT EXISTING TABLE: the note lists the column the table keeps. */
  sql("CREATE TABLE c_adopted (id bigint PRIMARY KEY, amount numeric(12,2), seen boolean)");
  OK(trellis_apply(t,
                   "TRANSFORM c_adopted ADOPT EXISTING TABLE FROM c_orders SELECT amount AS amount",
                   &json, &error));
  contains(json, "\"note\":\"", "an adoption has a note");
  contains(json, "seen", "the note names the column the table keeps");
  trellis_string_free(json);
  OK(trellis_apply(t, "RELATIONSHIP customer FROM c_orders.customer_id TO c_customers.id", &json,
                   &error));
  contains(json, "\"kind\":\"relationship\"", "relationship applied");
  trellis_string_free(json);
  json = (char*)"untouched";
  expect_error(trellis_apply(t, "TRANSFORM FROM", &json, &error), TRELLIS_ERROR_PARSE, "",
               "a statement that does not parse");
  CHECK(strcmp(json, "untouched") == 0, "a failed call writes no output");
  expect_error(trellis_apply(t, "TRANSFORM c_x FROM c_missing SELECT a AS b", &json, &error),
               TRELLIS_ERROR_NOT_FOUND, "c_missing", "an unknown source is named");
  expect_error(trellis_apply(t, NULL, &json, &error), TRELLIS_ERROR_VALIDATION,
               "the statement must not be NULL", "NULL statement");
  expect_error(trellis_apply(t, "TRANSFORM c_never FROM c_orders SELECT amount AS a", NULL, &error),
               TRELLIS_ERROR_VALIDATION, "the output pointer must not be NULL",
               "a NULL output pointer");
  OK(trellis_status(t, "c_never", &json, &error));
  CHECK(strcmp(json, "null") == 0, "a call refused for a NULL output did nothing: %s", json);
  trellis_string_free(json);
  expect_error(trellis_apply(NULL, "x", &json, &error), TRELLIS_ERROR_VALIDATION,
               "the handle must not be NULL", "NULL handle");

  await_live(t, "c_totals");
  await_live(t, "c_big");
  await_all(t);
  CHECK(
      differences("customer_id, total, n", "c_totals",
                  "SELECT customer_id, SUM(amount) AS total, COUNT(*) AS n FROM c_orders GROUP BY "
                  "customer_id") == 0,
      "c_totals equals its definition after the build");

  /* Writes after the build reach the targets. */
  sql("UPDATE c_orders SET amount = amount + 1 WHERE id % 7 = 0");
  sql("DELETE FROM c_orders WHERE id % 11 = 0");
  sql("INSERT INTO c_orders VALUES (5000, 3, 999.99)");
  await_all(t);
  CHECK(
      differences("customer_id, total, n", "c_totals",
                  "SELECT customer_id, SUM(amount) AS total, COUNT(*) AS n FROM c_orders GROUP BY "
                  "customer_id") == 0,
      "c_totals equals its definition after writes");
  CHECK(differences("id, doubled", "c_big",
                    "SELECT id, amount * 2 AS doubled FROM c_orders WHERE amount > 100") == 0,
        "c_big equals its definition after writes");

  /* Records. */
  OK(trellis_status(t, "c_totals", &json, &error));
  contains(json, "\"status\":\"live\"", "status of c_totals");
  contains(json, "\"source_index_gaps\":[]", "status fields");
  trellis_string_free(json);
  expect_error(trellis_await_live(t, "no_such_target", 1000, &json, &error),
               TRELLIS_ERROR_NOT_FOUND, "no transform has target no_such_target",
               "await_live of an unknown target");
  expect_error(trellis_await_live(t, "c_totals", 1000, NULL, &error), TRELLIS_ERROR_VALIDATION,
               "output pointer", "await_live without an output pointer");
  OK(trellis_status(t, "no_such_target", &json, &error));
  CHECK(strcmp(json, "null") == 0, "status of an unknown target is null, got %s", json);
  trellis_string_free(json);
  OK(trellis_status_all(t, &json, &error));
  contains(json, "public.c_big", "status_all lists c_big");
  contains(json, "public.c_totals", "status_all lists c_totals");
  trellis_string_free(json);
  OK(trellis_definitions(t, &json, &error));
  contains(json, "\"shape\":\"aggregate\"", "definitions");
  contains(json, "GROUP BY \\\"customer_id\\\"", "definitions carry the normalised statement");
  trellis_string_free(json);
  OK(trellis_relationships(t, &json, &error));
  contains(json, "\"name\":\"customer\"", "relationships");
  contains(json, "\"cardinality\":\"to_one\"", "relationship cardinality");
  trellis_string_free(json);

  /* dump: the relationship and both transforms, as statements. */
  OK(trellis_dump(t, &json, &error));
  contains(json, "RELATIONSHIP", "dump has the relationship");
  contains(json, "TRANSFORM \"public\".\"c_totals\"", "dump has c_totals");
  contains(json, "TRANSFORM \"public\".\"c_big\"", "dump has c_big");
  trellis_string_free(json);

  /* Quarantine: nothing held, releasing an unheld key is not_found. */
  OK(trellis_sample_quarantined(t, "c_totals", 10, NULL, &json, &error));
  contains(json, "\"keys\":[]", "no quarantined keys");
  trellis_string_free(json);
  expect_error(trellis_release_key(t, "c_totals", "c_orders", "1", &error), TRELLIS_ERROR_NOT_FOUND,
               "", "release of a key that is not held");

  /* request_backfill rebuilds both transforms over c_orders. */
  int count = 0;
  OK(trellis_request_backfill(t, "c_orders", &count, &error));
  CHECK(count == 3, "request_backfill rebuilt %d transforms, expected 3", count);
  expect_error(trellis_request_backfill(t, "c_customers", &count, &error), TRELLIS_ERROR_NOT_FOUND,
               "c_customers", "backfill of a table nothing reads");
  await_live(t, "c_totals");
  await_live(t, "c_big");
  await_all(t);

  /* self_check: queued, run by the drain thread, converged. */
  OK(trellis_self_check(t, "c_totals", NULL, 0, &json, &error));
  contains(json, "\"target\":\"public.c_totals\"", "self-check job");
  char* id_at = strstr(json, "\"id\":");
  CHECK(id_at != NULL, "the job has an id: %s", json);
  int64_t job = atoll(id_at + 5);
  trellis_string_free(json);
  OK(trellis_await_self_check(t, job, 60000, &json, &error));
  contains(json, "\"outcome\":\"converged\"", "self-check outcome");
  trellis_string_free(json);
  OK(trellis_self_check_job(t, job, &json, &error));
  contains(json, "\"state\":\"done\"", "the job read back");
  trellis_string_free(json);
  expect_error(trellis_self_check(t, "c_totals", "sloppy", 0, &json, &error),
               TRELLIS_ERROR_VALIDATION, "sloppy", "an unknown self-check mode");
  expect_error(trellis_self_check(t, "nothing_here", NULL, 0, &json, &error),
               TRELLIS_ERROR_NOT_FOUND, "nothing_here", "self-check of an unknown target");

  /* Tampering shows in a strict audit. */
  sql("UPDATE c_totals SET total = total + 1 WHERE customer_id = 5");
  OK(trellis_self_check(t, "c_totals", "strict", 0, &json, &error));
  id_at = strstr(json, "\"id\":");
  job = atoll(id_at + 5);
  trellis_string_free(json);
  OK(trellis_await_self_check(t, job, 60000, &json, &error));
  contains(json, "\"outcome\":\"diverged\"", "a tampered target diverges");
  contains(json, "\"column\":\"total\"", "the divergent column is named");
  trellis_string_free(json);

  /* test_reset rebuilds it. */
  OK(trellis_test_reset(t, 60000, &json, &error));
  contains(json, "\"rebuilt\":[", "test_reset report");
  contains(json, "public.c_totals", "test_reset rebuilt c_totals");
  trellis_string_free(json);
  CHECK(
      differences("customer_id, total, n", "c_totals",
                  "SELECT customer_id, SUM(amount) AS total, COUNT(*) AS n FROM c_orders GROUP BY "
                  "customer_id") == 0,
      "test_reset repaired the tampered row");

  /* Metrics and the ring. */
  OK(trellis_metrics_text(t, &json, &error));
  contains(json, "trellis_", "metrics text");
  trellis_string_free(json);
  int port = -1;
  OK(trellis_metrics_port(t, &port, &error));
  CHECK(port == 0, "metrics are not served without metrics_address (port %d)", port);
  int64_t rows = -1, bytes = -1;
  OK(trellis_ring_backlog(t, &rows, &bytes, &error));
  CHECK(rows >= 0 && bytes > 0, "ring backlog rows %lld bytes %lld", (long long)rows,
        (long long)bytes);

  /* A write after the audit reaches the target through a fresh token. */
  sql("INSERT INTO c_orders VALUES (5001, 4, 1.00)");
  await_all(t);
  CHECK(
      differences("customer_id, total, n", "c_totals",
                  "SELECT customer_id, SUM(amount) AS total, COUNT(*) AS n FROM c_orders GROUP BY "
                  "customer_id") == 0,
      "c_totals equals its definition after the reset and a write");

  /* PAUSE through apply; status reads paused. */
  OK(trellis_apply(t, "PAUSE TRANSFORM c_big", &json, &error));
  contains(json, "\"status\":\"paused\"", "pause");
  trellis_string_free(json);
  /* await_live refuses a paused transform at once rather than time out. */
  expect_error(trellis_await_live(t, "c_big", 60000, &json, &error), TRELLIS_ERROR_CONFLICT,
               "RESUME TRANSFORM public.c_big", "await_live of a paused transform");
  OK(trellis_apply(t, "DROP TRANSFORM c_big", &json, &error));
  trellis_string_free(json);
  OK(trellis_apply(t, "PAUSE TRANSFORM c_adopted", &json, &error));
  trellis_string_free(json);
  OK(trellis_apply(t, "DROP TRANSFORM c_adopted", &json, &error));
  contains(json, "\"note\":\"", "dropping an adopted target notes the table stays");
  trellis_string_free(json);
  char* kept = value("SELECT count(*) FROM c_adopted");
  CHECK(atol(kept) > 0, "the adopted table keeps its rows after DROP TRANSFORM (%s)", kept);
  free(kept);

  OK(trellis_shutdown(t, &error));
  OK(trellis_shutdown(t, &error)); /* idempotent */
  OK(trellis_has_live_drain_workers(t, &alive, &error));
  trellis_close(t);

  PQfinish(db);
  printf("capi_test: %d checks passed\n", checks);
  return 0;
}
