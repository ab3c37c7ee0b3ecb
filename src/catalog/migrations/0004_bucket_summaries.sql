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
  FROM (SELECT slot, bucket, array_agg(DISTINCT tbl) AS tables,
               array_agg(DISTINCT tbl) FILTER (WHERE op = 't') AS truncated, count(*) AS n
          FROM (SELECT 0 AS slot, * FROM @schema@.ring_0
                UNION ALL SELECT 1, * FROM @schema@.ring_1
                UNION ALL SELECT 2, * FROM @schema@.ring_2
                UNION ALL SELECT 3, * FROM @schema@.ring_3) r
         GROUP BY slot, bucket) s
 WHERE b.seg % 4 = s.slot AND b.bucket = s.bucket;
