-- function 1
CREATE OR REPLACE FUNCTION "trellis"."capture_1_ins"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $trellis$
DECLARE s bigint;
BEGIN
  s := pg_sequence_last_value('"trellis"."active_segment"'::regclass);
  IF pg_catalog.has_column_privilege(TG_RELID, 1::int2, 'SELECT') IS NOT NULL THEN
    IF s % 4 = 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'i' FROM (SELECT ARRAY[(r."id")::text] AS k FROM __trellis_new AS r("id")) c;
    ELSIF s % 4 = 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'i' FROM (SELECT ARRAY[(r."id")::text] AS k FROM __trellis_new AS r("id")) c;
    ELSIF s % 4 = 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'i' FROM (SELECT ARRAY[(r."id")::text] AS k FROM __trellis_new AS r("id")) c;
    ELSIF s % 4 = 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'i' FROM (SELECT ARRAY[(r."id")::text] AS k FROM __trellis_new AS r("id")) c;
    END IF;
  ELSE
    IF s % 4 = 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'i' FROM (SELECT ARRAY[(__r.__j ->> 'id')] AS k FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r) c;
    ELSIF s % 4 = 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'i' FROM (SELECT ARRAY[(__r.__j ->> 'id')] AS k FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r) c;
    ELSIF s % 4 = 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'i' FROM (SELECT ARRAY[(__r.__j ->> 'id')] AS k FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r) c;
    ELSIF s % 4 = 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'i' FROM (SELECT ARRAY[(__r.__j ->> 'id')] AS k FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r) c;
    END IF;
  END IF;
  RETURN NULL;
END
$trellis$

-- function 2
CREATE OR REPLACE FUNCTION "trellis"."capture_1_upd"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $trellis$
DECLARE s bigint;
BEGIN
  s := pg_sequence_last_value('"trellis"."active_segment"'::regclass);
  IF pg_catalog.has_column_privilege(TG_RELID, 1::int2, 'SELECT') IS NOT NULL AND pg_catalog.has_column_privilege(TG_RELID, 2::int2, 'SELECT') IS NOT NULL AND pg_catalog.has_column_privilege(TG_RELID, 4::int2, 'SELECT') IS NOT NULL AND pg_catalog.has_column_privilege(TG_RELID, 5::int2, 'SELECT') IS NOT NULL AND pg_catalog.has_column_privilege(TG_RELID, 6::int2, 'SELECT') IS NOT NULL THEN
    IF s % 4 = 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'u' FROM (SELECT CASE WHEN n.k IS NULL THEN o.k ELSE n.k END AS k FROM (SELECT ARRAY[(n."id")::text] AS k, n."amount" AS e0, n."customer_id" AS e1, n."note" AS e2, n."status" AS e3 FROM __trellis_new AS n("id", "customer_id", "status", "amount", "note")) n FULL JOIN (SELECT ARRAY[(o."id")::text] AS k, o."amount" AS e0, o."customer_id" AS e1, o."note" AS e2, o."status" AS e3 FROM __trellis_old AS o("id", "customer_id", "status", "amount", "note")) o ON o.k = n.k WHERE n.k IS NULL OR o.k IS NULL OR (n.e0, n.e1, n.e2, n.e3) IS DISTINCT FROM (o.e0, o.e1, o.e2, o.e3)) c;
    ELSIF s % 4 = 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'u' FROM (SELECT CASE WHEN n.k IS NULL THEN o.k ELSE n.k END AS k FROM (SELECT ARRAY[(n."id")::text] AS k, n."amount" AS e0, n."customer_id" AS e1, n."note" AS e2, n."status" AS e3 FROM __trellis_new AS n("id", "customer_id", "status", "amount", "note")) n FULL JOIN (SELECT ARRAY[(o."id")::text] AS k, o."amount" AS e0, o."customer_id" AS e1, o."note" AS e2, o."status" AS e3 FROM __trellis_old AS o("id", "customer_id", "status", "amount", "note")) o ON o.k = n.k WHERE n.k IS NULL OR o.k IS NULL OR (n.e0, n.e1, n.e2, n.e3) IS DISTINCT FROM (o.e0, o.e1, o.e2, o.e3)) c;
    ELSIF s % 4 = 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'u' FROM (SELECT CASE WHEN n.k IS NULL THEN o.k ELSE n.k END AS k FROM (SELECT ARRAY[(n."id")::text] AS k, n."amount" AS e0, n."customer_id" AS e1, n."note" AS e2, n."status" AS e3 FROM __trellis_new AS n("id", "customer_id", "status", "amount", "note")) n FULL JOIN (SELECT ARRAY[(o."id")::text] AS k, o."amount" AS e0, o."customer_id" AS e1, o."note" AS e2, o."status" AS e3 FROM __trellis_old AS o("id", "customer_id", "status", "amount", "note")) o ON o.k = n.k WHERE n.k IS NULL OR o.k IS NULL OR (n.e0, n.e1, n.e2, n.e3) IS DISTINCT FROM (o.e0, o.e1, o.e2, o.e3)) c;
    ELSIF s % 4 = 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'u' FROM (SELECT CASE WHEN n.k IS NULL THEN o.k ELSE n.k END AS k FROM (SELECT ARRAY[(n."id")::text] AS k, n."amount" AS e0, n."customer_id" AS e1, n."note" AS e2, n."status" AS e3 FROM __trellis_new AS n("id", "customer_id", "status", "amount", "note")) n FULL JOIN (SELECT ARRAY[(o."id")::text] AS k, o."amount" AS e0, o."customer_id" AS e1, o."note" AS e2, o."status" AS e3 FROM __trellis_old AS o("id", "customer_id", "status", "amount", "note")) o ON o.k = n.k WHERE n.k IS NULL OR o.k IS NULL OR (n.e0, n.e1, n.e2, n.e3) IS DISTINCT FROM (o.e0, o.e1, o.e2, o.e3)) c;
    END IF;
  ELSE
    IF s % 4 = 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'u' FROM (SELECT d.k FROM (SELECT ARRAY[(__r.__j ->> 'id')], (__r.__j -> 'amount')::text, (__r.__j -> 'customer_id')::text, (__r.__j -> 'id')::text, (__r.__j -> 'note')::text, (__r.__j -> 'status')::text FROM (SELECT __r.__j, 1 AS __w FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r UNION ALL SELECT __r.__j, -1 FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) __r GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(__r.__w) <> 0) AS d(k) GROUP BY d.k) c;
    ELSIF s % 4 = 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'u' FROM (SELECT d.k FROM (SELECT ARRAY[(__r.__j ->> 'id')], (__r.__j -> 'amount')::text, (__r.__j -> 'customer_id')::text, (__r.__j -> 'id')::text, (__r.__j -> 'note')::text, (__r.__j -> 'status')::text FROM (SELECT __r.__j, 1 AS __w FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r UNION ALL SELECT __r.__j, -1 FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) __r GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(__r.__w) <> 0) AS d(k) GROUP BY d.k) c;
    ELSIF s % 4 = 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'u' FROM (SELECT d.k FROM (SELECT ARRAY[(__r.__j ->> 'id')], (__r.__j -> 'amount')::text, (__r.__j -> 'customer_id')::text, (__r.__j -> 'id')::text, (__r.__j -> 'note')::text, (__r.__j -> 'status')::text FROM (SELECT __r.__j, 1 AS __w FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r UNION ALL SELECT __r.__j, -1 FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) __r GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(__r.__w) <> 0) AS d(k) GROUP BY d.k) c;
    ELSIF s % 4 = 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'u' FROM (SELECT d.k FROM (SELECT ARRAY[(__r.__j ->> 'id')], (__r.__j -> 'amount')::text, (__r.__j -> 'customer_id')::text, (__r.__j -> 'id')::text, (__r.__j -> 'note')::text, (__r.__j -> 'status')::text FROM (SELECT __r.__j, 1 AS __w FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r UNION ALL SELECT __r.__j, -1 FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) __r GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(__r.__w) <> 0) AS d(k) GROUP BY d.k) c;
    END IF;
  END IF;
  RETURN NULL;
END
$trellis$

-- function 3
CREATE OR REPLACE FUNCTION "trellis"."capture_1_del"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $trellis$
DECLARE s bigint;
BEGIN
  s := pg_sequence_last_value('"trellis"."active_segment"'::regclass);
  IF pg_catalog.has_column_privilege(TG_RELID, 1::int2, 'SELECT') IS NOT NULL THEN
    IF s % 4 = 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'd' FROM (SELECT ARRAY[(r."id")::text] AS k FROM __trellis_old AS r("id")) c;
    ELSIF s % 4 = 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'd' FROM (SELECT ARRAY[(r."id")::text] AS k FROM __trellis_old AS r("id")) c;
    ELSIF s % 4 = 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'd' FROM (SELECT ARRAY[(r."id")::text] AS k FROM __trellis_old AS r("id")) c;
    ELSIF s % 4 = 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'd' FROM (SELECT ARRAY[(r."id")::text] AS k FROM __trellis_old AS r("id")) c;
    END IF;
  ELSE
    IF s % 4 = 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'd' FROM (SELECT ARRAY[(__r.__j ->> 'id')] AS k FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) c;
    ELSIF s % 4 = 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'd' FROM (SELECT ARRAY[(__r.__j ->> 'id')] AS k FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) c;
    ELSIF s % 4 = 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'd' FROM (SELECT ARRAY[(__r.__j ->> 'id')] AS k FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) c;
    ELSIF s % 4 = 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) SELECT 1, c.k, ((hashtext(c.k::text) & 2147483647) % 16)::int2, 'd' FROM (SELECT ARRAY[(__r.__j ->> 'id')] AS k FROM (SELECT to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) c;
    END IF;
  END IF;
  RETURN NULL;
END
$trellis$

-- function 4
CREATE OR REPLACE FUNCTION "trellis"."capture_1_trunc"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $trellis$
DECLARE s bigint;
  x xid8;
BEGIN
  x := pg_current_xact_id();
  s := pg_sequence_last_value('"trellis"."active_segment"'::regclass);
  IF s % 4 = 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) VALUES (1, NULL::text[], 0::int2, 't'::"char");
  ELSIF s % 4 = 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) VALUES (1, NULL::text[], 0::int2, 't'::"char");
  ELSIF s % 4 = 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) VALUES (1, NULL::text[], 0::int2, 't'::"char");
  ELSIF s % 4 = 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) VALUES (1, NULL::text[], 0::int2, 't'::"char");
  END IF;
  RETURN NULL;
END
$trellis$

-- trigger 1
CREATE TRIGGER "trellis_ins_trellis" AFTER INSERT ON "public"."orders" REFERENCING NEW TABLE AS __trellis_new FOR EACH STATEMENT EXECUTE FUNCTION "trellis"."capture_1_ins"(); ALTER TABLE "public"."orders" ENABLE ALWAYS TRIGGER "trellis_ins_trellis"

-- trigger 2
CREATE TRIGGER "trellis_upd_trellis" AFTER UPDATE ON "public"."orders" REFERENCING OLD TABLE AS __trellis_old NEW TABLE AS __trellis_new FOR EACH STATEMENT EXECUTE FUNCTION "trellis"."capture_1_upd"(); ALTER TABLE "public"."orders" ENABLE ALWAYS TRIGGER "trellis_upd_trellis"

-- trigger 3
CREATE TRIGGER "trellis_del_trellis" AFTER DELETE ON "public"."orders" REFERENCING OLD TABLE AS __trellis_old FOR EACH STATEMENT EXECUTE FUNCTION "trellis"."capture_1_del"(); ALTER TABLE "public"."orders" ENABLE ALWAYS TRIGGER "trellis_del_trellis"

-- trigger 4
CREATE TRIGGER "trellis_trunc_trellis" AFTER TRUNCATE ON "public"."orders"  FOR EACH STATEMENT EXECUTE FUNCTION "trellis"."capture_1_trunc"(); ALTER TABLE "public"."orders" ENABLE ALWAYS TRIGGER "trellis_trunc_trellis"

-- drop 1
DROP TRIGGER IF EXISTS "trellis_ins_trellis" ON "public"."orders"

-- drop 2
DROP TRIGGER IF EXISTS "trellis_upd_trellis" ON "public"."orders"

-- drop 3
DROP TRIGGER IF EXISTS "trellis_del_trellis" ON "public"."orders"

-- drop 4
DROP TRIGGER IF EXISTS "trellis_trunc_trellis" ON "public"."orders"

-- drop 5
DROP FUNCTION IF EXISTS "trellis"."capture_1_ins"()

-- drop 6
DROP FUNCTION IF EXISTS "trellis"."capture_1_upd"()

-- drop 7
DROP FUNCTION IF EXISTS "trellis"."capture_1_del"()

-- drop 8
DROP FUNCTION IF EXISTS "trellis"."capture_1_trunc"()

-- trigger probe
SELECT count(*) FROM pg_trigger WHERE tgrelid = '"public"."orders"'::regclass AND tgname LIKE 'trellis\_%\_trellis' AND tgenabled = 'A' AND tgfoid IN (to_regprocedure('"trellis"."capture_1_ins"()'), to_regprocedure('"trellis"."capture_1_upd"()'), to_regprocedure('"trellis"."capture_1_del"()'), to_regprocedure('"trellis"."capture_1_trunc"()'))

-- function digest
SELECT string_agg(p.proname || ':' || md5(p.prosrc), ',' ORDER BY p.proname) FROM pg_proc p WHERE p.oid IN (to_regprocedure('"trellis"."capture_1_ins"()'), to_regprocedure('"trellis"."capture_1_upd"()'), to_regprocedure('"trellis"."capture_1_del"()'), to_regprocedure('"trellis"."capture_1_trunc"()'))

