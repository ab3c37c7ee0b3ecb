-- Parked keys by key slot: the slot is the key's ring bucket, as the
-- re-derives' slot locks compute it (compile/shared_sql, lock_key_slots).
-- Every drain thread discharges parked keys by slots, each taken by a
-- try-lock no other thread waits on, so the discharge of a build's parked
-- keys runs on all of them and a discharge transaction locks only its
-- slots, not all sixteen, against the transform's drain pages. The slot
-- is a hint for that split only: a key's re-derive still takes its slot
-- locks from the key itself, so a row parked with slot 0 (before this
-- migration, or by an older process) is discharged all the same.
ALTER TABLE @schema@.parked_keys ADD COLUMN slot int2 NOT NULL DEFAULT 0;
CREATE INDEX ON @schema@.parked_keys (transform_id, slot);
