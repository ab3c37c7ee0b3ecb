/* The C interface of Trellis (README, "Use from C"): every call of the C++
 * facade (trellis/trellis.hpp) as plain C, for programs and languages that
 * cannot call C++. The Python package (bindings/python) is built on it.
 *
 * Conventions, the same for every call:
 *   - A call returns TRELLIS_OK or the code of the error it met; no C++
 *     exception ever leaves the library.
 *   - `error` (may be NULL) receives, on failure, an error the caller frees
 *     with trellis_error_free(): its code and a message that names the object
 *     at fault and how to fix it. On success it is set to NULL.
 *   - Records (status, definitions, reports, ...) come back as JSON text, in
 *     a string the library allocates and the caller frees with
 *     trellis_string_free(). Their fields are the C++ records' fields
 *     (README, "Use from C", lists them). Out-parameters are written only on
 *     success.
 *   - Strings passed in are UTF-8 and NUL-terminated; none is kept after the
 *     call returns. A NULL where a pointer is required is refused (validation,
 *     naming it) before the call does anything.
 *   - The library logs to standard error (spdlog), never to standard output.
 *   - Threads: every call on one handle may be made from several threads at
 *     once (API calls share a pool of connections), except trellis_shutdown()
 *     and trellis_close(), which must not run while another call on the same
 *     handle does. Calls on different handles never interfere. The functions
 *     without a handle are safe from any thread.
 */
#ifndef TRELLIS_TRELLIS_H
#define TRELLIS_TRELLIS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The codes of trellis::ErrorCode, plus TRELLIS_OK. */
typedef enum trellis_code {
  TRELLIS_OK = 0,
  TRELLIS_ERROR_PARSE = 1,        /* a statement that does not parse */
  TRELLIS_ERROR_VALIDATION = 2,   /* a statement or argument that is refused */
  TRELLIS_ERROR_CONNECTIVITY = 3, /* the database could not be reached */
  TRELLIS_ERROR_CONFLICT = 4,     /* the object changed, or is in a state that refuses it */
  TRELLIS_ERROR_NOT_FOUND = 5,    /* no such target, table, key or job */
  TRELLIS_ERROR_TIMEOUT = 6,      /* a wait ran past its timeout */
  TRELLIS_ERROR_INTERNAL = 7      /* a bug: the message says what failed */
} trellis_code;

typedef struct trellis_handle trellis_handle; /* one connected instance */
typedef struct trellis_error trellis_error;   /* what a failed call met */

/* The library's version, "MAJOR.MINOR.PATCH". */
const char* trellis_version(void);
/* "ok", "parse", "validation", ... (the C++ to_string(ErrorCode) words). */
const char* trellis_code_name(trellis_code code);

trellis_code trellis_error_code(const trellis_error* error);
const char* trellis_error_message(const trellis_error* error);
void trellis_error_free(trellis_error* error);
void trellis_string_free(char* string);

/* Connects to an instance. `options_json` (NULL or "" for every default) is
 * an object with any of the fields of trellis::Options: "url", "schema",
 * "target_schema", "staging" (bool), "drain_threads", "pool_size",
 * "call_deadline_ms", "tick_ms", "build_range_rows", "self_check_page_rows",
 * "metrics_address". An unknown field, a value of the wrong type or out of
 * range (pool_size and the others at least 1, drain_threads at least 0) is
 * a validation error naming it. Creates or migrates the catalog; with
 * "staging" or "drain_threads" the workers start inside this process. */
trellis_code trellis_connect(const char* options_json, trellis_handle** handle,
                             trellis_error** error);
/* Stops the workers this handle runs and closes its connections;
 * idempotent. The handle stays valid (calls then reconnect; workers do not
 * restart). */
trellis_code trellis_shutdown(trellis_handle* handle, trellis_error** error);
/* Shuts down (as above) and frees the handle. NULL is allowed. */
void trellis_close(trellis_handle* handle);

/* Runs one statement (TRANSFORM, ALTER, PAUSE, RESUME, DROP, RELATIONSHIP,
 * ...). `applied_json`: {"kind", "target", "status", "added", "dropped",
 * "altered", "note"}. */
trellis_code trellis_apply(trellis_handle* handle, const char* statement, char** applied_json,
                           trellis_error** error);
/* One transform's status record (trellis::Status) as a JSON object, or the
 * JSON text null when no transform has that target. */
trellis_code trellis_status(trellis_handle* handle, const char* target, char** status_json,
                            trellis_error** error);
/* Every transform's status record, as a JSON array. */
trellis_code trellis_status_all(trellis_handle* handle, char** statuses_json,
                                trellis_error** error);
/* Every definition (trellis::Definition), as a JSON array. */
trellis_code trellis_definitions(trellis_handle* handle, char** definitions_json,
                                 trellis_error** error);
/* Every relationship (trellis::Relationship), oldest first, a JSON array. */
trellis_code trellis_relationships(trellis_handle* handle, char** relationships_json,
                                   trellis_error** error);
/* The instance's relationships and definitions as statements, in the order
 * that applies them (trellis dump). */
trellis_code trellis_dump(trellis_handle* handle, char** script, trellis_error** error);

/* A token covering every change committed before this call. */
trellis_code trellis_watermark_token(trellis_handle* handle, int64_t* token, trellis_error** error);
/* Waits until every change the token covers reached every live target.
 * `converged` is 1 then, 0 when `timeout_ms` passed first (not an error). */
trellis_code trellis_await_converged(trellis_handle* handle, int64_t token, int64_t timeout_ms,
                                     int* converged, trellis_error** error);
/* Waits until the transform of `target` is built and caught up (its status
 * reads "live" and every change committed by then reached the targets) and
 * returns its status record. trellis_await_converged does not wait for a
 * build; call this after defining, resuming or rebuilding a transform.
 * NOT_FOUND for an unknown target, CONFLICT when it is paused or
 * quarantined (it will not become live without a RESUME), TIMEOUT naming
 * its status and what holds it up. */
trellis_code trellis_await_live(trellis_handle* handle, const char* target, int64_t timeout_ms,
                                char** status_json, trellis_error** error);

/* A page of the keys held in quarantine for `target`: {"keys": [{"table",
 * "key", "charges", "error", "sqlstate", "held_at"}], "cursor"}. `cursor`
 * NULL or "" starts from the beginning. */
trellis_code trellis_sample_quarantined(trellis_handle* handle, const char* target, int limit,
                                        const char* cursor, char** page_json,
                                        trellis_error** error);
/* Re-derives a held key and stops holding it (`key` as sampled). */
trellis_code trellis_release_key(trellis_handle* handle, const char* target, const char* table,
                                 const char* key, trellis_error** error);
/* Rebuilds in place every running transform that reads `table`; `count`
 * receives how many. */
trellis_code trellis_request_backfill(trellis_handle* handle, const char* table, int* count,
                                      trellis_error** error);
/* The reset for an application's test suite (trellis::Trellis::test_reset):
 * {"disrupted", "resumed", "rebuilt", "left_paused", "seconds"}. */
trellis_code trellis_test_reset(trellis_handle* handle, int64_t timeout_ms, char** report_json,
                                trellis_error** error);

/* Queues an audit of `target` (or returns its unfinished one). `mode` NULL
 * or "standard" / "strict"; `await_timeout_ms` <= 0 for the default. The
 * job: {"id", "target", "mode", "state", "error", "outcome", "status",
 * "detail", "rows_compared", "created_at", "started_at", "finished_at"};
 * once done also "truncated", "checked_through" and "divergences" (each
 * {"kind", "key", "column", "persisted", "recomputed", "table", "detail"},
 * the fields that apply). "outcome" is null until the job is done. */
trellis_code trellis_self_check(trellis_handle* handle, const char* target, const char* mode,
                                int64_t await_timeout_ms, char** job_json, trellis_error** error);
/* The job now, or the JSON text null once it is gone. */
trellis_code trellis_self_check_job(trellis_handle* handle, int64_t job_id, char** job_json,
                                    trellis_error** error);
/* Waits until the job finished and returns it (timeout, not_found). */
trellis_code trellis_await_self_check(trellis_handle* handle, int64_t job_id, int64_t timeout_ms,
                                      char** job_json, trellis_error** error);

/* Prometheus text of this process's workers and the catalog. */
trellis_code trellis_metrics_text(trellis_handle* handle, char** text, trellis_error** error);
/* The port metrics are served on; 0 when they are not. */
trellis_code trellis_metrics_port(trellis_handle* handle, int* port, trellis_error** error);
/* Changed keys captured and not yet drained, and the ring's size. */
trellis_code trellis_ring_backlog(trellis_handle* handle, int64_t* rows, int64_t* bytes,
                                  trellis_error** error);
/* 1 when a staging worker (drain workers) of any process is alive, else 0. */
trellis_code trellis_has_live_staging_worker(trellis_handle* handle, int* alive,
                                             trellis_error** error);
trellis_code trellis_has_live_drain_workers(trellis_handle* handle, int* alive,
                                            trellis_error** error);

#ifdef __cplusplus
}
#endif

#endif /* TRELLIS_TRELLIS_H */
