// The C interface (include/trellis/trellis.h) over the C++ facade. Each call
// runs the facade call inside `guarded`, which turns every exception into a
// trellis_code and a trellis_error, so none crosses into C. Records leave as
// JSON text (api/records_json), the one rendering the command line shows.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <string>

#include "api/records_json.hpp"
#include "trellis/trellis.h"
#include "trellis/trellis.hpp"

#ifndef TRELLIS_VERSION
#error "TRELLIS_VERSION is set by the build"
#endif

struct trellis_handle {
  std::unique_ptr<trellis::Trellis> trellis;
};

struct trellis_error {
  trellis_code code;
  std::string message;
};

namespace {

using trellis::Error;
using trellis::ErrorCode;

trellis_code code_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::parse:
      return TRELLIS_ERROR_PARSE;
    case ErrorCode::validation:
      return TRELLIS_ERROR_VALIDATION;
    case ErrorCode::connectivity:
      return TRELLIS_ERROR_CONNECTIVITY;
    case ErrorCode::conflict:
      return TRELLIS_ERROR_CONFLICT;
    case ErrorCode::not_found:
      return TRELLIS_ERROR_NOT_FOUND;
    case ErrorCode::timeout:
      return TRELLIS_ERROR_TIMEOUT;
    case ErrorCode::internal:
      return TRELLIS_ERROR_INTERNAL;
  }
  return TRELLIS_ERROR_INTERNAL;
}

trellis_code fail(trellis_error** error, trellis_code code, const std::string& message) {
  if (error) *error = new (std::nothrow) trellis_error{code, message};
  return code;
}

// Runs `body`; any exception becomes the call's code and `*error`.
template <typename Body>
trellis_code guarded(trellis_error** error, Body&& body) {
  if (error) *error = nullptr;
  try {
    body();
    return TRELLIS_OK;
  } catch (const Error& e) {
    return fail(error, code_of(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(error, TRELLIS_ERROR_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return fail(error, TRELLIS_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(error, TRELLIS_ERROR_INTERNAL, "an unknown exception");
  }
}

// Refuses a NULL handle or a NULL required argument by name.
void require(const void* pointer, const char* name) {
  if (!pointer) throw Error(ErrorCode::validation, std::string(name) + " must not be NULL");
}

char* copied(const std::string& text) {
  auto* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (!out) throw std::bad_alloc();
  std::memcpy(out, text.data(), text.size() + 1);
  return out;
}

// Callers check `out` before the facade call, so a NULL output pointer
// refuses the call before it has done anything.
void put_json(char** out, const nlohmann::ordered_json& json) {
  *out = copied(json.dump());
}

// A program calling the C interface has its own standard output: the
// library's log lines go to standard error (unless the program already set
// spdlog's default logger, as the `trellis` command does).
void log_to_stderr() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (spdlog::default_logger_raw()->name().empty())
      spdlog::set_default_logger(spdlog::stderr_color_mt("trellis"));
  });
}

std::string text_or_empty(const char* text) {
  return text ? text : "";
}

std::chrono::milliseconds milliseconds(int64_t ms) {
  return std::chrono::milliseconds(ms);
}

// The fields of options_json onto trellis::Options; anything else is refused.
trellis::Options parse_options(const char* options_json) {
  trellis::Options options;
  if (!options_json || !*options_json) return options;
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(options_json);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::validation, std::string("the options are not valid JSON: ") + e.what());
  }
  if (!json.is_object())
    throw Error(ErrorCode::validation,
                "the options must be a JSON object, e.g. {\"url\": \"...\"}");
  for (const auto& [field, value] : json.items()) {
    auto expect = [&](bool ok, const char* type) {
      if (!ok)
        throw Error(ErrorCode::validation,
                    "option \"" + field + "\" must be " + type + ", not " + value.dump());
    };
    auto text = [&] {
      expect(value.is_string(), "a string");
      return value.get<std::string>();
    };
    // An integer from `least` to INT_MAX (INT64_MAX when `wide`).
    auto integer = [&](int64_t least, bool wide = false) {
      expect(value.is_number_integer(), "an integer");
      uint64_t most = wide ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int>::max();
      // nlohmann reads every non-negative integer as unsigned.
      bool in_range = value.is_number_unsigned()
                          ? value.get<uint64_t>() <= most &&
                                static_cast<int64_t>(value.get<uint64_t>()) >= least
                          : value.get<int64_t>() >= least;
      if (!in_range)
        throw Error(ErrorCode::validation, "option \"" + field + "\" must be from " +
                                               std::to_string(least) + " to " +
                                               std::to_string(most) + ", not " + value.dump());
      return value.get<int64_t>();
    };
    if (field == "url") {
      options.url = text();
    } else if (field == "schema") {
      options.schema = text();
    } else if (field == "target_schema") {
      options.target_schema = text();
    } else if (field == "staging") {
      expect(value.is_boolean(), "true or false");
      options.staging = value.get<bool>();
    } else if (field == "drain_threads") {
      options.drain_threads = static_cast<int>(integer(0));
    } else if (field == "pool_size") {
      options.pool_size = static_cast<int>(integer(1));
    } else if (field == "call_deadline_ms") {
      options.call_deadline = milliseconds(integer(1, true));
    } else if (field == "tick_ms") {
      options.tick = milliseconds(integer(1, true));
    } else if (field == "build_range_rows") {
      options.build_range_rows = static_cast<int>(integer(1));
    } else if (field == "self_check_page_rows") {
      options.self_check_page_rows = static_cast<int>(integer(1));
    } else if (field == "metrics_address") {
      options.metrics_address = text();
    } else {
      throw Error(ErrorCode::validation,
                  "unknown option \"" + field +
                      "\"; the options are url, schema, target_schema, staging, drain_threads, "
                      "pool_size, call_deadline_ms, tick_ms, build_range_rows, "
                      "self_check_page_rows and metrics_address");
    }
  }
  return options;
}

trellis::Trellis& facade(trellis_handle* handle) {
  require(handle, "the handle");
  if (!handle->trellis) throw Error(ErrorCode::validation, "the handle is closed");
  return *handle->trellis;
}

}  // namespace

extern "C" {

const char* trellis_version(void) {
  return TRELLIS_VERSION;
}

const char* trellis_code_name(trellis_code code) {
  switch (code) {
    case TRELLIS_OK:
      return "ok";
    case TRELLIS_ERROR_PARSE:
      return "parse";
    case TRELLIS_ERROR_VALIDATION:
      return "validation";
    case TRELLIS_ERROR_CONNECTIVITY:
      return "connectivity";
    case TRELLIS_ERROR_CONFLICT:
      return "conflict";
    case TRELLIS_ERROR_NOT_FOUND:
      return "not_found";
    case TRELLIS_ERROR_TIMEOUT:
      return "timeout";
    case TRELLIS_ERROR_INTERNAL:
      return "internal";
  }
  return "unknown";
}

trellis_code trellis_error_code(const trellis_error* error) {
  return error ? error->code : TRELLIS_OK;
}

const char* trellis_error_message(const trellis_error* error) {
  return error ? error->message.c_str() : "";
}

void trellis_error_free(trellis_error* error) {
  delete error;
}

void trellis_string_free(char* string) {
  std::free(string);
}

trellis_code trellis_connect(const char* options_json, trellis_handle** handle,
                             trellis_error** error) {
  return guarded(error, [&] {
    require(handle, "the handle pointer");
    log_to_stderr();
    auto connected = trellis::Trellis::connect(parse_options(options_json));
    *handle = new trellis_handle{std::move(connected)};
  });
}

trellis_code trellis_shutdown(trellis_handle* handle, trellis_error** error) {
  return guarded(error, [&] { facade(handle).shutdown(); });
}

void trellis_close(trellis_handle* handle) {
  if (!handle) return;
  // Destroying the facade shuts it down; a failure there has nowhere to go.
  try {
    handle->trellis.reset();
  } catch (...) {
  }
  delete handle;
}

trellis_code trellis_apply(trellis_handle* handle, const char* statement, char** applied_json,
                           trellis_error** error) {
  return guarded(error, [&] {
    require(statement, "the statement");
    require(applied_json, "the output pointer");
    auto applied = facade(handle).apply(statement);
    put_json(applied_json, trellis::api::applied_json(applied));
  });
}

trellis_code trellis_status(trellis_handle* handle, const char* target, char** status_json,
                            trellis_error** error) {
  return guarded(error, [&] {
    require(target, "the target");
    require(status_json, "the output pointer");
    auto status = facade(handle).status(target);
    put_json(status_json, status ? trellis::api::status_json(*status) : nlohmann::ordered_json());
  });
}

trellis_code trellis_status_all(trellis_handle* handle, char** statuses_json,
                                trellis_error** error) {
  return guarded(error, [&] {
    require(statuses_json, "the output pointer");
    auto all = nlohmann::ordered_json::array();
    for (const auto& s : facade(handle).status_all()) all.push_back(trellis::api::status_json(s));
    put_json(statuses_json, all);
  });
}

trellis_code trellis_definitions(trellis_handle* handle, char** definitions_json,
                                 trellis_error** error) {
  return guarded(error, [&] {
    require(definitions_json, "the output pointer");
    auto all = nlohmann::ordered_json::array();
    for (const auto& d : facade(handle).definitions())
      all.push_back(trellis::api::definition_json(d));
    put_json(definitions_json, all);
  });
}

trellis_code trellis_relationships(trellis_handle* handle, char** relationships_json,
                                   trellis_error** error) {
  return guarded(error, [&] {
    require(relationships_json, "the output pointer");
    auto all = nlohmann::ordered_json::array();
    for (const auto& r : facade(handle).relationships())
      all.push_back(trellis::api::relationship_json(r));
    put_json(relationships_json, all);
  });
}

trellis_code trellis_dump(trellis_handle* handle, char** script, trellis_error** error) {
  return guarded(error, [&] {
    require(script, "the output pointer");
    *script = copied(facade(handle).dump());
  });
}

trellis_code trellis_watermark_token(trellis_handle* handle, int64_t* token,
                                     trellis_error** error) {
  return guarded(error, [&] {
    require(token, "the token pointer");
    *token = facade(handle).watermark_token().segment;
  });
}

trellis_code trellis_await_converged(trellis_handle* handle, int64_t token, int64_t timeout_ms,
                                     int* converged, trellis_error** error) {
  return guarded(error, [&] {
    require(converged, "the converged pointer");
    bool done = facade(handle).await_converged(trellis::Token{token}, milliseconds(timeout_ms));
    *converged = done ? 1 : 0;
  });
}

trellis_code trellis_await_live(trellis_handle* handle, const char* target, int64_t timeout_ms,
                                char** status_json, trellis_error** error) {
  return guarded(error, [&] {
    require(target, "the target");
    require(status_json, "the output pointer");
    auto status = facade(handle).await_live(target, milliseconds(timeout_ms));
    put_json(status_json, trellis::api::status_json(status));
  });
}

trellis_code trellis_sample_quarantined(trellis_handle* handle, const char* target, int limit,
                                        const char* cursor, char** page_json,
                                        trellis_error** error) {
  return guarded(error, [&] {
    require(target, "the target");
    require(page_json, "the output pointer");
    auto page = facade(handle).sample_quarantined(target, limit, text_or_empty(cursor));
    put_json(page_json, trellis::api::quarantine_page_json(page));
  });
}

trellis_code trellis_release_key(trellis_handle* handle, const char* target, const char* table,
                                 const char* key, trellis_error** error) {
  return guarded(error, [&] {
    require(target, "the target");
    require(table, "the table");
    require(key, "the key");
    facade(handle).release_key(target, table, key);
  });
}

trellis_code trellis_request_backfill(trellis_handle* handle, const char* table, int* count,
                                      trellis_error** error) {
  return guarded(error, [&] {
    require(table, "the table");
    require(count, "the count pointer");
    *count = facade(handle).request_backfill(table);
  });
}

trellis_code trellis_test_reset(trellis_handle* handle, int64_t timeout_ms, char** report_json,
                                trellis_error** error) {
  return guarded(error, [&] {
    require(report_json, "the output pointer");
    auto report = facade(handle).test_reset(milliseconds(timeout_ms));
    put_json(report_json, trellis::api::test_reset_json(report));
  });
}

trellis_code trellis_self_check(trellis_handle* handle, const char* target, const char* mode,
                                int64_t await_timeout_ms, char** job_json, trellis_error** error) {
  return guarded(error, [&] {
    require(target, "the target");
    require(job_json, "the output pointer");
    trellis::SelfCheckOptions options;
    if (mode && *mode) options.mode = mode;
    if (await_timeout_ms > 0) options.await_timeout = milliseconds(await_timeout_ms);
    put_json(job_json,
             trellis::api::self_check_job_json(facade(handle).self_check(target, options)));
  });
}

trellis_code trellis_self_check_job(trellis_handle* handle, int64_t job_id, char** job_json,
                                    trellis_error** error) {
  return guarded(error, [&] {
    require(job_json, "the output pointer");
    auto job = facade(handle).self_check_job(job_id);
    put_json(job_json, job ? trellis::api::self_check_job_json(*job) : nlohmann::ordered_json());
  });
}

trellis_code trellis_await_self_check(trellis_handle* handle, int64_t job_id, int64_t timeout_ms,
                                      char** job_json, trellis_error** error) {
  return guarded(error, [&] {
    require(job_json, "the output pointer");
    auto job = facade(handle).await_self_check(job_id, milliseconds(timeout_ms));
    put_json(job_json, trellis::api::self_check_job_json(job));
  });
}

trellis_code trellis_metrics_text(trellis_handle* handle, char** text, trellis_error** error) {
  return guarded(error, [&] {
    require(text, "the output pointer");
    *text = copied(facade(handle).metrics_text());
  });
}

trellis_code trellis_metrics_port(trellis_handle* handle, int* port, trellis_error** error) {
  return guarded(error, [&] {
    require(port, "the port pointer");
    *port = facade(handle).metrics_port();
  });
}

trellis_code trellis_ring_backlog(trellis_handle* handle, int64_t* rows, int64_t* bytes,
                                  trellis_error** error) {
  return guarded(error, [&] {
    require(rows, "the rows pointer");
    require(bytes, "the bytes pointer");
    auto backlog = facade(handle).ring_backlog();
    *rows = backlog.rows;
    *bytes = backlog.bytes;
  });
}

trellis_code trellis_has_live_staging_worker(trellis_handle* handle, int* alive,
                                             trellis_error** error) {
  return guarded(error, [&] {
    require(alive, "the alive pointer");
    *alive = facade(handle).has_live_staging_worker() ? 1 : 0;
  });
}

trellis_code trellis_has_live_drain_workers(trellis_handle* handle, int* alive,
                                            trellis_error** error) {
  return guarded(error, [&] {
    require(alive, "the alive pointer");
    *alive = facade(handle).has_live_drain_workers() ? 1 : 0;
  });
}

}  // extern "C"
