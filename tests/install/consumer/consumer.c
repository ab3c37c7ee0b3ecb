/* Uses an installed Trellis from C: the version, then a connection to the
 * database TRELLIS_DATABASE_URL names, a refused statement and a read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trellis/trellis.h>

int main(void) {
  const char* url = getenv("TRELLIS_DATABASE_URL");
  char options[1024];
  snprintf(options, sizeof options, "{\"url\": \"%s\", \"schema\": \"consumer_c\"}",
           url ? url : "");
  trellis_handle* t = NULL;
  trellis_error* error = NULL;
  if (trellis_connect(options, &t, &error) != TRELLIS_OK) {
    fprintf(stderr, "connect: %s\n", trellis_error_message(error));
    return 1;
  }
  char* out = NULL;
  trellis_code code =
      trellis_apply(t, "TRANSFORM x FROM no_such_table SELECT a AS b", &out, &error);
  if (code != TRELLIS_ERROR_NOT_FOUND || !strstr(trellis_error_message(error), "no_such_table")) {
    fprintf(stderr, "expected not_found naming no_such_table, got %s: %s\n",
            trellis_code_name(code), trellis_error_message(error));
    return 1;
  }
  trellis_error_free(error);
  if (trellis_status_all(t, &out, &error) != TRELLIS_OK || strcmp(out, "[]") != 0) {
    fprintf(stderr, "status_all: %s\n", out ? out : trellis_error_message(error));
    return 1;
  }
  trellis_string_free(out);
  trellis_close(t);
  printf("consumer_c: trellis %s\n", trellis_version());
  return 0;
}
