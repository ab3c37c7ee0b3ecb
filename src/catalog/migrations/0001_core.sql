-- Trellis catalog, format 1. @schema@ is replaced by the instance's quoted
-- catalog schema name before this runs.
CREATE SCHEMA IF NOT EXISTS @schema@;

CREATE TABLE @schema@.instance (
  singleton bool PRIMARY KEY DEFAULT true CHECK (singleton),
  schema_name text NOT NULL,
  format_version int NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- One row per transform. `definition` is the validated, resolved form the
-- compiler renders SQL from; `statement` is the normalised text for dump.
CREATE TABLE @schema@.transforms (
  id serial PRIMARY KEY,
  target_schema text NOT NULL,
  target_table text NOT NULL,
  source_table_id int NOT NULL,
  shape text NOT NULL,
  statement text NOT NULL,
  definition jsonb NOT NULL,
  status text NOT NULL DEFAULT 'waiting_to_backfill',
  version int NOT NULL DEFAULT 1,
  build_phase text,          -- source | target | null when not building
  build_sweep_target bool NOT NULL DEFAULT false,  -- resume: also re-derive keys only the target holds
  build_cursor text[],
  build_owner_pid int,
  build_owner_start timestamptz,
  build_not_before timestamptz,  -- backoff after a failed chunk
  build_rows_done bigint NOT NULL DEFAULT 0,
  build_rows_estimate bigint NOT NULL DEFAULT 0,
  capture_wait jsonb,
  capture_failure jsonb,
  backfill_failure jsonb,
  drain_failure jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (target_schema, target_table)
);

-- Every table some transform reads. Its id is what ring rows carry; its key
-- is what the capture triggers encode.
CREATE TABLE @schema@.captured_tables (
  id serial PRIMARY KEY,
  table_schema text NOT NULL,
  table_name text NOT NULL,
  relid oid NOT NULL,
  key_columns jsonb NOT NULL,     -- [{"name":..,"type":..}]
  installed_signature text,       -- what the installed triggers were rendered from
  UNIQUE (table_schema, table_name)
);

-- The ring: append-only slot tables recycled by TRUNCATE. The active segment
-- number is published in a sequence; its slot is segment % 4.
CREATE SEQUENCE @schema@.active_segment MINVALUE 0;
SELECT setval('@schema@.active_segment', 1, true);

CREATE TABLE @schema@.ring_0 (tbl int NOT NULL, key text[], bucket int2 NOT NULL, op "char" NOT NULL)
  WITH (autovacuum_enabled = off);
CREATE TABLE @schema@.ring_1 (LIKE @schema@.ring_0) WITH (autovacuum_enabled = off);
CREATE TABLE @schema@.ring_2 (LIKE @schema@.ring_0) WITH (autovacuum_enabled = off);
CREATE TABLE @schema@.ring_3 (LIKE @schema@.ring_0) WITH (autovacuum_enabled = off);

-- Segment registry: active -> sealed (fence set) -> ready (buckets listed)
-- -> drained -> retired (slot truncated, free for reuse).
CREATE TABLE @schema@.segments (
  seg bigint PRIMARY KEY,
  state text NOT NULL,
  fence xid8,
  into_seg bigint,                -- latest segment downstream writes may have reached
  sealed_at timestamptz,
  drained_at timestamptz
);
INSERT INTO @schema@.segments (seg, state) VALUES (1, 'active');

-- One claimable unit of drain work: the rows of a ready segment in one bucket.
CREATE TABLE @schema@.buckets (
  seg bigint NOT NULL REFERENCES @schema@.segments ON DELETE CASCADE,
  bucket int2 NOT NULL,
  owner_pid int,
  owner_start timestamptz,
  cursor text[],
  done bool NOT NULL DEFAULT false,
  into_seg bigint,
  attempts int NOT NULL DEFAULT 0,
  not_before timestamptz,         -- backoff after a failed page
  PRIMARY KEY (seg, bucket)
);
CREATE INDEX ON @schema@.buckets (seg) WHERE NOT done;

-- Live worker processes (drain threads and the staging worker).
CREATE TABLE @schema@.workers (
  pid int NOT NULL,
  backend_start timestamptz NOT NULL,
  kind text NOT NULL,
  host text NOT NULL,
  heartbeat timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (pid, backend_start)
);
