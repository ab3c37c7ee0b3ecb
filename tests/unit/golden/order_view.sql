-- create 1
CREATE TABLE "public"."order_view" ("id" bigint NOT NULL, "customer" integer, "doubled" numeric, "short_note" text, PRIMARY KEY ("id"))

-- ledger group index
(none)

-- ledger key index
(none)

-- ledger key missing
(none)

-- ledger group indexes missing
(none)

-- drop 1
DROP TABLE IF EXISTS "public"."order_view"

-- drain step 1
SELECT pg_advisory_xact_lock(6076002766642217216 + __s.slot) FROM (SELECT DISTINCT ((pg_catalog.hashtext(p.key::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2 AS slot FROM pg_temp.trellis_page p WHERE p.tbl = 1) __s ORDER BY __s.slot

-- drain step 2
MERGE INTO "public"."order_view" AS __t USING (SELECT __k."id" AS "__key1", __r.* FROM (SELECT DISTINCT ((p.key)[1])::bigint AS "id" FROM pg_temp.trellis_page p WHERE p.tbl = 1) __k LEFT JOIN (SELECT "orders"."id" AS "id", (customer_id) AS "customer", (amount * 2) AS "doubled", ("left"(note, 8)) AS "short_note", true AS "__present" FROM "public"."orders" AS "orders" WHERE (status <> 'void')) __r ON __r."id" = __k."id") AS __s ON __t."id" = __s."__key1" WHEN MATCHED AND __s."__present" IS NULL THEN DELETE WHEN MATCHED AND (__t."customer" IS DISTINCT FROM __s."customer" OR __t."doubled"::text IS DISTINCT FROM __s."doubled"::text OR __t."short_note" IS DISTINCT FROM __s."short_note") THEN UPDATE SET "customer" = __s."customer", "doubled" = __s."doubled", "short_note" = __s."short_note" WHEN NOT MATCHED AND __s."__present" THEN INSERT ("id", "customer", "doubled", "short_note") VALUES (__s."id", __s."customer", __s."doubled", __s."short_note")

-- page all held keys
INSERT INTO pg_temp.trellis_page (tbl, key) SELECT 1, __e.key FROM (SELECT ARRAY[(__r."id")::pg_catalog.text] AS key FROM "public"."order_view" AS __r) __e WHERE NOT EXISTS (SELECT 1 FROM pg_temp.trellis_page __p WHERE __p.tbl = 1 AND __p.key = __e.key)

-- source chunk bound
SELECT ARRAY[(__r."id")::pg_catalog.text] FROM (SELECT __r."id" FROM "public"."orders" AS __r WHERE $1::text[] IS NULL OR (__r."id") > ((($1::text[])[1])::bigint) ORDER BY __r."id" OFFSET $2::int - 1 LIMIT 1) AS __r

-- sweep chunk bound
SELECT ARRAY[(__r."id")::pg_catalog.text] FROM (SELECT __r."id" FROM "public"."order_view" AS __r WHERE $1::text[] IS NULL OR (__r."id") > ((($1::text[])[1])::bigint) ORDER BY __r."id" OFFSET $2::int - 1 LIMIT 1) AS __r

-- page source range
INSERT INTO pg_temp.trellis_page (tbl, key) SELECT 1, __e.key FROM (SELECT ARRAY[(__r."id")::pg_catalog.text] AS key FROM "public"."orders" AS __r WHERE ($1::text[] IS NULL OR (__r."id") > ((($1::text[])[1])::bigint)) AND ($2::text[] IS NULL OR (__r."id") <= ((($2::text[])[1])::bigint))) __e WHERE NOT EXISTS (SELECT 1 FROM pg_temp.trellis_page __p WHERE __p.tbl = 1 AND __p.key = __e.key)

-- page sweep range
INSERT INTO pg_temp.trellis_page (tbl, key) SELECT 1, __e.key FROM (SELECT ARRAY[(__r."id")::pg_catalog.text] AS key FROM "public"."order_view" AS __r WHERE ($1::text[] IS NULL OR (__r."id") > ((($1::text[])[1])::bigint)) AND ($2::text[] IS NULL OR (__r."id") <= ((($2::text[])[1])::bigint))) __e WHERE NOT EXISTS (SELECT 1 FROM pg_temp.trellis_page __p WHERE __p.tbl = 1 AND __p.key = __e.key)

-- build step 1
SELECT pg_advisory_xact_lock(6076002766642217216 + __s.slot) FROM (SELECT DISTINCT ((pg_catalog.hashtext(p.key::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2 AS slot FROM pg_temp.trellis_page p WHERE p.tbl = 1) __s ORDER BY __s.slot

-- build step 2
MERGE INTO "public"."order_view" AS __t USING (SELECT __k."id" AS "__key1", __r.* FROM (SELECT DISTINCT ((p.key)[1])::bigint AS "id" FROM pg_temp.trellis_page p WHERE p.tbl = 1) __k LEFT JOIN (SELECT "orders"."id" AS "id", (customer_id) AS "customer", (amount * 2) AS "doubled", ("left"(note, 8)) AS "short_note", true AS "__present" FROM "public"."orders" AS "orders" WHERE (status <> 'void')) __r ON __r."id" = __k."id") AS __s ON __t."id" = __s."__key1" WHEN MATCHED AND __s."__present" IS NULL THEN DELETE WHEN MATCHED AND (__t."customer" IS DISTINCT FROM __s."customer" OR __t."doubled"::text IS DISTINCT FROM __s."doubled"::text OR __t."short_note" IS DISTINCT FROM __s."short_note") THEN UPDATE SET "customer" = __s."customer", "doubled" = __s."doubled", "short_note" = __s."short_note" WHEN NOT MATCHED AND __s."__present" THEN INSERT ("id", "customer", "doubled", "short_note") VALUES (__s."id", __s."customer", __s."doubled", __s."short_note")

-- range insert
INSERT INTO "public"."order_view" ("id", "customer", "doubled", "short_note") SELECT "orders"."id" AS "id", (customer_id) AS "customer", (amount * 2) AS "doubled", ("left"(note, 8)) AS "short_note" FROM "public"."orders" AS "orders" WHERE ($1::text[] IS NULL OR ("orders"."id") > ((($1::text[])[1])::bigint)) AND ($2::text[] IS NULL OR ("orders"."id") <= ((($2::text[])[1])::bigint)) AND (status <> 'void')

-- range rewrite
WITH __trellis_src AS MATERIALIZED (SELECT "orders"."id" AS "id", (customer_id) AS "customer", (amount * 2) AS "doubled", ("left"(note, 8)) AS "short_note" FROM "public"."orders" AS "orders" WHERE ($1::text[] IS NULL OR ("orders"."id") > ((($1::text[])[1])::bigint)) AND ($2::text[] IS NULL OR ("orders"."id") <= ((($2::text[])[1])::bigint)) AND (status <> 'void')), __trellis_up AS (INSERT INTO "public"."order_view" AS __t ("id", "customer", "doubled", "short_note") SELECT * FROM __trellis_src ON CONFLICT ("id") DO UPDATE SET "customer" = EXCLUDED."customer", "doubled" = EXCLUDED."doubled", "short_note" = EXCLUDED."short_note" WHERE __t."customer" IS DISTINCT FROM EXCLUDED."customer" OR __t."doubled"::text IS DISTINCT FROM EXCLUDED."doubled"::text OR __t."short_note" IS DISTINCT FROM EXCLUDED."short_note" RETURNING 1), __trellis_del AS (DELETE FROM "public"."order_view" AS __t WHERE ($1::text[] IS NULL OR (__t."id") > ((($1::text[])[1])::bigint)) AND ($2::text[] IS NULL OR (__t."id") <= ((($2::text[])[1])::bigint)) AND NOT EXISTS (SELECT 1 FROM __trellis_src __s WHERE __s."id" = __t."id") RETURNING 1) SELECT (SELECT count(*) FROM __trellis_src), (SELECT count(*) FROM __trellis_up), (SELECT count(*) FROM __trellis_del)

-- group chunk bound
(none)

-- page group range
(none)

-- group range bound
(none)

-- group range insert
(none)

-- group range rewrite
(none)

-- group split bound
(none)

-- group fold check
(none)

-- group fold sample
(none)

-- fold range bound
(none)

-- fold range insert
(none)

-- group step
(none)

-- oracle select
SELECT "orders"."id" AS "id", (customer_id) AS "customer", (amount * 2) AS "doubled", ("left"(note, 8)) AS "short_note" FROM "public"."orders" AS "orders" WHERE (status <> 'void')

-- oracle diff
(SELECT 'missing' AS side, r::text FROM (SELECT to_jsonb(__o) AS r FROM (SELECT "orders"."id" AS "id", (customer_id) AS "customer", (amount * 2) AS "doubled", ("left"(note, 8)) AS "short_note" FROM "public"."orders" AS "orders" WHERE (status <> 'void')) __o EXCEPT ALL SELECT to_jsonb(__t) AS r FROM (SELECT "id", "customer", "doubled", "short_note" FROM "public"."order_view") __t) m) UNION ALL (SELECT 'extra', r::text FROM (SELECT to_jsonb(__t) AS r FROM (SELECT "id", "customer", "doubled", "short_note" FROM "public"."order_view") __t EXCEPT ALL SELECT to_jsonb(__o) AS r FROM (SELECT "orders"."id" AS "id", (customer_id) AS "customer", (amount * 2) AS "doubled", ("left"(note, 8)) AS "short_note" FROM "public"."orders" AS "orders" WHERE (status <> 'void')) __o) x) ORDER BY 1, 2 LIMIT 10

