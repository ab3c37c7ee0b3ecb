-- Field builds (ALTER TRANSFORM): a live 1-1 transform whose fields were
-- added or changed goes back to 'backfilling' with build_phase
-- 'awaiting_capture' and build_fields naming the fields to build. The
-- staging worker widens capture, records build_fence (a time after the
-- ALTER committed), and starts the build (phase 'fields') once no drain
-- transaction that may still hold the old definition is running.
ALTER TABLE @schema@.transforms
  ADD COLUMN build_fields text[],
  ADD COLUMN build_fence timestamptz;

-- A digest of the capture trigger functions' bodies as installed, so a
-- function replaced outside Trellis is noticed (capture_failure kind
-- 'disruption').
ALTER TABLE @schema@.captured_tables ADD COLUMN installed_digest text;

-- Paused columns of a 1-1 target (PAUSE TRANSFORM t.col): field name ->
-- {since, reason}. Drains and builds leave them as they are; RESUME
-- TRANSFORM t.col removes the entry and builds the field again.
ALTER TABLE @schema@.transforms ADD COLUMN paused_columns jsonb NOT NULL DEFAULT '{}';

-- Quarantine by column (1-1 targets): the field a held key's failure was
-- narrowed down to. 5 keys held for one field pause that field (its
-- paused_columns entry says 'quarantine') instead of the whole transform.
ALTER TABLE @schema@.held_keys ADD COLUMN column_name text;
