#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "messaging/health.h"

static ld_connection_status_t status_of(bool relay, size_t relay_peers, size_t lightpush,
                                        size_t filter, size_t store) {
  ld_health_counts_t c = {relay, relay_peers, lightpush, filter, store};
  return ld_health_status(&c);
}

static void names_are_the_api_strings(void **state) {
  (void)state;
  assert_string_equal(ld_connection_status_name(LD_CONNECTION_DISCONNECTED), "Disconnected");
  assert_string_equal(ld_connection_status_name(LD_CONNECTION_PARTIALLY_CONNECTED),
                      "PartiallyConnected");
  assert_string_equal(ld_connection_status_name(LD_CONNECTION_CONNECTED), "Connected");
}

static void relay_counts_decide_when_there_are_relay_peers(void **state) {
  (void)state;
  assert_int_equal(status_of(true, LD_HEALTH_RELAY_D_LOW, 0, 0, 0), LD_CONNECTION_CONNECTED);
  assert_int_equal(status_of(true, 10, 0, 0, 0), LD_CONNECTION_CONNECTED);
  assert_int_equal(status_of(true, LD_HEALTH_RELAY_D_LOW - 1, 0, 0, 0),
                   LD_CONNECTION_PARTIALLY_CONNECTED);
  assert_int_equal(status_of(true, 1, 5, 5, 5), LD_CONNECTION_PARTIALLY_CONNECTED);
}

static void without_relay_peers_the_edge_rules_apply(void **state) {
  (void)state;
  /* A Core node with no relay peer falls back to its service peers. */
  assert_int_equal(status_of(true, 0, 0, 0, 0), LD_CONNECTION_DISCONNECTED);
  assert_int_equal(status_of(true, 0, 2, 2, 2), LD_CONNECTION_CONNECTED);
  /* Relay peers do not count when relay is not mounted. */
  assert_int_equal(status_of(false, 9, 0, 0, 0), LD_CONNECTION_DISCONNECTED);
  /* Edge: each service at least once, each at least twice. */
  assert_int_equal(status_of(false, 0, 1, 1, 1), LD_CONNECTION_PARTIALLY_CONNECTED);
  assert_int_equal(status_of(false, 0, 2, 2, 1), LD_CONNECTION_PARTIALLY_CONNECTED);
  assert_int_equal(status_of(false, 0, 2, 2, 2), LD_CONNECTION_CONNECTED);
  assert_int_equal(status_of(false, 0, 7, 3, 2), LD_CONNECTION_CONNECTED);
  assert_int_equal(status_of(false, 0, 0, 3, 3), LD_CONNECTION_DISCONNECTED);
  assert_int_equal(status_of(false, 0, 3, 0, 3), LD_CONNECTION_DISCONNECTED);
  assert_int_equal(status_of(false, 0, 3, 3, 0), LD_CONNECTION_DISCONNECTED);
}

static void tracker_reports_only_changes(void **state) {
  (void)state;
  ld_health_tracker_t t;
  ld_health_tracker_init(&t, false);
  assert_int_equal(ld_health_tracker_status(&t), LD_CONNECTION_DISCONNECTED);
  ld_connection_status_t s = LD_CONNECTION_CONNECTED;
  /* Still Disconnected: no change, *status untouched. */
  assert_false(ld_health_tracker_set(&t, LD_HEALTH_LIGHTPUSH, 1, &s));
  assert_int_equal(s, LD_CONNECTION_CONNECTED);
  assert_false(ld_health_tracker_set(&t, LD_HEALTH_FILTER, 1, &s));
  assert_true(ld_health_tracker_set(&t, LD_HEALTH_STORE, 1, &s));
  assert_int_equal(s, LD_CONNECTION_PARTIALLY_CONNECTED);
  assert_false(ld_health_tracker_set(&t, LD_HEALTH_STORE, 2, &s));
  assert_false(ld_health_tracker_set(&t, LD_HEALTH_FILTER, 2, &s));
  assert_true(ld_health_tracker_set(&t, LD_HEALTH_LIGHTPUSH, 2, &s));
  assert_int_equal(s, LD_CONNECTION_CONNECTED);
  /* Relay peers are ignored without relay. */
  assert_false(ld_health_tracker_set(&t, LD_HEALTH_RELAY, 10, NULL));
  assert_true(ld_health_tracker_set(&t, LD_HEALTH_FILTER, 0, &s));
  assert_int_equal(s, LD_CONNECTION_DISCONNECTED);
  assert_int_equal(ld_health_tracker_status(&t), LD_CONNECTION_DISCONNECTED);
}

static void tracker_with_relay(void **state) {
  (void)state;
  ld_health_tracker_t t;
  ld_health_tracker_init(&t, true);
  ld_connection_status_t s;
  assert_true(ld_health_tracker_set(&t, LD_HEALTH_RELAY, 1, &s));
  assert_int_equal(s, LD_CONNECTION_PARTIALLY_CONNECTED);
  assert_false(ld_health_tracker_set(&t, LD_HEALTH_RELAY, 3, &s));
  assert_true(ld_health_tracker_set(&t, LD_HEALTH_RELAY, 4, &s));
  assert_int_equal(s, LD_CONNECTION_CONNECTED);
  ld_health_counts_t all = {true, 0, 0, 0, 0};
  assert_true(ld_health_tracker_update(&t, &all, &s));
  assert_int_equal(s, LD_CONNECTION_DISCONNECTED);
  assert_false(ld_health_tracker_update(&t, &all, &s));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(names_are_the_api_strings),
      cmocka_unit_test(relay_counts_decide_when_there_are_relay_peers),
      cmocka_unit_test(without_relay_peers_the_edge_rules_apply),
      cmocka_unit_test(tracker_reports_only_changes),
      cmocka_unit_test(tracker_with_relay),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
