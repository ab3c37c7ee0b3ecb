-- Drains read a bucket's keys in (tbl, coalesce(key[1], '') COLLATE "C",
-- key) order instead of ([tbl] || key) order (compile/drain_sql.hpp). A
-- bucket's cursor keeps its form, [tbl] || key, but a cursor of the earlier
-- order does not divide the keys into read and unread in the new one, so
-- every bucket not done starts again from its first page: the keys it
-- re-derives again are re-derived from the sources as they are now, which
-- changes nothing that is already right (and a TRUNCATE sentinel it holds
-- is applied again, likewise). A page index of a segment promoted by an
-- earlier version is rebuilt in the new order, so its drain reads in order
-- instead of scanning the slot for every page. Workers of an earlier version
-- that are already running must be stopped before this one starts.
UPDATE @schema@.buckets SET cursor = NULL WHERE NOT done AND cursor IS NOT NULL;

DO $migration$
DECLARE
  ns text := (SELECT schema_name FROM @schema@.instance);
  slot int;
BEGIN
  FOR slot IN 0..3 LOOP
    IF to_regclass(format('%I.%I', ns, 'ring_' || slot || '_page')) IS NOT NULL THEN
      EXECUTE format('DROP INDEX %I.%I', ns, 'ring_' || slot || '_page');
      EXECUTE format('CREATE INDEX %I ON %I.%I (bucket, tbl, '
                     '(coalesce(key[1], '''') COLLATE "C"), key) WHERE key IS NOT NULL',
                     'ring_' || slot || '_page', ns, 'ring_' || slot);
      EXECUTE format('ANALYZE %I.%I', ns, 'ring_' || slot);
    END IF;
  END LOOP;
END
$migration$;
