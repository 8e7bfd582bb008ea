/* Waku metadata between switches on loopback in one process: the exchange on every new
 * connection (both directions), shards stored per peer, a peer of another cluster disconnected,
 * a peer without metadata disconnected only when metadata is required, garbage answers, a
 * js-waku-style request served and remembered, and a rejected peer answered before the close. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/peerstore.h"
#include "switch_harness.h"
#include "waku/metadata/metadata.h"

#define WAIT_MS 10000
/* How long a rejected connection waits for the peer's own request (shorter than the default to
 * keep the tests whose peer never asks quick). */
#define REJECT_GRACE_MS 1000

typedef struct node {
  ld_switch_t *sw;
  ld_metadata_t *md;
  ld_peerstore_t *ps;
  ld_multiaddr_t addr; /* with /p2p */
  sh_events_t ev;
  int peers; /* on_peer calls */
  ld_metadata_info_t last_peer;
  int rejected;
  int last_reject;
  int failed;
  int last_failure;
} node_t;

static uv_loop_t g_loop;

/* ---- nodes ---------------------------------------------------------------------------------- */

static void ev_peer(ld_conn_t *c, const ld_metadata_info_t *info, void *ud) {
  (void)c;
  node_t *n = ud;
  n->peers++;
  n->last_peer = *info;
}

static void ev_rejected(ld_conn_t *c, int reason, const ld_metadata_info_t *info, void *ud) {
  (void)c;
  (void)info;
  node_t *n = ud;
  n->rejected++;
  n->last_reject = reason;
}

static void ev_failed(ld_conn_t *c, int err, void *ud) {
  (void)c;
  node_t *n = ud;
  n->failed++;
  n->last_failure = err;
}

static const ld_metadata_events_t g_events = {
    .on_peer = ev_peer, .on_rejected = ev_rejected, .on_failed = ev_failed};

/* A switch listening on 127.0.0.1; with a metadata service unless `cluster` is negative. */
static void node_start(node_t *n, int cluster, const uint16_t *shards, size_t n_shards,
                       bool require) {
  memset(n, 0, sizeof *n);
  n->sw = sh_switch_new(&g_loop, NULL);
  sh_track_events(n->sw, &n->ev);
  sh_listen_local(n->sw, &n->addr);
  if (cluster < 0)
    return;
  ld_metadata_config_t cfg;
  ld_metadata_config_default(&cfg);
  cfg.cluster_id = (uint32_t)cluster;
  cfg.shards = shards;
  cfg.n_shards = n_shards;
  cfg.require_metadata = require;
  cfg.reject_grace_ms = REJECT_GRACE_MS;
  n->md = ld_metadata_new(n->sw, &cfg);
  assert_non_null(n->md);
  ld_metadata_set_events(n->md, &g_events, n);
  n->ps = ld_peerstore_new(NULL);
  assert_non_null(n->ps);
  ld_metadata_set_peerstore(n->md, n->ps);
}

static void node_stop(node_t *n) {
  sh_switch_close(n->sw, &g_loop);
  ld_metadata_free(n->md);
  if (n->ps != NULL)
    ld_peerstore_free(n->ps);
}

static size_t conn_count(const node_t *n) {
  return ld_switch_connections(n->sw, NULL, 0);
}

static ld_conn_t *dial(node_t *from, node_t *to) {
  int err = 0;
  ld_conn_t *c = sh_dial_wait(from->sw, &g_loop, &to->addr, &err);
  assert_int_equal(err, 0);
  assert_non_null(c);
  return c;
}

typedef struct cond {
  node_t *a, *b;
} cond_t;

static bool both_know_each_other(void *ud) {
  cond_t *c = ud;
  return ld_metadata_peer(c->a->md, ld_switch_peer_id(c->b->sw)) != NULL &&
         ld_metadata_peer(c->b->md, ld_switch_peer_id(c->a->sw)) != NULL;
}

static bool disconnected(void *ud) {
  cond_t *c = ud;
  return c->a->ev.disconnected > 0 && conn_count(c->a) == 0 &&
         (c->b == NULL || (c->b->ev.disconnected > 0 && conn_count(c->b) == 0));
}

static bool int_positive(void *ud) {
  return *(int *)ud > 0;
}

/* ---- a fake metadata responder -------------------------------------------------------------- */

typedef struct fake {
  const uint8_t *answer; /* written once the request frame is complete */
  size_t answer_len;
  ld_buf_t rx;
  int requests;
  ld_metadata_info_t request;
} fake_t;

static fake_t g_fake;

static void fake_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  fake_t *f = ld_stream_user_data(s);
  ld_buf_append(&f->rx, data, len);
  if (ld_metadata_decode(f->rx.data, f->rx.len, &f->request) <= 0)
    return;
  f->requests++;
  ld_buf_reset(&f->rx);
  if (f->answer_len > 0)
    ld_stream_write(s, f->answer, f->answer_len);
  ld_stream_close_write(s);
}

static void fake_close(ld_stream_t *s, int err) {
  (void)s;
  (void)err;
}

static const ld_stream_handler_t g_fake_handler = {.on_data = fake_data, .on_close = fake_close};

static void fake_accept(ld_stream_t *s, void *ud) {
  ld_stream_set_handler(s, &g_fake_handler, ud);
}

static void fake_register(node_t *n, const uint8_t *answer, size_t len) {
  ld_buf_clear(&g_fake.rx);
  memset(&g_fake, 0, sizeof g_fake);
  g_fake.answer = answer;
  g_fake.answer_len = len;
  assert_int_equal(ld_switch_handle(n->sw, LD_METADATA_PROTOCOL, fake_accept, &g_fake), 0);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void same_cluster_exchange_both_ways(void **state) {
  (void)state;
  node_t a, b;
  const uint16_t a_shards[] = {0, 1, 2}, b_shards[] = {2, 5};
  node_start(&a, 1, a_shards, 3, true);
  node_start(&b, 1, b_shards, 2, true);
  dial(&b, &a);
  cond_t c = {&a, &b};
  assert_true(sh_run_until(&g_loop, both_know_each_other, &c, WAIT_MS));

  const ld_metadata_info_t *seen_by_a = ld_metadata_peer(a.md, ld_switch_peer_id(b.sw));
  assert_true(seen_by_a->has_cluster);
  assert_int_equal(seen_by_a->cluster_id, 1);
  assert_int_equal(seen_by_a->n_shards, 2);
  assert_true(ld_metadata_info_has_shard(seen_by_a, 5));
  const ld_metadata_info_t *seen_by_b = ld_metadata_peer(b.md, ld_switch_peer_id(a.sw));
  assert_int_equal(seen_by_b->n_shards, 3);
  assert_true(ld_metadata_peer_on_shard(a.md, ld_switch_peer_id(b.sw), 2));
  assert_false(ld_metadata_peer_on_shard(a.md, ld_switch_peer_id(b.sw), 0));
  ld_peerid_t on5[4];
  assert_int_equal(ld_metadata_peers_on_shard(a.md, 5, on5, 4), 1);
  assert_true(ld_peerid_equal(&on5[0], ld_switch_peer_id(b.sw)));
  assert_int_equal(ld_metadata_peers_on_shard(a.md, 0, on5, 4), 0);

  /* Shards in common or not, the connection stays. */
  sh_run_for(&g_loop, 200);
  assert_int_equal(conn_count(&a), 1);
  assert_int_equal(conn_count(&b), 1);
  assert_int_equal(a.rejected + b.rejected + a.failed + b.failed, 0);
  ld_metadata_stats_t st;
  ld_metadata_get_stats(a.md, &st);
  assert_int_equal(st.requests_sent, 1);
  assert_int_equal(st.responses_ok, 1);
  assert_int_equal(st.requests_served, 1);
  node_stop(&b);
  node_stop(&a);
}

static void other_cluster_disconnected_on_both_sides(void **state) {
  (void)state;
  node_t a, c;
  const uint16_t shards[] = {0};
  node_start(&a, 1, shards, 1, false);
  node_start(&c, 2, shards, 1, false);
  dial(&c, &a);
  cond_t cd = {&a, &c};
  assert_true(sh_run_until(&g_loop, disconnected, &cd, WAIT_MS));
  assert_int_equal(a.rejected + c.rejected >= 1, 1);
  assert_null(ld_metadata_peer(a.md, ld_switch_peer_id(c.sw)));
  assert_null(ld_metadata_peer(c.md, ld_switch_peer_id(a.sw)));
  node_stop(&c);
  node_stop(&a);
}

/* A peer that answers for cluster 2 but never asks: only our side judges, deterministically. */
static void answer_from_other_cluster_closes_with_named_reason(void **state) {
  (void)state;
  node_t a, f;
  node_start(&a, 1, NULL, 0, false);
  node_start(&f, -1, NULL, 0, false);
  const uint8_t answer[] = {0x04, 0x08, 0x02, 0x10, 0x00};
  fake_register(&f, answer, sizeof answer);
  sh_log_capture();
  /* the peer store must lose the peer as well */
  assert_int_equal(ld_peerstore_touch(a.ps, ld_switch_peer_id(f.sw), 1), 0);
  dial(&a, &f);
  cond_t cd = {&a, NULL};
  assert_true(sh_run_until(&g_loop, disconnected, &cd, WAIT_MS));
  assert_int_equal(a.rejected, 1);
  assert_int_equal(a.last_reject, LD_ERR_CLUSTER_MISMATCH);
  assert_int_equal(a.ev.last_reason, LD_ERR_CLUSTER_MISMATCH);
  assert_true(sh_log_contains("CLUSTER_MISMATCH (cluster 2, ours 1)"));
  sh_log_release();
  /* Our request carried our real cluster. */
  assert_int_equal(g_fake.requests, 1);
  assert_true(g_fake.request.has_cluster);
  assert_int_equal(g_fake.request.cluster_id, 1);
  assert_null(ld_peerstore_get(a.ps, ld_switch_peer_id(f.sw)));
  ld_metadata_stats_t st;
  ld_metadata_get_stats(a.md, &st);
  assert_int_equal(st.rejected_cluster, 1);
  node_stop(&f);
  node_stop(&a);
}

static void answer_without_cluster_closes(void **state) {
  (void)state;
  node_t a, f;
  node_start(&a, 0, NULL, 0, false);
  node_start(&f, -1, NULL, 0, false);
  const uint8_t answer[] = {0x02, 0x10, 0x00}; /* shard 0, no cluster */
  fake_register(&f, answer, sizeof answer);
  dial(&f, &a); /* inbound for a: it asks as well */
  cond_t cd = {&a, NULL};
  assert_true(sh_run_until(&g_loop, disconnected, &cd, WAIT_MS));
  assert_int_equal(a.last_reject, LD_ERR_CLUSTER_MISMATCH);
  node_stop(&f);
  node_stop(&a);
}

static void garbage_answer_closes(void **state) {
  (void)state;
  node_t a, f;
  node_start(&a, 1, NULL, 0, false);
  node_start(&f, -1, NULL, 0, false);
  const uint8_t answer[] = {0x02, 0x0f, 0x01}; /* wire type 7 */
  fake_register(&f, answer, sizeof answer);
  dial(&a, &f);
  cond_t cd = {&a, NULL};
  assert_true(sh_run_until(&g_loop, disconnected, &cd, WAIT_MS));
  assert_int_equal(a.last_reject, LD_ERR_BAD_PROTOBUF);
  node_stop(&f);
  node_stop(&a);
}

static void peer_without_metadata_closed_only_when_required(void **state) {
  (void)state;
  node_t strict, lenient, plain;
  node_start(&strict, 1, NULL, 0, true);
  node_start(&lenient, 1, NULL, 0, false);
  node_start(&plain, -1, NULL, 0, false);

  dial(&plain, &strict);
  cond_t cd = {&strict, NULL};
  assert_true(sh_run_until(&g_loop, disconnected, &cd, WAIT_MS));
  assert_int_equal(strict.last_reject, LD_ERR_PROTOCOL_UNSUPPORTED);
  assert_int_equal(strict.ev.last_reason, LD_ERR_PROTOCOL_UNSUPPORTED);

  dial(&plain, &lenient);
  assert_true(sh_run_until(&g_loop, int_positive, &lenient.failed, WAIT_MS));
  assert_int_equal(lenient.last_failure, LD_ERR_PROTOCOL_UNSUPPORTED);
  sh_run_for(&g_loop, 200);
  assert_int_equal(conn_count(&lenient), 1);
  assert_int_equal(lenient.rejected, 0);
  assert_null(ld_metadata_peer(lenient.md, ld_switch_peer_id(plain.sw)));
  node_stop(&plain);
  node_stop(&lenient);
  node_stop(&strict);
}

/* ---- a js-waku-style requester -------------------------------------------------------------- */

typedef struct client {
  ld_buf_t rx;
  bool eof;
  bool closed;
  int close_err;
} client_t;

static void client_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  client_t *cl = ld_stream_user_data(s);
  ld_buf_append(&cl->rx, data, len);
}

static void client_eof(ld_stream_t *s) {
  client_t *cl = ld_stream_user_data(s);
  cl->eof = true;
}

static void client_close(ld_stream_t *s, int err) {
  client_t *cl = ld_stream_user_data(s);
  cl->closed = true;
  cl->close_err = err;
}

static const ld_stream_handler_t g_client_handler = {
    .on_data = client_data, .on_eof = client_eof, .on_close = client_close};

static void client_open(ld_stream_t *s, int err, void *ud) {
  assert_int_equal(err, 0);
  ld_stream_set_handler(s, &g_client_handler, ud);
  /* {clusterId: 1, shards: [3]} as protons writes it (packed field 2), then half-close */
  const uint8_t req[] = {0x05, 0x08, 0x01, 0x12, 0x01, 0x03};
  assert_int_equal(ld_stream_write(s, req, sizeof req), 0);
  assert_int_equal(ld_stream_close_write(s), 0);
}

static bool client_done(void *ud) {
  return ((client_t *)ud)->closed;
}

static size_t provide_seven(void *ud, uint16_t *out, size_t max) {
  (void)ud;
  if (max > 0)
    out[0] = 7;
  return 1;
}

static void request_served_and_remembered(void **state) {
  (void)state;
  node_t server, plain;
  const uint16_t shards[] = {0, 1};
  node_start(&server, 1, shards, 2, false);
  ld_metadata_set_shard_provider(server.md, provide_seven, NULL);
  node_start(&plain, -1, NULL, 0, false);
  ld_conn_t *c = dial(&plain, &server);
  assert_true(sh_run_until(&g_loop, int_positive, &server.failed, WAIT_MS));

  client_t cl = {0};
  ld_buf_init(&cl.rx);
  const char *proto = LD_METADATA_PROTOCOL;
  assert_int_equal(ld_switch_open_stream(plain.sw, c, &proto, 1, client_open, &cl), 0);
  assert_true(sh_run_until(&g_loop, client_done, &cl, WAIT_MS));
  assert_true(cl.eof);
  assert_int_equal(cl.close_err, 0);
  ld_metadata_info_t answer;
  assert_int_equal(ld_metadata_decode(cl.rx.data, cl.rx.len, &answer), (int)cl.rx.len);
  assert_int_equal(answer.cluster_id, 1);
  assert_int_equal(answer.n_shards, 1); /* the provider's shards win over the configured ones */
  assert_true(ld_metadata_info_has_shard(&answer, 7));
  ld_buf_clear(&cl.rx);

  const ld_metadata_info_t *known = ld_metadata_peer(server.md, ld_switch_peer_id(plain.sw));
  assert_non_null(known);
  assert_int_equal(known->cluster_id, 1);
  assert_true(ld_metadata_info_has_shard(known, 3));
  assert_int_equal(server.peers, 1);

  /* Without a provider answer the configured shards are reported. */
  ld_metadata_set_shard_provider(server.md, NULL, NULL);
  ld_metadata_info_t local;
  ld_metadata_local(server.md, &local);
  assert_int_equal(local.n_shards, 2);
  assert_int_equal(ld_metadata_forget(server.md, ld_switch_peer_id(plain.sw)), 0);
  assert_int_equal(ld_metadata_forget(server.md, ld_switch_peer_id(plain.sw)), LD_ERR_NOT_FOUND);
  node_stop(&plain);
  node_stop(&server);
}

/* ---- a rejected peer asking after the rejection ------------------------------------------- */

static void other_cluster_open(ld_stream_t *s, int err, void *ud) {
  assert_int_equal(err, 0); /* the rejected connection is still open */
  ld_stream_set_handler(s, &g_client_handler, ud);
  /* {clusterId: 2, shards: [3]} as js-waku writes it, then half-close */
  const uint8_t req[] = {0x05, 0x08, 0x02, 0x12, 0x01, 0x03};
  assert_int_equal(ld_stream_write(s, req, sizeof req), 0);
  assert_int_equal(ld_stream_close_write(s), 0);
}

/* A peer of cluster 2 answers our request at once but asks its own only after we rejected it (as
 * a js-waku node does once identify is through): the connection waits for that request, answers
 * it with our cluster, and closes only then; the peer is not remembered. */
static void rejected_peer_learns_our_cluster_before_the_close(void **state) {
  (void)state;
  node_t a, f;
  const uint16_t shards[] = {4};
  node_start(&a, 1, shards, 1, false);
  node_start(&f, -1, NULL, 0, false);
  const uint8_t answer[] = {0x04, 0x08, 0x02, 0x10, 0x03}; /* cluster 2, shard 3 */
  fake_register(&f, answer, sizeof answer);
  ld_conn_t *c = dial(&f, &a);
  assert_true(sh_run_until(&g_loop, int_positive, &a.rejected, WAIT_MS));
  assert_int_equal(a.last_reject, LD_ERR_CLUSTER_MISMATCH);

  client_t cl = {0};
  ld_buf_init(&cl.rx);
  const char *proto = LD_METADATA_PROTOCOL;
  assert_int_equal(ld_switch_open_stream(f.sw, c, &proto, 1, other_cluster_open, &cl), 0);
  assert_true(sh_run_until(&g_loop, client_done, &cl, WAIT_MS));
  assert_true(cl.eof);
  ld_metadata_info_t ours;
  assert_int_equal(ld_metadata_decode(cl.rx.data, cl.rx.len, &ours), (int)cl.rx.len);
  assert_true(ours.has_cluster);
  assert_int_equal(ours.cluster_id, 1);
  assert_true(ld_metadata_info_has_shard(&ours, 4));
  ld_buf_clear(&cl.rx);

  cond_t cd = {&a, NULL};
  assert_true(sh_run_until(&g_loop, disconnected, &cd, WAIT_MS));
  assert_int_equal(a.ev.last_reason, LD_ERR_CLUSTER_MISMATCH);
  assert_null(ld_metadata_peer(a.md, ld_switch_peer_id(f.sw)));
  assert_int_equal(a.peers, 0);
  ld_metadata_stats_t st;
  ld_metadata_get_stats(a.md, &st);
  assert_int_equal(st.requests_served, 1);
  assert_int_equal(st.rejected_cluster, 1);
  node_stop(&f);
  node_stop(&a);
}

static int setup(void **state) {
  (void)state;
  return uv_loop_init(&g_loop);
}

static int teardown(void **state) {
  (void)state;
  uv_run(&g_loop, UV_RUN_NOWAIT);
  return uv_loop_close(&g_loop) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_cluster_exchange_both_ways),
      cmocka_unit_test(other_cluster_disconnected_on_both_sides),
      cmocka_unit_test(answer_from_other_cluster_closes_with_named_reason),
      cmocka_unit_test(answer_without_cluster_closes),
      cmocka_unit_test(garbage_answer_closes),
      cmocka_unit_test(peer_without_metadata_closed_only_when_required),
      cmocka_unit_test(request_served_and_remembered),
      cmocka_unit_test(rejected_peer_learns_our_cluster_before_the_close),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
