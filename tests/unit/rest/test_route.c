/* The REST route table: pattern validation, matching order, method handling, and the
 * percent-decoding of path parameters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "rest/route.h"

static int h_peers, h_peer, h_msgs, h_auto, h_auto_post, h_root, h_two;

static ld_route_table_t *table(void) {
  ld_route_table_t *t = ld_route_table_new();
  assert_non_null(t);
  assert_int_equal(ld_route_add(t, "GET", "/admin/v1/peers", &h_peers), 0);
  assert_int_equal(ld_route_add(t, "GET", "/admin/v1/peer/{peerId}", &h_peer), 0);
  assert_int_equal(ld_route_add(t, "GET", "/relay/v1/messages/{pubsubTopic}", &h_msgs), 0);
  assert_int_equal(ld_route_add(t, "POST", "/relay/v1/messages/{pubsubTopic}", &h_msgs), 0);
  assert_int_equal(ld_route_add(t, "GET", "/relay/v1/auto/messages/{contentTopic}", &h_auto), 0);
  assert_int_equal(ld_route_add(t, "POST", "/relay/v1/auto/messages", &h_auto_post), 0);
  assert_int_equal(ld_route_add(t, "GET", "/", &h_root), 0);
  assert_int_equal(ld_route_add(t, "PUT", "/a/{x}/b/{y}", &h_two), 0);
  return t;
}

static void matches_literal_routes(void **state) {
  (void)state;
  ld_route_table_t *t = table();
  ld_route_match_t m;
  void *h = NULL;
  assert_int_equal(ld_route_find(t, "GET", "/admin/v1/peers", &h, &m), 0);
  assert_ptr_equal(h, &h_peers);
  assert_int_equal(m.n_params, 0);
  assert_int_equal(ld_route_find(t, "GET", "/", &h, &m), 0);
  assert_ptr_equal(h, &h_root);
  assert_int_equal(ld_route_find(t, "POST", "/relay/v1/auto/messages", &h, &m), 0);
  assert_ptr_equal(h, &h_auto_post);
  ld_route_table_free(t);
}

static void decodes_encoded_slashes_in_parameters(void **state) {
  (void)state;
  ld_route_table_t *t = table();
  ld_route_match_t m;
  void *h = NULL;
  assert_int_equal(ld_route_find(t, "GET", "/relay/v1/messages/%2Fwaku%2F2%2Frs%2F0%2F0", &h, &m),
                   0);
  assert_ptr_equal(h, &h_msgs);
  assert_string_equal(ld_route_param(&m, "pubsubTopic"), "/waku/2/rs/0/0");
  assert_null(ld_route_param(&m, "contentTopic"));
  /* lowercase hex and a '+' that stays a '+' */
  assert_int_equal(
      ld_route_find(t, "GET", "/relay/v1/auto/messages/%2fmy-app%2f1%2fa+b%2Fproto", &h, &m), 0);
  assert_ptr_equal(h, &h_auto);
  assert_string_equal(ld_route_param(&m, "contentTopic"), "/my-app/1/a+b/proto");
  /* an unencoded slash makes more segments: no route */
  assert_int_equal(ld_route_find(t, "GET", "/relay/v1/messages//waku/2/rs/0/0", &h, &m),
                   LD_ERR_NOT_FOUND);
  ld_route_table_free(t);
}

static void captures_several_parameters(void **state) {
  (void)state;
  ld_route_table_t *t = table();
  ld_route_match_t m;
  void *h = NULL;
  assert_int_equal(ld_route_find(t, "PUT", "/a/one%20two/b/%C3%A9", &h, &m), 0);
  assert_ptr_equal(h, &h_two);
  assert_int_equal(m.n_params, 2);
  assert_string_equal(ld_route_param(&m, "x"), "one two");
  assert_string_equal(ld_route_param(&m, "y"), "\xC3\xA9");
  ld_route_table_free(t);
}

static void tells_unknown_paths_from_wrong_methods(void **state) {
  (void)state;
  ld_route_table_t *t = table();
  ld_route_match_t m;
  void *h = NULL;
  assert_int_equal(ld_route_find(t, "DELETE", "/admin/v1/peers", &h, &m), LD_ERR_UNSUPPORTED);
  assert_int_equal(ld_route_find(t, "get", "/admin/v1/peers", &h, &m), LD_ERR_UNSUPPORTED);
  assert_int_equal(ld_route_find(t, "GET", "/admin/v1/peerz", &h, &m), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_route_find(t, "GET", "/admin/v1/peers/", &h, &m), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_route_find(t, "GET", "/admin/v1", &h, &m), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_route_find(t, "GET", "admin/v1/peers", &h, &m), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_route_find(t, "GET", "", &h, &m), LD_ERR_NOT_FOUND);
  /* a parameter never matches an empty segment */
  assert_int_equal(ld_route_find(t, "GET", "/relay/v1/messages/", &h, &m), LD_ERR_NOT_FOUND);
  ld_route_table_free(t);
}

static void refuses_bad_percent_encoding(void **state) {
  (void)state;
  ld_route_table_t *t = table();
  ld_route_match_t m;
  void *h = NULL;
  const char *bad[] = {"/relay/v1/messages/%2", "/relay/v1/messages/%zz", "/relay/v1/messages/a%",
                       "/relay/v1/messages/%00x", "/relay/v1/messages/%G0"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(ld_route_find(t, "GET", bad[i], &h, &m), LD_ERR_BAD_ENCODING);
  ld_route_table_free(t);
}

static void bounds_paths_and_segments(void **state) {
  (void)state;
  ld_route_table_t *t = table();
  ld_route_match_t m;
  void *h = NULL;
  char path[LD_ROUTE_MAX_PATH + 2];
  memset(path, 'a', sizeof path - 1);
  path[0] = '/';
  path[sizeof path - 1] = '\0';
  assert_int_equal(ld_route_find(t, "GET", path, &h, &m), LD_ERR_TOO_LARGE);
  /* the longest path decodes into the match buffer */
  char longest[LD_ROUTE_MAX_PATH + 1] = "/relay/v1/messages/";
  size_t prefix = strlen(longest);
  memset(longest + prefix, 'b', LD_ROUTE_MAX_PATH - prefix);
  longest[LD_ROUTE_MAX_PATH] = '\0';
  assert_int_equal(ld_route_find(t, "GET", longest, &h, &m), 0);
  assert_int_equal(strlen(ld_route_param(&m, "pubsubTopic")), LD_ROUTE_MAX_PATH - prefix);
  /* more segments than any route can have */
  char deep[256] = "";
  for (int i = 0; i < LD_ROUTE_MAX_SEGMENTS + 1; i++)
    strcat(deep, "/x");
  assert_int_equal(ld_route_find(t, "GET", deep, &h, &m), LD_ERR_NOT_FOUND);
  ld_route_table_free(t);
}

static void validates_patterns(void **state) {
  (void)state;
  ld_route_table_t *t = ld_route_table_new();
  int h;
  assert_int_equal(ld_route_add(t, "GET", "no-slash", &h), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_route_add(t, "GET", "/a//b", &h), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_route_add(t, "GET", "/a/", &h), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_route_add(t, "GET", "/a/{}", &h), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_route_add(t, "GET", "/a/{b", &h), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_route_add(t, "GET", "/a/x{b}", &h), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_route_add(t, "GET", "/a/{b-c}", &h), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_route_add(t, "GET", "/{a}/{b}/{c}/{d}/{e}", &h), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_route_add(t, "get", "/a", &h), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_route_add(t, "", "/a", &h), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_route_add(t, "GET", "/a/{b_1}", &h), 0);
  assert_int_equal(ld_route_add(t, "GET", "/a/{b_1}", &h), LD_ERR_EXISTS);
  assert_int_equal(ld_route_add(t, "POST", "/a/{b_1}", &h), 0);
  ld_route_table_free(t);
}

static void first_added_route_wins(void **state) {
  (void)state;
  ld_route_table_t *t = ld_route_table_new();
  int literal, param;
  assert_int_equal(ld_route_add(t, "GET", "/admin/v1/peers/connected", &literal), 0);
  assert_int_equal(ld_route_add(t, "GET", "/admin/v1/peers/{x}", &param), 0);
  ld_route_match_t m;
  void *h = NULL;
  assert_int_equal(ld_route_find(t, "GET", "/admin/v1/peers/connected", &h, &m), 0);
  assert_ptr_equal(h, &literal);
  assert_int_equal(ld_route_find(t, "GET", "/admin/v1/peers/other", &h, &m), 0);
  assert_ptr_equal(h, &param);
  ld_route_table_free(t);
}

static void url_decode_edges(void **state) {
  (void)state;
  char out[8];
  size_t n = 99;
  assert_int_equal(ld_url_decode("", 0, out, sizeof out, &n), 0);
  assert_int_equal(n, 0);
  assert_string_equal(out, "");
  assert_int_equal(ld_url_decode("%41%62c", 7, out, sizeof out, &n), 0);
  assert_string_equal(out, "Abc");
  assert_int_equal(n, 3);
  assert_int_equal(ld_url_decode("abcdefgh", 8, out, sizeof out, &n), LD_ERR_LIMIT);
  assert_int_equal(ld_url_decode("abcdefg", 7, out, sizeof out, &n), 0);
  assert_int_equal(ld_url_decode("%4", 2, out, sizeof out, &n), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_url_decode("%00", 3, out, sizeof out, &n), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_url_decode("x", 1, out, 0, &n), LD_ERR_LIMIT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matches_literal_routes),
      cmocka_unit_test(decodes_encoded_slashes_in_parameters),
      cmocka_unit_test(captures_several_parameters),
      cmocka_unit_test(tells_unknown_paths_from_wrong_methods),
      cmocka_unit_test(refuses_bad_percent_encoding),
      cmocka_unit_test(bounds_paths_and_segments),
      cmocka_unit_test(validates_patterns),
      cmocka_unit_test(first_added_route_wins),
      cmocka_unit_test(url_decode_edges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
