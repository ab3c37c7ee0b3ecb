// Statements of quarantine (docs/architecture.md, Failures), rendered for one catalog schema:
// keeping a transform's held keys out of the page while its steps run,
// narrowing a failing page down to one key (bisection over a saved copy of
// the page), charging and holding that key, tripping the fuse, halting a
// transform the drain cannot get past, and the
// reads and writes behind sample_quarantined and release_key.
#pragma once

#include <string>

namespace trellis::compile {

// A transform trips its fuse (status quarantined) at this many held keys;
// a key is held after this many charges.
inline constexpr int kChargesToHold = 5;
inline constexpr int kHeldKeysToTrip = 5;

struct QuarantineSql {
  // $1 transform id: move its held keys out of the page (into pg_temp.trellis_hidden).
  std::string hide_held_keys;
  std::string restore_hidden_keys;  // put them back
  // Bisection: copy the page, numbered per table in key order; count one
  // table's keys ($1 tbl); refill the page's keys of $1 tbl with numbers in
  // [$2, $3); read the key numbered $2 of $1 tbl (text[]).
  std::string save_page;
  std::string count_saved;
  std::string clear_table_keys;  // $1 tbl
  std::string fill_saved_range;  // $1 tbl, $2 from, $3 to
  std::string saved_key;         // $1 tbl, $2 number
  // $1 transform id, $2 tbl, $3 key text[], $4 seg (or NULL), $5 error,
  // $6 sqlstate, $7 the field it fails in (or NULL) -> held (bool),
  // charges: one more charge; held at kChargesToHold.
  std::string charge;
  // $1 transform id: taken first in a charge's transaction, so charges of
  // one transform (and the fuses they trip) run one at a time -> its
  // target (schema.table).
  std::string lock_transform;
  // $1 transform id: quarantined once kHeldKeysToTrip keys are held that
  // are not narrowed to one field.
  std::string trip_fuse;
  // $1 transform id, $2 field, $3 error, $4 sqlstate: once kHeldKeysToTrip
  // keys are held for that field of a running 1-1 transform, pause the field
  // (paused_columns), let its keys go (kept, not held, for
  // sample_quarantined) and rebuild the transform in place -> a row when it
  // tripped.
  std::string trip_column_fuse;
  // $1 transform id, $2 field: forget the keys a column fuse let go.
  std::string clear_column;
  // $1 transform id, $2 error, $3 sqlstate -> the paused targets: a halt
  // (capture_failure kind 'halt') pauses the transform and, transitively,
  // every transform reading its target.
  std::string halt;
  // $1 transform id, $2 limit, $3 cursor (text: '' = start), $4 field (or
  // NULL: the transform's held keys; a field: the keys that failed in it)
  // -> tbl table name, key (jsonb array), charges, error, sqlstate, held_at,
  // cursor.
  std::string sample;
  // $1 transform id, $2 tbl, $3 key (jsonb array or scalar) -> the key as
  // text[] when it is held, locked.
  std::string lock_held;
  std::string put_key_in_page;  // $1 tbl, $2 key text[]
  std::string release;          // $1 transform id, $2 tbl, $3 key text[]
  std::string record_failure;   // $1 transform id, $2 tbl, $3 key text[], $4 error, $5 sqlstate
  std::string clear_transform;  // $1 transform id: forget every charge (RESUME rebuilds)
};

QuarantineSql compile_quarantine(const std::string& catalog_schema);

}  // namespace trellis::compile
