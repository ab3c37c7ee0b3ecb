-- function 1
CREATE OR REPLACE FUNCTION "trellis"."capture_1_ins"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $trellis$
DECLARE s pg_catalog.int8;
BEGIN
  s := pg_catalog.pg_sequence_last_value('"trellis"."active_segment"'::pg_catalog.regclass);
  IF pg_catalog.has_column_privilege(TG_RELID, 1::pg_catalog.int2, 'SELECT') IS NOT NULL THEN
    IF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'i' FROM (SELECT ARRAY[(r."id")::pg_catalog.text] AS k FROM __trellis_new AS r("id")) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'i' FROM (SELECT ARRAY[(r."id")::pg_catalog.text] AS k FROM __trellis_new AS r("id")) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'i' FROM (SELECT ARRAY[(r."id")::pg_catalog.text] AS k FROM __trellis_new AS r("id")) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'i' FROM (SELECT ARRAY[(r."id")::pg_catalog.text] AS k FROM __trellis_new AS r("id")) c;
    END IF;
  ELSE
    IF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'i' FROM (SELECT ARRAY[(__r.__j OPERATOR(pg_catalog.->>) 'id')] AS k FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'i' FROM (SELECT ARRAY[(__r.__j OPERATOR(pg_catalog.->>) 'id')] AS k FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'i' FROM (SELECT ARRAY[(__r.__j OPERATOR(pg_catalog.->>) 'id')] AS k FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'i' FROM (SELECT ARRAY[(__r.__j OPERATOR(pg_catalog.->>) 'id')] AS k FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r) c;
    END IF;
  END IF;
  RETURN NULL;
END
$trellis$

-- function 2
CREATE OR REPLACE FUNCTION "trellis"."capture_1_upd"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $trellis$
DECLARE s pg_catalog.int8;
BEGIN
  s := pg_catalog.pg_sequence_last_value('"trellis"."active_segment"'::pg_catalog.regclass);
  IF pg_catalog.has_column_privilege(TG_RELID, 1::pg_catalog.int2, 'SELECT') IS NOT NULL AND pg_catalog.has_column_privilege(TG_RELID, 2::pg_catalog.int2, 'SELECT') IS NOT NULL AND pg_catalog.has_column_privilege(TG_RELID, 4::pg_catalog.int2, 'SELECT') IS NOT NULL AND pg_catalog.has_column_privilege(TG_RELID, 5::pg_catalog.int2, 'SELECT') IS NOT NULL AND pg_catalog.has_column_privilege(TG_RELID, 6::pg_catalog.int2, 'SELECT') IS NOT NULL THEN
    IF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'u' FROM (SELECT CASE WHEN n.k IS NULL THEN o.k ELSE n.k END AS k FROM (SELECT ARRAY[(n."id")::pg_catalog.text] AS k, ROW(n."amount", n."customer_id", n."note", n."status") AS v FROM __trellis_new AS n("id", "customer_id", "status", "amount", "note")) n FULL JOIN (SELECT ARRAY[(o."id")::pg_catalog.text] AS k, ROW(o."amount", o."customer_id", o."note", o."status") AS v FROM __trellis_old AS o("id", "customer_id", "status", "amount", "note")) o ON o.k OPERATOR(pg_catalog.=) n.k WHERE n.k IS NULL OR o.k IS NULL OR NOT pg_catalog.record_image_eq(n.v, o.v)) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'u' FROM (SELECT CASE WHEN n.k IS NULL THEN o.k ELSE n.k END AS k FROM (SELECT ARRAY[(n."id")::pg_catalog.text] AS k, ROW(n."amount", n."customer_id", n."note", n."status") AS v FROM __trellis_new AS n("id", "customer_id", "status", "amount", "note")) n FULL JOIN (SELECT ARRAY[(o."id")::pg_catalog.text] AS k, ROW(o."amount", o."customer_id", o."note", o."status") AS v FROM __trellis_old AS o("id", "customer_id", "status", "amount", "note")) o ON o.k OPERATOR(pg_catalog.=) n.k WHERE n.k IS NULL OR o.k IS NULL OR NOT pg_catalog.record_image_eq(n.v, o.v)) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'u' FROM (SELECT CASE WHEN n.k IS NULL THEN o.k ELSE n.k END AS k FROM (SELECT ARRAY[(n."id")::pg_catalog.text] AS k, ROW(n."amount", n."customer_id", n."note", n."status") AS v FROM __trellis_new AS n("id", "customer_id", "status", "amount", "note")) n FULL JOIN (SELECT ARRAY[(o."id")::pg_catalog.text] AS k, ROW(o."amount", o."customer_id", o."note", o."status") AS v FROM __trellis_old AS o("id", "customer_id", "status", "amount", "note")) o ON o.k OPERATOR(pg_catalog.=) n.k WHERE n.k IS NULL OR o.k IS NULL OR NOT pg_catalog.record_image_eq(n.v, o.v)) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'u' FROM (SELECT CASE WHEN n.k IS NULL THEN o.k ELSE n.k END AS k FROM (SELECT ARRAY[(n."id")::pg_catalog.text] AS k, ROW(n."amount", n."customer_id", n."note", n."status") AS v FROM __trellis_new AS n("id", "customer_id", "status", "amount", "note")) n FULL JOIN (SELECT ARRAY[(o."id")::pg_catalog.text] AS k, ROW(o."amount", o."customer_id", o."note", o."status") AS v FROM __trellis_old AS o("id", "customer_id", "status", "amount", "note")) o ON o.k OPERATOR(pg_catalog.=) n.k WHERE n.k IS NULL OR o.k IS NULL OR NOT pg_catalog.record_image_eq(n.v, o.v)) c;
    END IF;
  ELSE
    IF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'u' FROM (SELECT d.k FROM (SELECT ARRAY[(__r.__j OPERATOR(pg_catalog.->>) 'id')], (__r.__j OPERATOR(pg_catalog.->) 'amount')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'customer_id')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'id')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'note')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'status')::pg_catalog.text FROM (SELECT __r.__j, 1 AS __w FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r UNION ALL SELECT __r.__j, -1 FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) __r GROUP BY 1, 2, 3, 4, 5, 6 HAVING pg_catalog.sum(__r.__w) OPERATOR(pg_catalog.<>) 0) AS d(k) GROUP BY d.k) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'u' FROM (SELECT d.k FROM (SELECT ARRAY[(__r.__j OPERATOR(pg_catalog.->>) 'id')], (__r.__j OPERATOR(pg_catalog.->) 'amount')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'customer_id')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'id')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'note')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'status')::pg_catalog.text FROM (SELECT __r.__j, 1 AS __w FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r UNION ALL SELECT __r.__j, -1 FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) __r GROUP BY 1, 2, 3, 4, 5, 6 HAVING pg_catalog.sum(__r.__w) OPERATOR(pg_catalog.<>) 0) AS d(k) GROUP BY d.k) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'u' FROM (SELECT d.k FROM (SELECT ARRAY[(__r.__j OPERATOR(pg_catalog.->>) 'id')], (__r.__j OPERATOR(pg_catalog.->) 'amount')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'customer_id')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'id')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'note')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'status')::pg_catalog.text FROM (SELECT __r.__j, 1 AS __w FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r UNION ALL SELECT __r.__j, -1 FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) __r GROUP BY 1, 2, 3, 4, 5, 6 HAVING pg_catalog.sum(__r.__w) OPERATOR(pg_catalog.<>) 0) AS d(k) GROUP BY d.k) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'u' FROM (SELECT d.k FROM (SELECT ARRAY[(__r.__j OPERATOR(pg_catalog.->>) 'id')], (__r.__j OPERATOR(pg_catalog.->) 'amount')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'customer_id')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'id')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'note')::pg_catalog.text, (__r.__j OPERATOR(pg_catalog.->) 'status')::pg_catalog.text FROM (SELECT __r.__j, 1 AS __w FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_new __row) __r UNION ALL SELECT __r.__j, -1 FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) __r GROUP BY 1, 2, 3, 4, 5, 6 HAVING pg_catalog.sum(__r.__w) OPERATOR(pg_catalog.<>) 0) AS d(k) GROUP BY d.k) c;
    END IF;
  END IF;
  RETURN NULL;
END
$trellis$

-- function 3
CREATE OR REPLACE FUNCTION "trellis"."capture_1_del"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $trellis$
DECLARE s pg_catalog.int8;
BEGIN
  s := pg_catalog.pg_sequence_last_value('"trellis"."active_segment"'::pg_catalog.regclass);
  IF pg_catalog.has_column_privilege(TG_RELID, 1::pg_catalog.int2, 'SELECT') IS NOT NULL THEN
    IF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'd' FROM (SELECT ARRAY[(r."id")::pg_catalog.text] AS k FROM __trellis_old AS r("id")) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'd' FROM (SELECT ARRAY[(r."id")::pg_catalog.text] AS k FROM __trellis_old AS r("id")) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'd' FROM (SELECT ARRAY[(r."id")::pg_catalog.text] AS k FROM __trellis_old AS r("id")) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'd' FROM (SELECT ARRAY[(r."id")::pg_catalog.text] AS k FROM __trellis_old AS r("id")) c;
    END IF;
  ELSE
    IF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'd' FROM (SELECT ARRAY[(__r.__j OPERATOR(pg_catalog.->>) 'id')] AS k FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'd' FROM (SELECT ARRAY[(__r.__j OPERATOR(pg_catalog.->>) 'id')] AS k FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'd' FROM (SELECT ARRAY[(__r.__j OPERATOR(pg_catalog.->>) 'id')] AS k FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) c;
    ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) SELECT 1, c.k, ((pg_catalog.hashtext(c.k::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2, 'd' FROM (SELECT ARRAY[(__r.__j OPERATOR(pg_catalog.->>) 'id')] AS k FROM (SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM __trellis_old __row) __r) c;
    END IF;
  END IF;
  RETURN NULL;
END
$trellis$

-- function 4
CREATE OR REPLACE FUNCTION "trellis"."capture_1_trunc"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $trellis$
DECLARE s pg_catalog.int8;
  x pg_catalog.xid8;
BEGIN
  x := pg_catalog.pg_current_xact_id();
  s := pg_catalog.pg_sequence_last_value('"trellis"."active_segment"'::pg_catalog.regclass);
  IF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 0 THEN INSERT INTO "trellis"."ring_0" (tbl, key, bucket, op) VALUES (1, NULL::pg_catalog.text[], 0::pg_catalog.int2, 't'::pg_catalog."char");
  ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 1 THEN INSERT INTO "trellis"."ring_1" (tbl, key, bucket, op) VALUES (1, NULL::pg_catalog.text[], 0::pg_catalog.int2, 't'::pg_catalog."char");
  ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 2 THEN INSERT INTO "trellis"."ring_2" (tbl, key, bucket, op) VALUES (1, NULL::pg_catalog.text[], 0::pg_catalog.int2, 't'::pg_catalog."char");
  ELSIF (s OPERATOR(pg_catalog.%) 4) OPERATOR(pg_catalog.=) 3 THEN INSERT INTO "trellis"."ring_3" (tbl, key, bucket, op) VALUES (1, NULL::pg_catalog.text[], 0::pg_catalog.int2, 't'::pg_catalog."char");
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

-- drop 9
DROP TRIGGER IF EXISTS "trellis_trellis_move_1" ON "public"."orders"

-- drop 10
DROP FUNCTION IF EXISTS "trellis"."capture_1_move"()

-- trigger probe
SELECT count(*) FROM pg_trigger WHERE tgrelid = '"public"."orders"'::regclass AND tgname LIKE 'trellis\_%\_trellis' AND tgenabled = 'A' AND tgfoid IN (to_regprocedure('"trellis"."capture_1_ins"()'), to_regprocedure('"trellis"."capture_1_upd"()'), to_regprocedure('"trellis"."capture_1_del"()'), to_regprocedure('"trellis"."capture_1_trunc"()'))

-- function digest
SELECT string_agg(p.proname || ':' || md5(p.prosrc), ',' ORDER BY p.proname) FROM pg_proc p WHERE p.oid IN (to_regprocedure('"trellis"."capture_1_ins"()'), to_regprocedure('"trellis"."capture_1_upd"()'), to_regprocedure('"trellis"."capture_1_del"()'), to_regprocedure('"trellis"."capture_1_trunc"()'))

