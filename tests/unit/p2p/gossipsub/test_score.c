#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "p2p/gossipsub/score.h"

#define T "/waku/2/rs/1/0"
#define EPS 1e-9

static ld_gs_params_t P;

static int setup(void **state) {
  (void)state;
  ld_gs_params_nwaku(&P);
  return 0;
}

static void assert_close(double got, double want) {
  if (fabs(got - want) > EPS) {
    fail_msg("score %f, expected %f", got, want);
  }
}

static void time_in_mesh_and_first_deliveries(void **state) {
  (void)state;
  ld_gs_score_t *s = ld_gs_score_new(&P);
  assert_int_equal(ld_gs_score_connect(s, 1, "10.0.0.1", 0), 0);
  assert_int_equal(ld_gs_score_connect(s, 1, "10.0.0.1", 0), LD_ERR_EXISTS);
  assert_close(ld_gs_score_get(s, 1, 0), 0);
  ld_gs_score_graft(s, 1, T, 0);
  assert_close(ld_gs_score_get(s, 1, 5000), 0.05); /* 5 quanta x 0.01 */
  assert_close(ld_gs_score_get(s, 1, 60000), 0.1); /* capped at 10 quanta */
  for (int i = 0; i < 3; i++) {
    ld_gs_score_first_delivery(s, 1, T);
  }
  assert_close(ld_gs_score_get(s, 1, 5000), 3.05);
  for (int i = 0; i < 20; i++) {
    ld_gs_score_first_delivery(s, 1, T);
  }
  assert_close(ld_gs_score_get(s, 1, 5000), 10.05); /* P2 cap 10 */
  ld_gs_score_prune(s, 1, T, 5000);
  assert_close(ld_gs_score_get(s, 1, 9000), 10); /* P1 only while in the mesh */
  assert_close(ld_gs_score_get(s, 42, 0), 0);    /* unknown peer */
  ld_gs_score_free(s);
}

static void invalid_messages_and_behaviour_penalties_decay(void **state) {
  (void)state;
  ld_gs_score_t *s = ld_gs_score_new(&P);
  ld_gs_score_connect(s, 1, NULL, 0);
  ld_gs_score_tick(s, 0);
  ld_gs_score_invalid(s, 1, T);
  assert_close(ld_gs_score_get(s, 1, 0), -100);
  ld_gs_score_invalid(s, 1, T);
  assert_close(ld_gs_score_get(s, 1, 0), -400); /* squared */
  ld_gs_score_penalize(s, 1, 2);
  assert_close(ld_gs_score_get(s, 1, 0), -440);
  ld_gs_score_tick(s, 11999);
  assert_close(ld_gs_score_get(s, 1, 11999), -440); /* no decay before the interval */
  ld_gs_score_tick(s, 12000);
  double b = 2 * 0.986;
  assert_close(ld_gs_score_get(s, 1, 12000), -100 - 10 * b * b);
  for (int i = 1; i <= 20; i++) {
    ld_gs_score_tick(s, 12000 + (uint64_t)i * 12000);
  }
  /* invalid decays 0.5 per interval and snaps to zero below 0.01 */
  double bb = 2 * pow(0.986, 21);
  assert_close(ld_gs_score_get(s, 1, 300000), -10 * bb * bb);
  ld_gs_score_free(s);
}

static void ip_colocation_above_threshold(void **state) {
  (void)state;
  ld_gs_score_t *s = ld_gs_score_new(&P);
  for (uint64_t p = 1; p <= 5; p++) {
    ld_gs_score_connect(s, p, "127.0.0.1", 0);
  }
  assert_close(ld_gs_score_get(s, 1, 0), 0);
  ld_gs_score_connect(s, 6, "127.0.0.1", 0);
  assert_close(ld_gs_score_get(s, 1, 0), -50);
  ld_gs_score_connect(s, 7, "127.0.0.1", 0);
  assert_close(ld_gs_score_get(s, 7, 0), -200); /* 7 peers: (7-5)^2 x -50 */
  ld_gs_score_connect(s, 8, "10.0.0.8", 0);
  assert_close(ld_gs_score_get(s, 8, 0), 0);
  ld_gs_score_disconnect(s, 7, 0);
  ld_gs_score_disconnect(s, 6, 0);
  assert_close(ld_gs_score_get(s, 1, 0), 0);
  ld_gs_score_free(s);
}

static void retained_after_disconnect(void **state) {
  (void)state;
  ld_gs_score_t *s = ld_gs_score_new(&P);
  ld_gs_score_connect(s, 1, NULL, 0);
  ld_gs_score_tick(s, 0);
  ld_gs_score_penalize(s, 1, 5);
  ld_gs_score_disconnect(s, 1, 1000);
  assert_int_equal(ld_gs_score_count(s), 1);
  ld_gs_score_connect(s, 1, NULL, 2000);
  assert_true(ld_gs_score_get(s, 1, 2000) < -200); /* the penalty came back */
  ld_gs_score_disconnect(s, 1, 3000);
  /* tick every interval until the retention ends; the state is dropped */
  uint64_t t;
  for (t = 12000; t <= 3000 + P.retain_score_ms + 12000; t += 12000) {
    ld_gs_score_tick(s, t);
  }
  assert_int_equal(ld_gs_score_count(s), 0);
  ld_gs_score_connect(s, 1, NULL, t);
  assert_close(ld_gs_score_get(s, 1, t), 0);
  ld_gs_score_free(s);
}

static void mesh_delivery_deficit_and_sticky_penalty(void **state) {
  (void)state;
  ld_gs_params_t p = P;
  p.topic_score.mesh_message_deliveries_weight = -1;
  p.topic_score.mesh_message_deliveries_threshold = 4;
  p.topic_score.mesh_message_deliveries_cap = 20;
  p.topic_score.mesh_message_deliveries_activation_ms = 1000;
  p.topic_score.mesh_failure_penalty_weight = -2;
  p.topic_score.time_in_mesh_weight = 0;
  p.topic_score.first_message_deliveries_weight = 0;
  ld_gs_score_t *s = ld_gs_score_new(&p);
  ld_gs_score_connect(s, 1, NULL, 0);
  ld_gs_score_graft(s, 1, T, 0);
  ld_gs_score_first_delivery(s, 1, T);
  assert_close(ld_gs_score_get(s, 1, 500), 0);   /* not active yet */
  assert_close(ld_gs_score_get(s, 1, 2000), -9); /* deficit 3, squared */
  ld_gs_score_mesh_delivery(s, 1, T);
  ld_gs_score_mesh_delivery(s, 1, T);
  ld_gs_score_mesh_delivery(s, 1, T);
  assert_close(ld_gs_score_get(s, 1, 2000), 0);
  ld_gs_score_graft(s, 1, T, 3000); /* fresh graft resets the counter */
  ld_gs_score_mesh_delivery(s, 1, T);
  ld_gs_score_prune(s, 1, T, 5000); /* deficit 3 at prune: P3b += 9 */
  assert_close(ld_gs_score_get(s, 1, 5000), -18);
  ld_gs_score_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(time_in_mesh_and_first_deliveries, setup),
      cmocka_unit_test_setup(invalid_messages_and_behaviour_penalties_decay, setup),
      cmocka_unit_test_setup(ip_colocation_above_threshold, setup),
      cmocka_unit_test_setup(retained_after_disconnect, setup),
      cmocka_unit_test_setup(mesh_delivery_deficit_and_sticky_penalty, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
