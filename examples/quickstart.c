/* Trellis from C: define a transform, wait until it is live and caught up,
 * print its status. Build against an installed Trellis with
 *   cc quickstart.c $(pkg-config --cflags --libs trellis)
 * and run with TRELLIS_DATABASE_URL naming a database that has a table
 * orders(id bigint primary key, customer_id int, amount numeric) and an
 * index on orders(customer_id). */
#include <stdio.h>
#include <stdlib.h>
#include <trellis/trellis.h>

static int fail(trellis_error* error) {
  fprintf(stderr, "%s error: %s\n", trellis_code_name(trellis_error_code(error)),
          trellis_error_message(error));
  trellis_error_free(error);
  return 1;
}

int main(void) {
  char options[1024];
  snprintf(options, sizeof options, "{\"url\": \"%s\", \"staging\": true, \"drain_threads\": 2}",
           getenv("TRELLIS_DATABASE_URL"));
  trellis_handle* t = NULL;
  trellis_error* error = NULL;
  char* json = NULL;
  if (trellis_connect(options, &t, &error)) return fail(error);
  if (trellis_apply(t,
                    "TRANSFORM order_totals FROM orders GROUP BY customer_id "
                    "SELECT SUM(amount) AS total",
                    &json, &error))
    return fail(error);
  trellis_string_free(json);

  /* The build runs in the background: wait until it is live and every
   * change committed meanwhile has reached the target. */
  if (trellis_await_live(t, "order_totals", 60000, &json, &error)) return fail(error);
  printf("%s\n", json); /* {"target":"public.order_totals","status":"live",...} */
  trellis_string_free(json);
  trellis_close(t);
  return 0;
}
