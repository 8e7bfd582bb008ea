/* Removing routes from a table (route groups that come and go with a running server): the
 * exact method and pattern go, the others keep matching in their order, and the route can be
 * added again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/error.h"
#include "rest/route.h"

static int h1, h2, h3, h4;

static void *find(ld_route_table_t *t, const char *method, const char *path, int expect_rc) {
  ld_route_match_t *m = malloc(sizeof *m);
  void *h = NULL;
  assert_int_equal(ld_route_find(t, method, path, &h, m), expect_rc);
  free(m);
  return h;
}

static void removal_keeps_the_rest(void **state) {
  (void)state;
  ld_route_table_t *t = ld_route_table_new();
  assert_int_equal(ld_route_add(t, "GET", "/a/{x}", &h1), 0);
  assert_int_equal(ld_route_add(t, "GET", "/a/fixed", &h2), 0);
  assert_int_equal(ld_route_add(t, "POST", "/a/{x}", &h3), 0);
  assert_int_equal(ld_route_add(t, "GET", "/b", &h4), 0);
  void *h = NULL;
  assert_int_equal(ld_route_remove(t, "GET", "/a/fixed", &h), 0);
  assert_ptr_equal(h, &h2);
  /* "/a/fixed" now reaches the parameter route, added first */
  assert_ptr_equal(find(t, "GET", "/a/fixed", 0), &h1);
  assert_int_equal(ld_route_remove(t, "GET", "/a/{x}", NULL), 0);
  assert_ptr_equal(find(t, "POST", "/a/y", 0), &h3);
  find(t, "GET", "/a/y", LD_ERR_UNSUPPORTED);
  assert_ptr_equal(find(t, "GET", "/b", 0), &h4);
  /* exact method and pattern only */
  assert_int_equal(ld_route_remove(t, "GET", "/a/{x}", NULL), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_route_remove(t, "DELETE", "/b", NULL), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_route_remove(t, "GET", "/a/{y}", NULL), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_route_remove(t, NULL, "/b", NULL), LD_ERR_INVALID_ARG);
  /* added again, it matches again */
  assert_int_equal(ld_route_add(t, "GET", "/a/fixed", &h2), 0);
  assert_ptr_equal(find(t, "GET", "/a/fixed", 0), &h2);
  assert_int_equal(ld_route_remove(t, "POST", "/a/{x}", NULL), 0);
  assert_int_equal(ld_route_remove(t, "GET", "/a/fixed", NULL), 0);
  assert_int_equal(ld_route_remove(t, "GET", "/b", NULL), 0);
  find(t, "GET", "/b", LD_ERR_NOT_FOUND);
  assert_int_equal(ld_route_add(t, "GET", "/b", &h4), 0);
  assert_ptr_equal(find(t, "GET", "/b", 0), &h4);
  ld_route_table_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(removal_keeps_the_rest),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
