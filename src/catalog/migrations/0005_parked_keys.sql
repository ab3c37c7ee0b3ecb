-- Parked keys: while a 1-1 transform builds by key ranges (build_phase
-- 'ranges'), drains do not re-derive its keys; they park them here, in the
-- same commit as the page that read them. After the last range the build
-- re-derives every parked key with the drain's own statements (phase
-- 'parked') before the transform goes live, so a change a range read
-- half-way, or missed, is repaired from the source as it is then. One row
-- per key however often it changed, so the space is bounded by the keys
-- changed during one build.
CREATE TABLE @schema@.parked_keys (
  transform_id int NOT NULL REFERENCES @schema@.transforms (id) ON DELETE CASCADE,
  tbl int NOT NULL,
  key text[] NOT NULL,
  PRIMARY KEY (transform_id, tbl, key)
);
