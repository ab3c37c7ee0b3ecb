-- Range claims: the ranges of a build phase that writes by ranges
-- (build_phase 'ranges' or 'group_ranges') are claimed one at a time by any
-- drain thread of any process, so a build uses all of them. A claim is
-- committed in a short transaction of its own, before its range runs; the
-- range's transaction marks it done in the same commit as the rows it wrote.
-- Rows belong to the phase whose build_fence they carry: rows of another
-- fence are stale (a later phase or build) and are cleared by the next claim.
--
-- The frontier: the upper bound of the last range claimed (NULL: none yet,
-- or, with at_end, the last range claimed), and whether the rest of the
-- phase goes by keyset chunks through the build's owner (chunked: a range
-- failed otherwise than transiently, or the transform holds keys).
CREATE TABLE @schema@.range_frontiers (
  transform_id int PRIMARY KEY REFERENCES @schema@.transforms (id) ON DELETE CASCADE,
  fence timestamptz NOT NULL,
  cursor text[],
  at_end bool NOT NULL DEFAULT false,
  chunked bool NOT NULL DEFAULT false,
  next_seq int NOT NULL DEFAULT 0
);

-- One range (lo, hi] (NULL: an open end), in claim order (seq, which is key
-- order), the backend working on it (NULL, or a backend that is gone: free
-- to take over), and once done the source rows it wrote.
CREATE TABLE @schema@.range_claims (
  transform_id int NOT NULL REFERENCES @schema@.transforms (id) ON DELETE CASCADE,
  fence timestamptz NOT NULL,
  seq int NOT NULL,
  lo text[],
  hi text[],
  owner_pid int,
  owner_start timestamptz,
  done bool NOT NULL DEFAULT false,
  rows_done bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (transform_id, fence, seq)
);
