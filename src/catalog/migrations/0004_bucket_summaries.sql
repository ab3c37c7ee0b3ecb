-- What a ready bucket holds, summarised once when its segment is promoted
-- (one pass over the slot, grouped by bucket), so no drain page has to scan
-- the slot for it: the table ids it carries, those it carries a TRUNCATE
-- sentinel for, and how many ring rows it has.
ALTER TABLE @schema@.buckets
  ADD COLUMN tables int[],
  ADD COLUMN truncated int[],
  ADD COLUMN ring_rows bigint;

-- Buckets listed before this migration: summarise them from their slots.
UPDATE @schema@.buckets b SET tables = s.tables, truncated = s.truncated, ring_rows = s.n
  FROM (SELECT bucket, array_agg(DISTINCT tbl) AS tables,
               array_agg(DISTINCT tbl) FILTER (WHERE op = 't') AS truncated, count(*) AS n
          FROM @schema@.ring_0 GROUP BY bucket) s
 WHERE b.seg % 4 = 0 AND b.bucket = s.bucket;
UPDATE @schema@.buckets b SET tables = s.tables, truncated = s.truncated, ring_rows = s.n
  FROM (SELECT bucket, array_agg(DISTINCT tbl) AS tables,
               array_agg(DISTINCT tbl) FILTER (WHERE op = 't') AS truncated, count(*) AS n
          FROM @schema@.ring_1 GROUP BY bucket) s
 WHERE b.seg % 4 = 1 AND b.bucket = s.bucket;
UPDATE @schema@.buckets b SET tables = s.tables, truncated = s.truncated, ring_rows = s.n
  FROM (SELECT bucket, array_agg(DISTINCT tbl) AS tables,
               array_agg(DISTINCT tbl) FILTER (WHERE op = 't') AS truncated, count(*) AS n
          FROM @schema@.ring_2 GROUP BY bucket) s
 WHERE b.seg % 4 = 2 AND b.bucket = s.bucket;
UPDATE @schema@.buckets b SET tables = s.tables, truncated = s.truncated, ring_rows = s.n
  FROM (SELECT bucket, array_agg(DISTINCT tbl) AS tables,
               array_agg(DISTINCT tbl) FILTER (WHERE op = 't') AS truncated, count(*) AS n
          FROM @schema@.ring_3 GROUP BY bucket) s
 WHERE b.seg % 4 = 3 AND b.bucket = s.bucket;
