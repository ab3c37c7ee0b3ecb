-- Quarantine (DESIGN §4.6): a source key whose re-derive keeps failing with
-- a data error for one transform is charged here; after 5 charges it is held
-- (the drain skips it for that transform, its target row keeps its old
-- value) until release_key re-derives it or RESUME rebuilds the transform.
-- 5 held keys trip the transform's fuse (status 'quarantined').
CREATE TABLE @schema@.held_keys (
  transform_id int NOT NULL REFERENCES @schema@.transforms (id) ON DELETE CASCADE,
  tbl int NOT NULL,
  key text[] NOT NULL,
  charges int NOT NULL DEFAULT 1,
  held bool NOT NULL DEFAULT false,
  seg bigint,                     -- segment of the change held back (blocks tokens reaching it)
  error text NOT NULL,
  sqlstate text NOT NULL,
  first_failed_at timestamptz NOT NULL DEFAULT now(),
  held_at timestamptz,
  PRIMARY KEY (transform_id, tbl, key)
);
CREATE INDEX ON @schema@.held_keys (transform_id, tbl, key) WHERE held;
