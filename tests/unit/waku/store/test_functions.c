/* How a store v3 query maps onto the store's three functions (waku/store/functions.h), and their
 * names as a disabled-function answer spells them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "waku/store/functions.h"

static const uint8_t k_hashes[2][LD_WAKU_HASH_LEN] = {{1}, {2}};
static const char *const k_topics[1] = {"/app/1/chat/proto"};

static void hash_queries_are_key_value_or_presence(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.hashes = k_hashes;
  q.n_hashes = 2;
  q.include_data = true;
  assert_int_equal(ld_store_query_functions(&q), LD_STORE_FN_KEY_VALUE);
  q.include_data = false;
  assert_int_equal(ld_store_query_functions(&q), LD_STORE_FN_KEY_PRESENCE);
  /* a content filter beside the hashes does not make it a listing: the hashes decide */
  q.pubsub_topic = "/waku/2/rs/0/0";
  q.content_topics = k_topics;
  q.n_content_topics = 1;
  assert_int_equal(ld_store_query_functions(&q), LD_STORE_FN_KEY_PRESENCE);
}

static void listings_are_wayback_and_with_data_key_value_too(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.pubsub_topic = "/waku/2/rs/0/0";
  q.content_topics = k_topics;
  q.n_content_topics = 1;
  assert_int_equal(ld_store_query_functions(&q), LD_STORE_FN_WAYBACK);
  q.has_time_start = q.has_time_end = true; /* a time range and a direction keep it a listing */
  q.time_start = 1;
  q.time_end = 2;
  q.forward = true;
  assert_int_equal(ld_store_query_functions(&q), LD_STORE_FN_WAYBACK);
  q.include_data = true;
  assert_int_equal(ld_store_query_functions(&q), LD_STORE_FN_WAYBACK | LD_STORE_FN_KEY_VALUE);
  ld_store_query_t empty; /* no filter at all: a listing of everything */
  ld_store_query_init(&empty);
  assert_int_equal(ld_store_query_functions(&empty), LD_STORE_FN_WAYBACK);
}

static void names_and_text(void **state) {
  (void)state;
  assert_string_equal(ld_store_function_name(LD_STORE_FN_KEY_VALUE), "key-value");
  assert_string_equal(ld_store_function_name(LD_STORE_FN_KEY_PRESENCE), "key-presence");
  assert_string_equal(ld_store_function_name(LD_STORE_FN_WAYBACK), "wayback");
  assert_string_equal(ld_store_function_name(LD_STORE_FN_ALL), "unknown");
  char out[64];
  assert_int_equal(
      ld_store_functions_text(LD_STORE_FN_WAYBACK | LD_STORE_FN_KEY_VALUE, out, sizeof out),
      strlen("key-value, wayback"));
  assert_string_equal(out, "key-value, wayback");
  assert_int_equal(ld_store_functions_text(0, out, sizeof out), 0);
  assert_string_equal(out, "");
  char small[8]; /* cut, still terminated */
  size_t n = ld_store_functions_text(LD_STORE_FN_ALL, small, sizeof small);
  assert_true(n < sizeof small);
  assert_int_equal(strlen(small), n);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hash_queries_are_key_value_or_presence),
      cmocka_unit_test(listings_are_wayback_and_with_data_key_value_too),
      cmocka_unit_test(names_and_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
