import trellis

with trellis.connect(staging=True, drain_threads=2) as t:
    t.apply("TRANSFORM order_totals FROM orders GROUP BY customer_id SELECT SUM(amount) AS total")
    t.await_live("order_totals", timeout=30)
    print(t.status("order_totals").status)
