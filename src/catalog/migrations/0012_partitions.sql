-- Partitioned captured tables (docs/architecture.md, "Partitioned sources").
-- A statement trigger fires only on the table its statement names, so every
-- node under a partitioned root (middle partitioned tables and leaves) carries
-- capture triggers of its own, rendered from its own column layout and
-- staging the root's captured-table id. ATTACH, DETACH and DROP of a
-- partition fire no trigger: the staging worker compares the partition tree
-- with these rows and corrects for each difference.
CREATE TABLE @schema@.captured_partitions (
  table_id int NOT NULL REFERENCES @schema@.captured_tables (id) ON DELETE CASCADE,
  relid oid NOT NULL,
  node_name text NOT NULL,          -- schema.name as last seen
  -- The xmin of its pg_inherits row: a partition detached and attached again
  -- between two looks has a new one (and rows that were away meanwhile).
  link text NOT NULL,
  installed_signature text,         -- the root's signature its capture was rendered for
  installed_digest text,            -- of its trigger functions' bodies
  left_tree bool NOT NULL DEFAULT false,  -- detached or dropped; its capture is being removed
  -- pg_get_partition_constraintdef as of the last look (NULL under a DEFAULT
  -- partition, whose constraint moves with its siblings): which keys it can
  -- have held once it is dropped.
  constraint_def text,
  PRIMARY KEY (table_id, relid)
);

-- Corrections under way: one row per partition event the readers of the
-- table are being corrected for, listed by status() as `correcting` until
-- the keys staged for it are drained (and, for a dropped partition, whose
-- keys cannot be read any more, until its readers' rebuild is done).
CREATE TABLE @schema@.partition_corrections (
  id bigserial PRIMARY KEY,
  table_id int NOT NULL REFERENCES @schema@.captured_tables (id) ON DELETE CASCADE,
  relid oid NOT NULL,
  node_name text NOT NULL,
  reason text NOT NULL CHECK (reason IN ('attached', 'detached', 'dropped', 'truncated')),
  since timestamptz NOT NULL DEFAULT now(),
  -- Its keys are read once no worker transaction older than this is open:
  -- such a drain may still write a row it derived before the event.
  fence timestamptz NOT NULL DEFAULT clock_timestamp(),
  constraint_def text,              -- the partition's, when it was opened
  staged_through bigint,            -- the segment its keys went into; NULL: not staged yet
  rebuilding bool NOT NULL DEFAULT false
);
CREATE INDEX ON @schema@.partition_corrections (table_id, since);
