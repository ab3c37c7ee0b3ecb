-- Aggregate builds write their groups by group-key ranges of the ledger
-- (build_phase 'group_ranges') before the parked keys are re-derived
-- ('parked'), where an earlier version re-derived the parked keys first and
-- recomputed the groups after them. An aggregate build this version finds in
-- 'parked' has not written its groups yet: it goes back to 'group_ranges'
-- (drains park its keys again, the phase starts behind a fence), rewriting
-- over whatever groups the discharge already touched, and then discharges
-- the parked keys as usual.
UPDATE @schema@.transforms
SET build_phase = 'group_ranges', build_cursor = NULL, build_fence = NULL,
    build_sweep_target = true
WHERE status = 'backfilling' AND build_phase = 'parked' AND shape = 'aggregate';
