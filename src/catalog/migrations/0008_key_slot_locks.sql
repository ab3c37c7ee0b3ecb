-- Re-derives lock key slots (a transaction-scoped advisory lock per
-- transform and ring bucket) instead of the rows of each key: see I1 in
-- docs/architecture.md. The catalog's tables do not change; this format
-- version exists so that a binary of an earlier version, which locks rows
-- and would not exclude this version's re-derives of the same key, refuses
-- to start on a catalog this version has served. Workers of an earlier
-- version that are already running must be stopped before this one starts.
SELECT 1;
