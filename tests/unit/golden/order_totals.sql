-- create 1
CREATE TABLE "public"."order_totals" ("customer_id" integer, "n" bigint, "total" numeric, "smallest" numeric, "notes" text, "__n" bigint NOT NULL DEFAULT 0, "__c1" bigint NOT NULL DEFAULT 0, "__s1" numeric NOT NULL DEFAULT 0, "__nan1" bigint NOT NULL DEFAULT 0, "__group" text COLLATE "C" NOT NULL PRIMARY KEY, UNIQUE NULLS NOT DISTINCT ("customer_id"))

-- create 2
CREATE TABLE "public"."order_totals__ledger" ("id" bigint NOT NULL, "customer_id" integer, "amount" numeric(12,2), "note" text, "__ledger_group" text COLLATE "C", "__present" bool NOT NULL DEFAULT false)

-- ledger group index 1
CREATE INDEX ON "public"."order_totals__ledger" ("__ledger_group")

-- ledger group index 2
CREATE INDEX ON "public"."order_totals__ledger" ("__ledger_group", "amount") WHERE "__present"

-- ledger key index
CREATE UNIQUE INDEX ON "public"."order_totals__ledger" ("id")

-- ledger key missing
SELECT NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index WHERE indrelid = '"public"."order_totals__ledger"'::regclass AND indisunique)

-- ledger group indexes missing
SELECT NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index i JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] WHERE i.indrelid = '"public"."order_totals__ledger"'::regclass AND a.attname = '__ledger_group')

-- drop 1
DROP TABLE IF EXISTS "public"."order_totals__ledger"

-- drop 2
DROP TABLE IF EXISTS "public"."order_totals"

-- drain step 1
SELECT pg_advisory_xact_lock(6076002766642217472 + __s.slot) FROM (SELECT DISTINCT ((pg_catalog.hashtext(p.key::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2 AS slot FROM pg_temp.trellis_page p WHERE p.tbl = 1) __s ORDER BY __s.slot

-- drain step 2
WITH __trellis_keys AS (SELECT ((p.key)[1])::bigint AS "id" FROM pg_temp.trellis_page p WHERE p.tbl = 1), __trellis_src AS (SELECT "orders"."id" AS "id", "orders"."customer_id" AS "customer_id", "orders"."amount" AS "amount", "orders"."note" AS "note", ('[' || coalesce(("orders"."customer_id")::text, 'null') || ']') AS "__ledger_group" FROM "public"."orders" AS "orders" WHERE ("orders"."id") IN (SELECT "id" FROM __trellis_keys)), __trellis_old AS (SELECT "orders".ctid AS "__ctid", "orders"."id", "orders"."customer_id", "orders"."amount", "orders"."note", 1 AS "__d1", ((amount) IS NOT NULL)::int AS "__d2", coalesce(CASE WHEN (amount) = 'NaN'::numeric THEN 0 ELSE (amount) END, 0) AS "__d3", coalesce(((amount) = 'NaN'::numeric)::int, 0) AS "__d4", "orders"."__ledger_group", "orders"."__present" FROM "public"."order_totals__ledger" AS "orders" WHERE ("orders"."id") IN (SELECT "id" FROM __trellis_keys)), __trellis_touch AS (INSERT INTO pg_temp.trellis_groups (tid, grp, delta) SELECT 2, __d.grp, ARRAY[sum(__d."__d1")::numeric, sum(__d."__d2")::numeric, sum(__d."__d3")::numeric, sum(__d."__d4")::numeric] FROM (SELECT "__ledger_group", -"__d1", -"__d2", -"__d3", -"__d4" FROM __trellis_old WHERE "__present" UNION ALL SELECT "orders"."__ledger_group", 1, ((amount) IS NOT NULL)::int, coalesce(CASE WHEN (amount) = 'NaN'::numeric THEN 0 ELSE (amount) END, 0), coalesce(((amount) = 'NaN'::numeric)::int, 0) FROM __trellis_src AS "orders") AS __d (grp, "__d1", "__d2", "__d3", "__d4") GROUP BY __d.grp), __trellis_upd AS (UPDATE "public"."order_totals__ledger" __l SET "customer_id" = __s."customer_id", "amount" = __s."amount", "note" = __s."note", "__ledger_group" = __s."__ledger_group", "__present" = true FROM __trellis_src __s JOIN __trellis_old __o ON __o."id" = __s."id" WHERE __l.ctid = __o."__ctid" AND (__o."customer_id", __o."amount", __o."note", __o."__ledger_group", __o."__present")::text IS DISTINCT FROM (__s."customer_id", __s."amount", __s."note", __s."__ledger_group", true)::text), __trellis_ins AS (INSERT INTO "public"."order_totals__ledger" ("id", "customer_id", "amount", "note", "__ledger_group", "__present") SELECT __s.*, true FROM __trellis_src __s WHERE NOT EXISTS (SELECT 1 FROM __trellis_old __o WHERE __o."id" = __s."id")), __trellis_del AS (DELETE FROM "public"."order_totals__ledger" __l USING __trellis_old __o WHERE __l.ctid = __o."__ctid" AND NOT EXISTS (SELECT 1 FROM __trellis_src __s WHERE __o."id" = __s."id")) SELECT 1

-- drain step 3
INSERT INTO "public"."order_totals" AS __t ("__group", "customer_id") SELECT g.grp, ((g.grp)::jsonb ->> 0)::integer AS "customer_id" FROM pg_temp.trellis_groups g WHERE g.tid = 2 ORDER BY 1, 2 ON CONFLICT ("__group") DO UPDATE SET "__group" = EXCLUDED."__group" WHERE false

-- drain step 4
WITH __trellis_g AS (SELECT grp AS grp, delta FROM pg_temp.trellis_groups WHERE tid = 2), __trellis_state AS (SELECT __t."__group", __t."customer_id", (__t."__n" + __g.delta[1])::bigint AS "__n", (__t."__c1" + __g.delta[2])::bigint AS "__c1", (__t."__s1" + __g.delta[3])::numeric AS "__s1", (__t."__nan1" + __g.delta[4])::bigint AS "__nan1" FROM "public"."order_totals" AS __t JOIN __trellis_g __g ON __t."__group" = __g.grp), __trellis_agg AS (SELECT "orders"."__ledger_group" AS "__group", "orders"."customer_id" AS "customer_id", (string_agg(note, ',' ORDER BY note)) AS "notes" FROM "public"."order_totals__ledger" AS "orders" WHERE "orders"."__present" AND "orders"."__ledger_group" IN (SELECT grp FROM __trellis_g) GROUP BY "orders"."__ledger_group", "orders"."customer_id"), __trellis_new AS (SELECT __i.*, __a."notes" FROM (SELECT "orders"."__group", "orders"."__n", "orders"."__c1", "orders"."__s1", "orders"."__nan1", CASE WHEN "orders"."__n" > 0 THEN ("orders"."__n") END AS "n", CASE WHEN "orders"."__n" > 0 THEN ((CASE WHEN "orders"."__c1" = 0 THEN NULL WHEN "orders"."__nan1" > 0 THEN 'NaN'::numeric ELSE "orders"."__s1" END)) END AS "total", CASE WHEN "orders"."__n" > 0 THEN ((SELECT min(__m."amount") FROM "public"."order_totals__ledger" __m WHERE __m."__ledger_group" = "orders"."__group" AND __m."__present")) END AS "smallest" FROM __trellis_state AS "orders") __i LEFT JOIN __trellis_agg __a ON __a."__group" = __i."__group"), __trellis_upd AS (UPDATE "public"."order_totals" AS __t SET "__n" = __s."__n", "__c1" = __s."__c1", "__s1" = __s."__s1", "__nan1" = __s."__nan1", "n" = __s."n", "total" = __s."total", "smallest" = __s."smallest", "notes" = __s."notes" FROM __trellis_new __s WHERE __t."__group" = __s."__group" AND __s."__n" <> 0 RETURNING 1), __trellis_del AS (DELETE FROM "public"."order_totals" AS __t USING __trellis_new __s WHERE __t."__group" = __s."__group" AND __s."__n" = 0 RETURNING 1) SELECT (SELECT count(*) FROM __trellis_upd), (SELECT count(*) FROM __trellis_del)

-- page all held keys
INSERT INTO pg_temp.trellis_page (tbl, key) SELECT 1, __e.key FROM (SELECT ARRAY[(__r."id")::pg_catalog.text] AS key FROM "public"."order_totals__ledger" AS __r) __e WHERE NOT EXISTS (SELECT 1 FROM pg_temp.trellis_page __p WHERE __p.tbl = 1 AND __p.key = __e.key)

-- source chunk bound
SELECT ARRAY[(__r."id")::pg_catalog.text] FROM (SELECT __r."id" FROM "public"."orders" AS __r WHERE $1::text[] IS NULL OR (__r."id") > ((($1::text[])[1])::bigint) ORDER BY __r."id" OFFSET $2::int - 1 LIMIT 1) AS __r

-- sweep chunk bound
SELECT ARRAY[(__r."id")::pg_catalog.text] FROM (SELECT __r."id" FROM "public"."order_totals__ledger" AS __r WHERE $1::text[] IS NULL OR (__r."id") > ((($1::text[])[1])::bigint) ORDER BY __r."id" OFFSET $2::int - 1 LIMIT 1) AS __r

-- page source range
INSERT INTO pg_temp.trellis_page (tbl, key) SELECT 1, __e.key FROM (SELECT ARRAY[(__r."id")::pg_catalog.text] AS key FROM "public"."orders" AS __r WHERE ($1::text[] IS NULL OR (__r."id") > ((($1::text[])[1])::bigint)) AND ($2::text[] IS NULL OR (__r."id") <= ((($2::text[])[1])::bigint))) __e WHERE NOT EXISTS (SELECT 1 FROM pg_temp.trellis_page __p WHERE __p.tbl = 1 AND __p.key = __e.key)

-- page sweep range
INSERT INTO pg_temp.trellis_page (tbl, key) SELECT 1, __e.key FROM (SELECT ARRAY[(__r."id")::pg_catalog.text] AS key FROM "public"."order_totals__ledger" AS __r WHERE ($1::text[] IS NULL OR (__r."id") > ((($1::text[])[1])::bigint)) AND ($2::text[] IS NULL OR (__r."id") <= ((($2::text[])[1])::bigint))) __e WHERE NOT EXISTS (SELECT 1 FROM pg_temp.trellis_page __p WHERE __p.tbl = 1 AND __p.key = __e.key)

-- build step 1
SELECT pg_advisory_xact_lock(6076002766642217472 + __s.slot) FROM (SELECT DISTINCT ((pg_catalog.hashtext(p.key::pg_catalog.text) OPERATOR(pg_catalog.&) 2147483647) OPERATOR(pg_catalog.%) 16)::pg_catalog.int2 AS slot FROM pg_temp.trellis_page p WHERE p.tbl = 1) __s ORDER BY __s.slot

-- build step 2
WITH __trellis_keys AS (SELECT ((p.key)[1])::bigint AS "id" FROM pg_temp.trellis_page p WHERE p.tbl = 1), __trellis_src AS (SELECT "orders"."id" AS "id", "orders"."customer_id" AS "customer_id", "orders"."amount" AS "amount", "orders"."note" AS "note", ('[' || coalesce(("orders"."customer_id")::text, 'null') || ']') AS "__ledger_group" FROM "public"."orders" AS "orders" WHERE ("orders"."id") IN (SELECT "id" FROM __trellis_keys)), __trellis_old AS (SELECT "orders".ctid AS "__ctid", "orders"."id", "orders"."customer_id", "orders"."amount", "orders"."note", "orders"."__ledger_group", "orders"."__present" FROM "public"."order_totals__ledger" AS "orders" WHERE ("orders"."id") IN (SELECT "id" FROM __trellis_keys)), __trellis_touch AS (INSERT INTO pg_temp.trellis_groups (tid, grp) SELECT 2, "__ledger_group" FROM __trellis_old WHERE "__present" UNION SELECT 2, "__ledger_group" FROM __trellis_src), __trellis_upd AS (UPDATE "public"."order_totals__ledger" __l SET "customer_id" = __s."customer_id", "amount" = __s."amount", "note" = __s."note", "__ledger_group" = __s."__ledger_group", "__present" = true FROM __trellis_src __s JOIN __trellis_old __o ON __o."id" = __s."id" WHERE __l.ctid = __o."__ctid" AND (__o."customer_id", __o."amount", __o."note", __o."__ledger_group", __o."__present")::text IS DISTINCT FROM (__s."customer_id", __s."amount", __s."note", __s."__ledger_group", true)::text), __trellis_ins AS (INSERT INTO "public"."order_totals__ledger" ("id", "customer_id", "amount", "note", "__ledger_group", "__present") SELECT __s.*, true FROM __trellis_src __s WHERE NOT EXISTS (SELECT 1 FROM __trellis_old __o WHERE __o."id" = __s."id")), __trellis_del AS (DELETE FROM "public"."order_totals__ledger" __l USING __trellis_old __o WHERE __l.ctid = __o."__ctid" AND NOT EXISTS (SELECT 1 FROM __trellis_src __s WHERE __o."id" = __s."id")) SELECT 1

-- range insert
INSERT INTO "public"."order_totals__ledger" ("id", "customer_id", "amount", "note", "__ledger_group", "__present") SELECT "orders"."id" AS "id", "orders"."customer_id" AS "customer_id", "orders"."amount" AS "amount", "orders"."note" AS "note", ('[' || coalesce(("orders"."customer_id")::text, 'null') || ']') AS "__ledger_group", true AS "__present" FROM "public"."orders" AS "orders" WHERE ($1::text[] IS NULL OR ("orders"."id") > ((($1::text[])[1])::bigint)) AND ($2::text[] IS NULL OR ("orders"."id") <= ((($2::text[])[1])::bigint))

-- range rewrite
WITH __trellis_src AS MATERIALIZED (SELECT "orders"."id" AS "id", "orders"."customer_id" AS "customer_id", "orders"."amount" AS "amount", "orders"."note" AS "note", ('[' || coalesce(("orders"."customer_id")::text, 'null') || ']') AS "__ledger_group", true AS "__present" FROM "public"."orders" AS "orders" WHERE ($1::text[] IS NULL OR ("orders"."id") > ((($1::text[])[1])::bigint)) AND ($2::text[] IS NULL OR ("orders"."id") <= ((($2::text[])[1])::bigint))), __trellis_up AS (INSERT INTO "public"."order_totals__ledger" AS __l ("id", "customer_id", "amount", "note", "__ledger_group", "__present") SELECT * FROM __trellis_src ON CONFLICT ("id") DO UPDATE SET "customer_id" = EXCLUDED."customer_id", "amount" = EXCLUDED."amount", "note" = EXCLUDED."note", "__ledger_group" = EXCLUDED."__ledger_group", "__present" = true WHERE (__l."customer_id", __l."amount", __l."note", __l."__ledger_group", __l."__present")::text IS DISTINCT FROM (EXCLUDED."customer_id", EXCLUDED."amount", EXCLUDED."note", EXCLUDED."__ledger_group", true)::text RETURNING 1), __trellis_del AS (DELETE FROM "public"."order_totals__ledger" AS __l WHERE ($1::text[] IS NULL OR (__l."id") > ((($1::text[])[1])::bigint)) AND ($2::text[] IS NULL OR (__l."id") <= ((($2::text[])[1])::bigint)) AND NOT EXISTS (SELECT 1 FROM __trellis_src __s WHERE __s."id" = __l."id") RETURNING 1) SELECT (SELECT count(*) FROM __trellis_src), (SELECT count(*) FROM __trellis_up), (SELECT count(*) FROM __trellis_del)

-- group chunk bound
WITH RECURSIVE __s(g, i) AS (SELECT LEAST((SELECT min(__l."__ledger_group") FROM "public"."order_totals__ledger" __l WHERE __l."__present" AND __l."__ledger_group" > COALESCE(($1::text[])[1], '')), (SELECT min(__t."__group") FROM "public"."order_totals" __t WHERE __t."__group" > COALESCE(($1::text[])[1], ''))), 1 UNION ALL SELECT LEAST((SELECT min(__l."__ledger_group") FROM "public"."order_totals__ledger" __l WHERE __l."__present" AND __l."__ledger_group" > __s.g), (SELECT min(__t."__group") FROM "public"."order_totals" __t WHERE __t."__group" > __s.g)), __s.i + 1 FROM __s WHERE __s.g IS NOT NULL AND __s.i < $2::int) SELECT ARRAY[g] FROM __s WHERE __s.i = $2::int AND __s.g IS NOT NULL

-- page group range
INSERT INTO pg_temp.trellis_groups (tid, grp) SELECT 2, g FROM (SELECT "__ledger_group" AS g FROM "public"."order_totals__ledger" WHERE "__present" UNION SELECT "__group" FROM "public"."order_totals") __all WHERE ($1::text[] IS NULL OR g > ($1::text[])[1]) AND ($2::text[] IS NULL OR g <= ($2::text[])[1])

-- group range bound
SELECT ARRAY["__ledger_group"] FROM "public"."order_totals__ledger" WHERE ($1::text[] IS NULL OR "__ledger_group" > ($1::text[])[1]) ORDER BY "__ledger_group" OFFSET $2::int - 1 LIMIT 1

-- group range insert
INSERT INTO "public"."order_totals" ("__group", "customer_id", "n", "total", "smallest", "notes", "__n", "__c1", "__s1", "__nan1") SELECT "orders"."__group", "orders"."customer_id" AS "customer_id", "orders"."n" AS "n", "orders"."total" AS "total", "orders"."smallest" AS "smallest", "orders"."notes" AS "notes", "orders"."__n", "orders"."__c1", "orders"."__s1", "orders"."__nan1" FROM (SELECT "orders"."__ledger_group" AS "__group", "orders"."customer_id" AS "customer_id", (count(*)) AS "n", (sum(amount)) AS "total", (min(amount)) AS "smallest", (string_agg(note, ',' ORDER BY note)) AS "notes", count(*) AS "__n", count((amount)) AS "__c1", coalesce(sum(CASE WHEN (amount) = 'NaN'::numeric THEN 0 ELSE (amount) END), 0) AS "__s1", count(*) FILTER (WHERE (amount) = 'NaN'::numeric) AS "__nan1" FROM "public"."order_totals__ledger" AS "orders" WHERE "orders"."__present" AND ($1::text[] IS NULL OR "orders"."__ledger_group" > ($1::text[])[1]) AND ($2::text[] IS NULL OR "orders"."__ledger_group" <= ($2::text[])[1]) GROUP BY "orders"."__ledger_group", "orders"."customer_id") "orders" ORDER BY 1

-- group range rewrite
WITH __trellis_agg AS MATERIALIZED (SELECT "orders"."__group", "orders"."customer_id" AS "customer_id", "orders"."n" AS "n", "orders"."total" AS "total", "orders"."smallest" AS "smallest", "orders"."notes" AS "notes", "orders"."__n", "orders"."__c1", "orders"."__s1", "orders"."__nan1" FROM (SELECT "orders"."__ledger_group" AS "__group", "orders"."customer_id" AS "customer_id", (count(*)) AS "n", (sum(amount)) AS "total", (min(amount)) AS "smallest", (string_agg(note, ',' ORDER BY note)) AS "notes", count(*) AS "__n", count((amount)) AS "__c1", coalesce(sum(CASE WHEN (amount) = 'NaN'::numeric THEN 0 ELSE (amount) END), 0) AS "__s1", count(*) FILTER (WHERE (amount) = 'NaN'::numeric) AS "__nan1" FROM "public"."order_totals__ledger" AS "orders" WHERE "orders"."__present" AND ($1::text[] IS NULL OR "orders"."__ledger_group" > ($1::text[])[1]) AND ($2::text[] IS NULL OR "orders"."__ledger_group" <= ($2::text[])[1]) GROUP BY "orders"."__ledger_group", "orders"."customer_id") "orders"), __trellis_up AS (INSERT INTO "public"."order_totals" AS __t ("__group", "customer_id", "n", "total", "smallest", "notes", "__n", "__c1", "__s1", "__nan1") SELECT * FROM __trellis_agg ON CONFLICT ("__group") DO UPDATE SET "n" = EXCLUDED."n", "total" = EXCLUDED."total", "smallest" = EXCLUDED."smallest", "notes" = EXCLUDED."notes", "__n" = EXCLUDED."__n", "__c1" = EXCLUDED."__c1", "__s1" = EXCLUDED."__s1", "__nan1" = EXCLUDED."__nan1" WHERE __t."n" IS DISTINCT FROM EXCLUDED."n" OR __t."total"::text IS DISTINCT FROM EXCLUDED."total"::text OR __t."smallest"::text IS DISTINCT FROM EXCLUDED."smallest"::text OR __t."notes" IS DISTINCT FROM EXCLUDED."notes" OR __t."__n" IS DISTINCT FROM EXCLUDED."__n" OR __t."__c1" IS DISTINCT FROM EXCLUDED."__c1" OR __t."__s1" IS DISTINCT FROM EXCLUDED."__s1" OR __t."__nan1" IS DISTINCT FROM EXCLUDED."__nan1" RETURNING 1), __trellis_del AS (DELETE FROM "public"."order_totals" AS __t WHERE ($1::text[] IS NULL OR __t."__group" > ($1::text[])[1]) AND ($2::text[] IS NULL OR __t."__group" <= ($2::text[])[1]) AND NOT EXISTS (SELECT 1 FROM __trellis_agg __s WHERE __s."__group" = __t."__group") RETURNING 1) SELECT (SELECT count(*) FROM __trellis_agg), (SELECT count(*) FROM __trellis_up), (SELECT count(*) FROM __trellis_del)

-- group split bound
SELECT ARRAY[__m.b] FROM (SELECT min(__q.b) AS b FROM (SELECT max(__t.g) AS b FROM (SELECT "__ledger_group" AS g, ntile($2::int) OVER (ORDER BY "__ledger_group") AS tile FROM (SELECT "__ledger_group" FROM "public"."order_totals__ledger" TABLESAMPLE SYSTEM (least(100, 5000 * 100.0 / greatest(1, pg_relation_size('"public"."order_totals__ledger"'::regclass) / current_setting('block_size')::bigint * 100))) REPEATABLE (0) WHERE "__present") __s) __t GROUP BY __t.tile HAVING __t.tile < $2::int) __q WHERE $1::text[] IS NULL OR __q.b > ($1::text[])[1]) __m WHERE __m.b IS NOT NULL

-- group fold check
(none)

-- group fold sample
(none)

-- fold range bound
(none)

-- fold range insert
(none)

-- group step 1
INSERT INTO "public"."order_totals" AS __t ("__group", "customer_id") SELECT g.grp, ((g.grp)::jsonb ->> 0)::integer AS "customer_id" FROM pg_temp.trellis_groups g WHERE g.tid = 2 ORDER BY 1, 2 ON CONFLICT ("__group") DO UPDATE SET "__group" = EXCLUDED."__group" WHERE false

-- group step 2
WITH __trellis_g AS (SELECT grp AS grp FROM pg_temp.trellis_groups WHERE tid = 2), __trellis_agg AS (SELECT "orders"."__ledger_group" AS "__group", "orders"."customer_id" AS "customer_id", (count(*)) AS "n", (sum(amount)) AS "total", (min(amount)) AS "smallest", (string_agg(note, ',' ORDER BY note)) AS "notes", count(*) AS "__n", count((amount)) AS "__c1", coalesce(sum(CASE WHEN (amount) = 'NaN'::numeric THEN 0 ELSE (amount) END), 0) AS "__s1", count(*) FILTER (WHERE (amount) = 'NaN'::numeric) AS "__nan1" FROM "public"."order_totals__ledger" AS "orders" WHERE "orders"."__present" AND "orders"."__ledger_group" IN (SELECT grp FROM __trellis_g) GROUP BY "orders"."__ledger_group", "orders"."customer_id"), __trellis_upd AS (UPDATE "public"."order_totals" AS __t SET "n" = __s."n", "total" = __s."total", "smallest" = __s."smallest", "notes" = __s."notes", "__n" = __s."__n", "__c1" = __s."__c1", "__s1" = __s."__s1", "__nan1" = __s."__nan1" FROM __trellis_agg __s WHERE __t."__group" = __s."__group" AND (__t."n" IS DISTINCT FROM __s."n" OR __t."total"::text IS DISTINCT FROM __s."total"::text OR __t."smallest"::text IS DISTINCT FROM __s."smallest"::text OR __t."notes" IS DISTINCT FROM __s."notes" OR __t."__n" IS DISTINCT FROM __s."__n" OR __t."__c1" IS DISTINCT FROM __s."__c1" OR __t."__s1" IS DISTINCT FROM __s."__s1" OR __t."__nan1" IS DISTINCT FROM __s."__nan1") RETURNING 1), __trellis_del AS (DELETE FROM "public"."order_totals" AS __t USING __trellis_g __g WHERE __t."__group" = __g.grp AND NOT EXISTS (SELECT 1 FROM __trellis_agg __s WHERE __s."__group" = __t."__group") RETURNING 1) SELECT (SELECT count(*) FROM __trellis_upd), (SELECT count(*) FROM __trellis_del)

-- oracle select
SELECT "orders"."customer_id" AS "customer_id", (count(*)) AS "n", (sum(amount)) AS "total", (min(amount)) AS "smallest", (string_agg(note, ',' ORDER BY note)) AS "notes" FROM "public"."orders" AS "orders" GROUP BY "orders"."customer_id"

-- oracle diff
(SELECT 'missing' AS side, r::text FROM (SELECT to_jsonb(__o) - ARRAY['__group', '__n', '__c1', '__s1', '__nan1']::text[] AS r FROM (SELECT "orders"."customer_id" AS "customer_id", (count(*)) AS "n", (sum(amount)) AS "total", (min(amount)) AS "smallest", (string_agg(note, ',' ORDER BY note)) AS "notes" FROM "public"."orders" AS "orders" GROUP BY "orders"."customer_id") __o EXCEPT ALL SELECT to_jsonb(__t) - ARRAY['__group', '__n', '__c1', '__s1', '__nan1']::text[] AS r FROM (SELECT "customer_id", "n", "total", "smallest", "notes" FROM "public"."order_totals") __t) m) UNION ALL (SELECT 'extra', r::text FROM (SELECT to_jsonb(__t) - ARRAY['__group', '__n', '__c1', '__s1', '__nan1']::text[] AS r FROM (SELECT "customer_id", "n", "total", "smallest", "notes" FROM "public"."order_totals") __t EXCEPT ALL SELECT to_jsonb(__o) - ARRAY['__group', '__n', '__c1', '__s1', '__nan1']::text[] AS r FROM (SELECT "orders"."customer_id" AS "customer_id", (count(*)) AS "n", (sum(amount)) AS "total", (min(amount)) AS "smallest", (string_agg(note, ',' ORDER BY note)) AS "notes" FROM "public"."orders" AS "orders" GROUP BY "orders"."customer_id") __o) x) ORDER BY 1, 2 LIMIT 10

