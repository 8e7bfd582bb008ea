/* The publish queue's proving context: a member node's first proof is made without it; the
 * context is then made and its tables built in the queue's idle time, and the next proofs go
 * through it: the first of them makes the membership wires' sums (a miss), the next reuses them
 * (a hit). Every proof is accepted by the validating peer B. Stopping frees the context (the
 * sanitizers' leak check sees it). Identities are random; the circuit's files come from
 * LD_RLN_FIXTURES. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "node/config.h"
#include "node/events.h"
#include "node/node.h"
#include "node/node_rln_publish.h"
#include "node_harness.h"
#include "waku/rln/validator.h"
#include "zk/merkle.h"
#include "zk/rln.h"

#define TOPIC "/waku/2/rs/0/0"
#define CONTENT_TOPIC "/rln/1/ctx-test/proto"
#define MEMBERS 16
#define LIMIT 8
#define EPOCH_SEC 600
#define OURS 3
#define WAIT_MS 120000
/* the context's tables take seconds of CPU under the sanitizers on a loaded machine */
#define BUILD_WAIT_MS 300000

static uv_loop_t g_loop;
static char g_dir[64];
static char g_group_path[128], g_cred_path[128];

typedef struct got {
  char payloads[8][32];
  size_t n;
} got_t;

static void on_message(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_fanout_message_t *m = payload;
  got_t *g = ud;
  if (m->own || g->n >= 8)
    return;
  size_t n = m->msg->payload_len < 31 ? m->msg->payload_len : 31;
  memcpy(g->payloads[g->n], m->msg->payload, n);
  g->payloads[g->n][n] = '\0';
  g->n++;
}

static void write_hex_be(FILE *f, const ld_fr_t *x) {
  uint8_t le[32];
  ld_fr_to_bytes(le, x);
  fputs("\"0x", f);
  for (int i = 31; i >= 0; i--)
    fprintf(f, "%02x", le[i]);
  fputc('"', f);
}

/* The group file of MEMBERS random identities and member OURS's credentials file. */
static void make_group(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/ld-rln-ctx-XXXXXX");
  assert_non_null(mkdtemp(g_dir));
  snprintf(g_group_path, sizeof g_group_path, "%s/group.json", g_dir);
  snprintf(g_cred_path, sizeof g_cred_path, "%s/cred.json", g_dir);
  FILE *f = fopen(g_group_path, "w");
  FILE *cred = fopen(g_cred_path, "w");
  assert_non_null(f);
  assert_non_null(cred);
  fputc('[', f);
  for (int i = 0; i < MEMBERS; i++) {
    uint8_t b[32];
    assert_int_equal(getrandom(b, sizeof b, 0), (ssize_t)sizeof b);
    ld_fr_t secret, id, rate;
    ld_fr_from_bytes_reduce(&secret, b);
    ld_rln_id_commitment(&id, &secret);
    ld_rln_rate_commitment(&rate, &id, LIMIT);
    if (i > 0)
      fputc(',', f);
    write_hex_be(f, &rate);
    if (i == OURS) {
      fputs("{\"identitySecret\": ", cred);
      write_hex_be(cred, &secret);
      fputs("}\n", cred);
    }
  }
  fputs("]\n", f);
  fclose(f);
  fclose(cred);
}

static ld_node_config_t *rln_config(bool member) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  const char *fixtures = getenv("LD_RLN_FIXTURES");
  assert_non_null(fixtures);
  cfg->rln.enabled = true;
  assert_int_equal(ld_node_config_set_rln_static_group_file(cfg, g_group_path, err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_rln_user_message_limit(cfg, LIMIT, err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_rln_epoch_sec(cfg, EPOCH_SEC, err, sizeof err), 0);
  if (member) {
    assert_int_equal(ld_node_config_set_rln_cred_path(cfg, g_cred_path, err, sizeof err), 0);
    assert_int_equal(ld_node_config_set_rln_membership_index(cfg, OURS, err, sizeof err), 0);
    assert_int_equal(ld_node_config_set_rln_circuit_dir(cfg, fixtures, err, sizeof err), 0);
  }
  return cfg;
}

static void publish_text(ld_node_t *n, const char *text) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)text;
  m.payload_len = strlen(text);
  m.content_topic = CONTENT_TOPIC;
  m.content_topic_len = strlen(CONTENT_TOPIC);
  m.timestamp = (int64_t)ld_wall_ns();
  assert_true(ld_node_publish(n, TOPIC, &m, NULL) >= 0);
}

static size_t mesh(ld_node_t *n) {
  return ld_gs_service_mesh_peers(ld_node_gossipsub(n), TOPIC, NULL, 0);
}

static bool ctx_complete(ld_node_t *n) {
  ld_node_rln_proving_stats_t s;
  ld_node_rln_proving_stats(n, &s);
  return s.ctx_complete;
}

static void proofs_come_from_the_context_after_warm_up(void **state) {
  (void)state;
  make_group();
  got_t at_b = {0};
  ld_node_t *b =
      nh_start_subscribed(&g_loop, rln_config(false), LD_EVENT_MESSAGE, on_message, &at_b);
  ld_node_config_t *ca = rln_config(true);
  nh_add_static(ca, b);
  ld_node_t *a = nh_start(&g_loop, ca);
  NH_WAIT_FOR(&g_loop, mesh(a) == 1 && mesh(b) == 1, WAIT_MS);

  ld_node_rln_proving_stats_t s;
  ld_node_rln_proving_stats(a, &s);
  assert_int_equal(s.plain + s.ctx_hits + s.ctx_misses + s.build_slices, 0);
  assert_false(s.ctx_complete); /* nothing is built before the first publish */

  publish_text(a, "ctx-1"); /* no context yet: proved without */
  NH_WAIT_FOR(&g_loop, at_b.n == 1, WAIT_MS);
  /* then the context is made and its tables built, a slice at a time, while the queue idles */
  NH_WAIT_FOR(&g_loop, ctx_complete(a), BUILD_WAIT_MS);
  ld_node_rln_proving_stats(a, &s);
  assert_int_equal(s.plain, 1);
  assert_int_equal(s.ctx_hits + s.ctx_misses, 0);
  assert_true(s.build_slices > 2); /* the making and more than one slice of tables */

  /* one at a time: each message's proof must be done within the validators' 20 s clock gap of
   * its timestamp, and a proof takes seconds under the sanitizers on a loaded machine */
  publish_text(a, "ctx-2"); /* makes the membership sums */
  NH_WAIT_FOR(&g_loop, at_b.n == 2, WAIT_MS);
  publish_text(a, "ctx-3"); /* reuses them */
  NH_WAIT_FOR(&g_loop, at_b.n == 3, WAIT_MS);
  assert_int_equal(ld_node_rln_pending(a), 0);
  ld_node_rln_proving_stats(a, &s);
  assert_int_equal(s.plain, 1);
  assert_int_equal(s.ctx_misses, 1);
  assert_int_equal(s.ctx_hits, 1);
  assert_string_equal(at_b.payloads[1], "ctx-2");
  assert_string_equal(at_b.payloads[2], "ctx-3");
  /* B verified all three proofs */
  const ld_rln_validator_stats_t *sb = ld_node_rln_stats(b);
  assert_non_null(sb);
  assert_int_equal(sb->valid, 3);

  nh_stop(&g_loop, a, WAIT_MS);
  nh_stop(&g_loop, b, WAIT_MS);
  unlink(g_group_path);
  unlink(g_cred_path);
  rmdir(g_dir);
}

int main(void) {
  uv_loop_init(&g_loop);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(proofs_come_from_the_context_after_warm_up),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  uv_loop_close(&g_loop);
  return rc;
}
