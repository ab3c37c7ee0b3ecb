#!/usr/bin/env bash
# Runs a quickstart example (examples/) against TRELLIS_DATABASE_URL: makes
# the orders table it expects, runs it, and checks it printed a live status
# and that order_totals equals its definition.
# Usage: run_quickstart.sh COMMAND [ARGS...]
set -euo pipefail
psql=(psql -X -q -v ON_ERROR_STOP=1 -d "$TRELLIS_DATABASE_URL")
"${psql[@]}" <<'SQL'
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id int NOT NULL, amount numeric(12,2) NOT NULL);
CREATE INDEX ON orders (customer_id);
INSERT INTO orders SELECT g, g % 50, g * 0.25 FROM generate_series(1, 10000) g;
SQL
out=$("$@")
echo "$out"
grep -q '"status":"live"' <<<"$out" || { echo "the example did not print a live status" >&2; exit 1; }
diff=$("${psql[@]}" -At -c "SELECT count(*) FROM ((SELECT customer_id, total FROM order_totals EXCEPT ALL
  SELECT customer_id, SUM(amount) FROM orders GROUP BY customer_id) UNION ALL
  (SELECT customer_id, SUM(amount) FROM orders GROUP BY customer_id EXCEPT ALL SELECT customer_id, total FROM order_totals)) d")
[ "$diff" = 0 ] || { echo "order_totals differs from its definition in $diff rows" >&2; exit 1; }
echo "order_totals equals its definition"
