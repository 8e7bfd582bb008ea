/* The static-peer engine with a fake clock: first dials at start, exponential back-off on failed
 * dials and on connections that drop at once, a reset after a stable connection, inbound
 * connections counted, overlapping dials. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "node/static_peers.h"

#define PEER_A "16Uiu2HAmLhLvBoYaoZfaMUKuibM6ac163GwKY74c5kiSLg5KvLpY"
#define PEER_B "16Uiu2HAkx3GoZmXmHbBcphAVJAU6gDuFWWLyBgAaEpyPzbZqccLQ"

typedef struct dialer {
  size_t calls;
  size_t last_index;
  int result; /* what the dial function returns */
  uint64_t at[64];
} dialer_t;

static uint64_t g_now;

static int fake_dial(void *ud, size_t index, const ld_multiaddr_t *addr) {
  dialer_t *d = ud;
  (void)addr;
  if (d->calls < 64)
    d->at[d->calls] = g_now;
  d->calls++;
  d->last_index = index;
  return d->result;
}

static ld_static_peers_t *make(dialer_t *d, size_t n, ld_peerid_t *ids) {
  const char *texts[] = {"/ip4/127.0.0.1/tcp/1/p2p/" PEER_A, "/ip4/127.0.0.1/tcp/2/p2p/" PEER_B};
  ld_multiaddr_t addrs[2];
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(ld_multiaddr_parse(&addrs[i], texts[i]), 0);
    ld_multiaddr_t tmp = addrs[i];
    assert_true(ld_multiaddr_peerid(&tmp, &ids[i], false));
  }
  ld_static_peers_config_t cfg = {1000, 60000, 10000};
  ld_static_peers_t *sp = ld_static_peers_new(&cfg, addrs, n, fake_dial, d, g_now);
  assert_non_null(sp);
  return sp;
}

static void backoff_doubles_up_to_the_cap(void **state) {
  (void)state;
  ld_static_peers_config_t cfg = {1000, 60000, 10000};
  uint64_t expect[] = {1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000};
  for (uint32_t i = 0; i < 8; i++)
    assert_int_equal(ld_static_peers_backoff(&cfg, i + 1), expect[i]);
  assert_int_equal(ld_static_peers_backoff(&cfg, 1000000), 60000);
  ld_static_peers_config_t odd = {300, 1000, 1};
  assert_int_equal(ld_static_peers_backoff(&odd, 3), 1000);
  assert_int_equal(ld_static_peers_backoff(&odd, 2), 600);
}

static void failed_dials_back_off_exponentially(void **state) {
  (void)state;
  g_now = 5000;
  dialer_t d = {0};
  ld_peerid_t ids[1];
  ld_static_peers_t *sp = make(&d, 1, ids);
  assert_int_equal(ld_static_peers_next_deadline(sp), 5000);
  assert_int_equal(ld_static_peers_tick(sp, g_now), 1); /* dialed at start */
  assert_int_equal(ld_static_peers_state(sp, 0), LD_STATIC_PEER_DIALING);
  assert_int_equal(ld_static_peers_next_deadline(sp), UINT64_MAX);
  uint64_t waits[] = {1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000};
  for (size_t i = 0; i < 8; i++) {
    ld_static_peers_dial_done(sp, 0, LD_ERR_REFUSED, g_now);
    assert_int_equal(ld_static_peers_state(sp, 0), LD_STATIC_PEER_IDLE);
    assert_int_equal(ld_static_peers_failures(sp, 0), i + 1);
    uint64_t due = ld_static_peers_next_deadline(sp);
    assert_int_equal(due, g_now + waits[i]);
    assert_int_equal(ld_static_peers_tick(sp, due - 1), 0); /* not a millisecond early */
    g_now = due;
    assert_int_equal(ld_static_peers_tick(sp, g_now), 1);
  }
  assert_int_equal(d.calls, 9);
  assert_int_equal(ld_static_peers_attempts(sp, 0), 9);
  /* the dial finally works: the connection resets nothing until it proves stable */
  ld_static_peers_dial_done(sp, 0, 0, g_now);
  assert_true(ld_static_peers_connected(sp, &ids[0], g_now));
  assert_int_equal(ld_static_peers_state(sp, 0), LD_STATIC_PEER_CONNECTED);
  assert_int_equal(ld_static_peers_failures(sp, 0), 8);
  ld_static_peers_free(sp);
}

static void a_stable_connection_resets_the_backoff(void **state) {
  (void)state;
  g_now = 0;
  dialer_t d = {0};
  ld_peerid_t ids[1];
  ld_static_peers_t *sp = make(&d, 1, ids);
  ld_static_peers_tick(sp, g_now);
  ld_static_peers_dial_done(sp, 0, LD_ERR_TIMEOUT, g_now);
  g_now = ld_static_peers_next_deadline(sp);
  ld_static_peers_tick(sp, g_now);
  ld_static_peers_dial_done(sp, 0, LD_ERR_TIMEOUT, g_now);
  assert_int_equal(ld_static_peers_failures(sp, 0), 2);
  g_now = ld_static_peers_next_deadline(sp);
  ld_static_peers_tick(sp, g_now);
  ld_static_peers_connected(sp, &ids[0], g_now); /* reported before the dial callback */
  ld_static_peers_dial_done(sp, 0, 0, g_now);
  assert_int_equal(ld_static_peers_state(sp, 0), LD_STATIC_PEER_CONNECTED);

  /* up for 10 s: the peer restarts, we redial after the minimum delay */
  g_now += 10000;
  assert_true(ld_static_peers_disconnected(sp, &ids[0], g_now));
  assert_int_equal(ld_static_peers_failures(sp, 0), 0);
  assert_int_equal(ld_static_peers_state(sp, 0), LD_STATIC_PEER_IDLE);
  assert_int_equal(ld_static_peers_next_deadline(sp), g_now + 1000);
  ld_static_peers_free(sp);
}

static void a_flapping_connection_keeps_backing_off(void **state) {
  (void)state;
  g_now = 0;
  dialer_t d = {0};
  ld_peerid_t ids[1];
  ld_static_peers_t *sp = make(&d, 1, ids);
  uint64_t waits[] = {1000, 2000, 4000, 8000};
  for (size_t i = 0; i < 4; i++) {
    ld_static_peers_tick(sp, g_now);
    ld_static_peers_connected(sp, &ids[0], g_now);
    ld_static_peers_dial_done(sp, 0, 0, g_now);
    g_now += 50; /* e.g. closed by the peer's cluster check */
    ld_static_peers_disconnected(sp, &ids[0], g_now);
    assert_int_equal(ld_static_peers_next_deadline(sp), g_now + waits[i]);
    g_now += waits[i];
  }
  ld_static_peers_free(sp);
}

static void inbound_connections_and_several_connections_count(void **state) {
  (void)state;
  g_now = 100;
  dialer_t d = {0};
  ld_peerid_t ids[2];
  ld_static_peers_t *sp = make(&d, 2, ids);
  /* B connects to us before our first tick: no dial for it */
  assert_true(ld_static_peers_connected(sp, &ids[1], g_now));
  assert_int_equal(ld_static_peers_tick(sp, g_now), 1);
  assert_int_equal(d.last_index, 0);
  /* two connections to B; one goes: still connected */
  ld_static_peers_connected(sp, &ids[1], g_now);
  assert_true(ld_static_peers_disconnected(sp, &ids[1], g_now + 1));
  assert_int_equal(ld_static_peers_state(sp, 1), LD_STATIC_PEER_CONNECTED);
  assert_true(ld_static_peers_disconnected(sp, &ids[1], g_now + 2));
  assert_int_equal(ld_static_peers_state(sp, 1), LD_STATIC_PEER_IDLE);
  /* a peer that is not static is ignored; extra disconnects are harmless */
  ld_peerid_t other;
  assert_int_equal(ld_peerid_parse(&other, "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA"),
                   0);
  assert_false(ld_static_peers_connected(sp, &other, g_now));
  assert_true(ld_static_peers_disconnected(sp, &ids[1], g_now + 3));
  ld_static_peers_free(sp);
}

static void a_dial_that_cannot_start_counts_as_a_failure(void **state) {
  (void)state;
  g_now = 0;
  dialer_t d = {.result = LD_ERR_UNSUPPORTED};
  ld_peerid_t ids[1];
  ld_static_peers_t *sp = make(&d, 1, ids);
  assert_int_equal(ld_static_peers_tick(sp, g_now), 0);
  assert_int_equal(d.calls, 1);
  assert_int_equal(ld_static_peers_failures(sp, 0), 1);
  assert_int_equal(ld_static_peers_next_deadline(sp), 1000);
  /* a late or foreign completion changes nothing */
  ld_static_peers_dial_done(sp, 0, LD_ERR_TIMEOUT, g_now);
  ld_static_peers_dial_done(sp, 7, LD_ERR_TIMEOUT, g_now);
  assert_int_equal(ld_static_peers_failures(sp, 0), 1);
  ld_static_peers_free(sp);
}

static void a_drop_during_our_dial_waits_for_the_dial(void **state) {
  (void)state;
  g_now = 0;
  dialer_t d = {0};
  ld_peerid_t ids[1];
  ld_static_peers_t *sp = make(&d, 1, ids);
  ld_static_peers_connected(sp, &ids[0], g_now); /* inbound */
  g_now = 20000;
  ld_static_peers_disconnected(sp, &ids[0], g_now);
  ld_static_peers_tick(sp, g_now + 1000); /* our redial */
  ld_static_peers_connected(sp, &ids[0], g_now + 1000);
  ld_static_peers_disconnected(sp, &ids[0], g_now + 1001); /* drops while still dialing */
  assert_int_equal(ld_static_peers_state(sp, 0), LD_STATIC_PEER_DIALING);
  assert_int_equal(ld_static_peers_next_deadline(sp), UINT64_MAX);
  ld_static_peers_dial_done(sp, 0, LD_ERR_CLOSED, g_now + 1002);
  assert_int_equal(ld_static_peers_failures(sp, 0), 1); /* counted once */
  assert_int_equal(ld_static_peers_next_deadline(sp), g_now + 1002 + 1000);
  ld_static_peers_free(sp);
}

static void bad_arguments_are_refused(void **state) {
  (void)state;
  dialer_t d = {0};
  ld_multiaddr_t no_id;
  assert_int_equal(ld_multiaddr_parse(&no_id, "/ip4/127.0.0.1/tcp/1"), 0);
  assert_null(ld_static_peers_new(NULL, &no_id, 1, fake_dial, &d, 0));
  ld_static_peers_config_t inverted = {5000, 1000, 1};
  assert_null(ld_static_peers_new(&inverted, NULL, 0, fake_dial, &d, 0));
  assert_null(ld_static_peers_new(NULL, NULL, 0, NULL, &d, 0));
  assert_null(ld_static_peers_new(NULL, &no_id, LD_STATIC_PEERS_MAX + 1, fake_dial, &d, 0));
  ld_static_peers_t *empty = ld_static_peers_new(NULL, NULL, 0, fake_dial, &d, 0);
  assert_non_null(empty);
  assert_int_equal(ld_static_peers_next_deadline(empty), UINT64_MAX);
  assert_int_equal(ld_static_peers_tick(empty, 0), 0);
  ld_static_peers_free(empty);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(backoff_doubles_up_to_the_cap),
      cmocka_unit_test(failed_dials_back_off_exponentially),
      cmocka_unit_test(a_stable_connection_resets_the_backoff),
      cmocka_unit_test(a_flapping_connection_keeps_backing_off),
      cmocka_unit_test(inbound_connections_and_several_connections_count),
      cmocka_unit_test(a_dial_that_cannot_start_counts_as_a_failure),
      cmocka_unit_test(a_drop_during_our_dial_waits_for_the_dial),
      cmocka_unit_test(bad_arguments_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
