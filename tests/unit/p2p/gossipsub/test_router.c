/* The gossipsub router in an in-memory network: routers (and scripted "raw" peers that only
 * record what they receive) wired through the send callback, with a fake clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "p2p/gossipsub/router.h"
#include "p2p/gossipsub/rpc.h"

#define T "/waku/2/rs/1/0"
#define MAXN 32
#define MAX_INBOX 8192

typedef struct net net_t;

typedef struct node {
  net_t *net;
  int idx;
  ld_gs_router_t *r; /* NULL: raw peer */
  bool defer;
  const char *reject_prefix;
  uint64_t deferred[256];
  size_t n_deferred;
  uint8_t (*delivered)[32];
  size_t n_delivered, cap_delivered;
  size_t mesh_joined, mesh_left;
  ld_gs_peer_t disconnected[64];
  int disc_reason[64];
  size_t n_disc;
  ld_gs_rpc_t *inbox[MAX_INBOX]; /* raw peers: decoded RPCs received */
  int inbox_from[MAX_INBOX];
  size_t n_inbox;
} node_t;

/* An RPC in flight. It arrives at virtual time `at`: one unit after it was sent plus one per
 * 64 bytes, so that small control messages overtake large messages as on a real link. */
typedef struct rec {
  int from, to;
  uint8_t *buf;
  size_t len;
  uint64_t at, seq;
} rec_t;

struct net {
  node_t nodes[MAXN];
  int n;
  uint64_t now;
  rec_t *q;
  size_t qn, qcap;
  uint64_t vt, seq;        /* virtual time of the delivery in progress; send counter */
  bool deaf[MAXN];         /* drop message entries sent to this node */
  uint64_t msgs_delivered; /* message entries handed to routers */
  size_t max_rpc_seen;
};

static net_t *NET;
static ld_gs_params_t P;

/* ---- harness ------------------------------------------------------------------------------- */

static void on_send(void *ud, ld_gs_peer_t peer, const uint8_t *rpc, size_t len) {
  node_t *n = ud;
  net_t *net = n->net;
  assert_true(len <= P.max_rpc_size);
  if (len > net->max_rpc_seen) {
    net->max_rpc_seen = len;
  }
  if (net->qn == net->qcap) {
    net->qcap = net->qcap ? net->qcap * 2 : 1024;
    net->q = realloc(net->q, net->qcap * sizeof *net->q);
  }
  rec_t *r = &net->q[net->qn++];
  r->from = n->idx;
  r->to = (int)peer;
  r->buf = malloc(len ? len : 1);
  memcpy(r->buf, rpc, len);
  r->len = len;
  r->at = net->vt + 1 + len / 64;
  r->seq = net->seq++;
}

static void on_validate(void *ud, uint64_t vid, ld_gs_peer_t from, const char *topic,
                        const uint8_t *data, size_t len, const uint8_t id[32]) {
  (void)from, (void)topic, (void)id;
  node_t *n = ud;
  if (n->defer) {
    assert_true(n->n_deferred < 256);
    n->deferred[n->n_deferred++] = vid;
    return;
  }
  ld_gs_verdict_t v = LD_GS_ACCEPT;
  const char *pre = n->reject_prefix;
  if (pre != NULL && len >= strlen(pre) && memcmp(data, pre, strlen(pre)) == 0) {
    v = LD_GS_REJECT;
  }
  ld_gs_router_validated(n->r, vid, v, n->net->now);
}

static void on_deliver(void *ud, const char *topic, const uint8_t *data, size_t len,
                       const uint8_t id[32], ld_gs_peer_t from) {
  (void)topic, (void)data, (void)len, (void)from;
  node_t *n = ud;
  for (size_t i = 0; i < n->n_delivered; i++) {
    if (memcmp(n->delivered[i], id, 32) == 0) {
      fail_msg("node %d: message delivered twice", n->idx);
    }
  }
  if (n->n_delivered == n->cap_delivered) {
    n->cap_delivered = n->cap_delivered ? n->cap_delivered * 2 : 64;
    n->delivered = realloc(n->delivered, n->cap_delivered * 32);
  }
  memcpy(n->delivered[n->n_delivered++], id, 32);
}

static void on_disconnect(void *ud, ld_gs_peer_t peer, int reason) {
  node_t *n = ud;
  assert_true(n->n_disc < 64);
  n->disc_reason[n->n_disc] = reason;
  n->disconnected[n->n_disc++] = peer;
}

static void on_mesh_changed(void *ud, const char *topic, ld_gs_peer_t peer, bool joined) {
  (void)topic, (void)peer;
  node_t *n = ud;
  if (joined) {
    n->mesh_joined++;
  } else {
    n->mesh_left++;
  }
}

static const ld_gs_callbacks_t CB = {on_send, on_validate, on_deliver, on_disconnect,
                                     on_mesh_changed};

static void params(ld_gs_params_t *p) {
  ld_gs_params_nwaku(p);
}

static net_t *net_new(int routers, int raws, uint64_t seed) {
  net_t *net = calloc(1, sizeof *net);
  net->n = routers + raws;
  for (int i = 0; i < net->n; i++) {
    node_t *n = &net->nodes[i];
    n->net = net;
    n->idx = i;
    if (i < routers) {
      n->r = ld_gs_router_new(&P, &CB, n, seed * 1000 + (uint64_t)i);
      assert_non_null(n->r);
    }
  }
  net->now = 1000000;
  NET = net;
  return net;
}

static void net_free(net_t *net) {
  for (int i = 0; i < net->n; i++) {
    node_t *n = &net->nodes[i];
    ld_gs_router_free(n->r);
    free(n->delivered);
    for (size_t k = 0; k < n->n_inbox; k++) {
      ld_gs_rpc_free(n->inbox[k]);
    }
  }
  for (size_t i = 0; i < net->qn; i++) {
    free(net->q[i].buf);
  }
  free(net->q);
  free(net);
  NET = NULL;
}

/* A copy of the RPC without its messages. */
static size_t strip_messages(const uint8_t *in, size_t len, uint8_t **out) {
  ld_gs_rpc_t *rpc = NULL;
  assert_int_equal(ld_gs_rpc_decode(in, len, &rpc), 0);
  ld_gs_rpc_t copy = *rpc;
  copy.n_publish = 0;
  size_t n = ld__gossipsub__rpc__get_packed_size(&copy);
  *out = malloc(n ? n : 1);
  ld__gossipsub__rpc__pack(&copy, *out);
  ld_gs_rpc_free(rpc);
  return n;
}

static void deliver_rec(net_t *net, rec_t *r) {
  node_t *to = &net->nodes[r->to];
  ld_gs_rpc_t *rpc = NULL;
  assert_int_equal(ld_gs_rpc_decode(r->buf, r->len, &rpc), 0);
  if (to->r == NULL) {
    if (to->n_inbox < MAX_INBOX) {
      to->inbox_from[to->n_inbox] = r->from;
      to->inbox[to->n_inbox++] = rpc;
    } else {
      ld_gs_rpc_free(rpc);
    }
    return;
  }
  size_t n_pub = rpc->n_publish;
  ld_gs_rpc_free(rpc);
  uint8_t *buf = r->buf;
  size_t len = r->len;
  if (net->deaf[r->to] && n_pub > 0) {
    len = strip_messages(r->buf, r->len, &buf);
    n_pub = 0;
  }
  net->msgs_delivered += n_pub;
  int rc = ld_gs_router_handle_rpc(to->r, (ld_gs_peer_t)r->from, buf, len, net->now);
  assert_true(rc == 0 || rc == LD_ERR_NOT_FOUND);
  if (buf != r->buf) {
    free(buf);
  }
}

/* Delivers everything in flight in arrival order (ties: send order). */
static void net_run(net_t *net) {
  for (size_t steps = 0; net->qn > 0; steps++) {
    assert_true(steps < 10000000);
    size_t best = 0;
    for (size_t i = 1; i < net->qn; i++) {
      const rec_t *a = &net->q[i], *b = &net->q[best];
      if (a->at < b->at || (a->at == b->at && a->seq < b->seq)) {
        best = i;
      }
    }
    rec_t r = net->q[best];
    net->q[best] = net->q[--net->qn];
    net->vt = r.at;
    deliver_rec(net, &r);
    free(r.buf);
  }
}

static void link_nodes(net_t *net, int a, int b, ld_gs_proto_t proto) {
  char ip[32];
  if (net->nodes[a].r != NULL) {
    snprintf(ip, sizeof ip, "10.0.0.%d", b);
    assert_int_equal(
        ld_gs_router_add_peer(net->nodes[a].r, (ld_gs_peer_t)b, proto, true, ip, net->now), 0);
  }
  if (net->nodes[b].r != NULL) {
    snprintf(ip, sizeof ip, "10.0.0.%d", a);
    assert_int_equal(
        ld_gs_router_add_peer(net->nodes[b].r, (ld_gs_peer_t)a, proto, false, ip, net->now), 0);
  }
  net_run(net);
}

static void tick(net_t *net, int heartbeats) {
  for (int h = 0; h < heartbeats; h++) {
    net->now += P.heartbeat_ms;
    for (int i = 0; i < net->n; i++) {
      if (net->nodes[i].r != NULL) {
        ld_gs_router_heartbeat(net->nodes[i].r, net->now);
        assert_int_equal(ld_gs_router_next_deadline(net->nodes[i].r), net->now + P.heartbeat_ms);
      }
    }
    net_run(net);
  }
}

static void subscribe_all(net_t *net, const char *topic) {
  for (int i = 0; i < net->n; i++) {
    if (net->nodes[i].r != NULL) {
      assert_int_equal(ld_gs_router_subscribe(net->nodes[i].r, topic, net->now), 0);
    }
  }
  net_run(net);
}

static bool delivered(const node_t *n, const uint8_t *data, size_t len) {
  uint8_t id[32];
  ld_gs_msg_id(data, len, id);
  for (size_t i = 0; i < n->n_delivered; i++) {
    if (memcmp(n->delivered[i], id, 32) == 0) {
      return true;
    }
  }
  return false;
}

/* ---- raw peers: scripted RPCs ------------------------------------------------------------- */

static uint8_t big_scratch[2 << 20];

typedef struct onebuf {
  uint8_t *buf;
  size_t len;
  int n;
} onebuf_t;

static void one_emit(void *ctx, const uint8_t *rpc, size_t len) {
  onebuf_t *o = ctx;
  o->buf = malloc(len ? len : 1);
  memcpy(o->buf, rpc, len);
  o->len = len;
  o->n++;
}

/* Packs the outbox into exactly one RPC and hands it from raw peer `from` to router `to`. */
static int raw_send(net_t *net, int from, int to, ld_gs_out_t *o) {
  onebuf_t ob = {0};
  assert_int_equal(ld_gs_out_flush(o, big_scratch, sizeof big_scratch, one_emit, &ob, NULL), 1);
  int rc = ld_gs_router_handle_rpc(net->nodes[to].r, (ld_gs_peer_t)from, ob.buf, ob.len, net->now);
  free(ob.buf);
  net_run(net);
  return rc;
}

static int raw_bytes(net_t *net, int from, int to, const uint8_t *b, size_t len) {
  int rc = ld_gs_router_handle_rpc(net->nodes[to].r, (ld_gs_peer_t)from, b, len, net->now);
  net_run(net);
  return rc;
}

static void raw_join(net_t *net, int raw, int router, const char *topic, bool graft) {
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  ld_gs_out_sub(&o, topic, true);
  if (graft) {
    ld_gs_out_graft(&o, topic);
  }
  assert_int_equal(raw_send(net, raw, router, &o), 0);
  ld_gs_out_clear(&o);
}

static int raw_publish(net_t *net, int raw, int router, const char *topic, const void *d,
                       size_t len) {
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  ld_gs_out_msg(&o, topic, d, len);
  int rc = raw_send(net, raw, router, &o);
  ld_gs_out_clear(&o);
  return rc;
}

typedef struct tally {
  size_t msgs, grafts, prunes, ihave_ids, iwant_ids, idontwant_ids, subs;
  uint64_t last_backoff;
} tally_t;

/* What raw peer `raw` received from `from` since inbox position `since`. */
static tally_t inbox_tally(const node_t *raw, int from, size_t since) {
  tally_t t = {0};
  for (size_t i = since; i < raw->n_inbox; i++) {
    const ld_gs_rpc_t *r = raw->inbox[i];
    if (raw->inbox_from[i] != from) {
      continue;
    }
    t.msgs += r->n_publish;
    t.subs += r->n_subscriptions;
    if (r->control == NULL) {
      continue;
    }
    const Ld__Gossipsub__ControlMessage *c = r->control;
    t.grafts += c->n_graft;
    t.prunes += c->n_prune;
    for (size_t k = 0; k < c->n_prune; k++) {
      t.last_backoff = c->prune[k]->backoff;
    }
    for (size_t k = 0; k < c->n_ihave; k++) {
      t.ihave_ids += c->ihave[k]->n_messageids;
    }
    for (size_t k = 0; k < c->n_iwant; k++) {
      t.iwant_ids += c->iwant[k]->n_messageids;
    }
    for (size_t k = 0; k < c->n_idontwant; k++) {
      t.idontwant_ids += c->idontwant[k]->n_messageids;
    }
  }
  return t;
}

static int setup(void **state) {
  (void)state;
  params(&P);
  return 0;
}

/* ---- tests --------------------------------------------------------------------------------- */

static void mesh_converges_and_every_message_arrives_once(void **state) {
  (void)state;
  enum { N = 30, K = 6 };
  net_t *net = net_new(N, 0, 1);
  for (int i = 0; i < N; i++) {
    for (int k = 1; k <= K; k++) {
      link_nodes(net, i, (i + k) % N, LD_GS_PROTO_WAKU_RELAY);
    }
  }
  subscribe_all(net, T);
  tick(net, 20);
  ld_gs_peer_t mesh[64];
  for (int i = 0; i < N; i++) {
    size_t m = ld_gs_router_mesh_peers(net->nodes[i].r, T, mesh, 64);
    assert_in_range(m, P.d_lo, P.d_hi);
    assert_int_equal(ld_gs_router_topic_peers(net->nodes[i].r, T, NULL, 0), 2 * K);
    for (size_t k = 0; k < m; k++) { /* meshes are symmetric at rest */
      assert_true(ld_gs_router_in_mesh(net->nodes[mesh[k]].r, T, (ld_gs_peer_t)i));
    }
  }
  for (int m = 0; m < 50; m++) {
    char data[64];
    int len = snprintf(data, sizeof data, "message %d", m);
    int from = (m * 7) % N;
    int sent = ld_gs_router_publish(net->nodes[from].r, T, (uint8_t *)data, (size_t)len, net->now);
    assert_int_equal(sent, 2 * K); /* flood publish: every subscriber */
    net_run(net);
    for (int i = 0; i < N; i++) {
      assert_int_equal(delivered(&net->nodes[i], (uint8_t *)data, (size_t)len), i != from);
    }
    if (m % 10 == 9) {
      tick(net, 1);
    }
  }
  ld_gs_topic_stats_t ts;
  assert_int_equal(ld_gs_router_topic_stats(net->nodes[0].r, T, &ts), 0);
  assert_true(ts.delivered > 0 && ts.accepted == ts.delivered && ts.duplicates > 0);
  net_free(net);
}

static void gossip_repairs_a_missed_message(void **state) {
  (void)state;
  enum { N = 10 };
  net_t *net = net_new(N, 0, 2);
  for (int i = 0; i < N; i++) {
    for (int j = i + 1; j < N; j++) {
      link_nodes(net, i, j, LD_GS_PROTO_MESHSUB_11);
    }
  }
  subscribe_all(net, T);
  tick(net, 5);
  assert_true(ld_gs_router_mesh_size(net->nodes[9].r, T) < N - 1); /* has non-mesh peers */
  net->deaf[9] = true;
  const char *msg = "repair me";
  assert_int_equal(ld_gs_router_publish(net->nodes[0].r, T, (uint8_t *)msg, 9, net->now), N - 1);
  net_run(net);
  for (int i = 1; i < 9; i++) {
    assert_true(delivered(&net->nodes[i], (uint8_t *)msg, 9));
  }
  assert_false(delivered(&net->nodes[9], (uint8_t *)msg, 9));
  net->deaf[9] = false;
  tick(net, 1);
  assert_true(delivered(&net->nodes[9], (uint8_t *)msg, 9));
  ld_gs_stats_t st;
  ld_gs_router_stats(net->nodes[9].r, &st);
  assert_true(st.ihave_in > 0);
  assert_true(st.iwant_out >= 1);
  assert_int_equal(st.broken_promises, 0);
  tick(net, 5); /* no second delivery (on_deliver fails on duplicates) */
  net_free(net);
}

static void prune_backoff_is_honoured(void **state) {
  (void)state;
  net_t *net = net_new(1, 1, 3); /* router 0, raw peer 1 */
  node_t *raw = &net->nodes[1];
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  raw_join(net, 1, 0, T, false);
  assert_int_equal(ld_gs_router_subscribe(net->nodes[0].r, T, net->now), 0);
  net_run(net);
  assert_int_equal(inbox_tally(raw, 0, 0).grafts, 1); /* join grafts the only subscriber */
  assert_true(ld_gs_router_in_mesh(net->nodes[0].r, T, 1));
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  ld_gs_out_prune(&o, T, true, 60);
  assert_int_equal(raw_send(net, 1, 0, &o), 0);
  uint64_t pruned = net->now;
  assert_false(ld_gs_router_in_mesh(net->nodes[0].r, T, 1));
  size_t mark = raw->n_inbox;
  uint64_t regraft = 0;
  for (int h = 0; h < 70 && regraft == 0; h++) {
    tick(net, 1);
    if (inbox_tally(raw, 0, mark).grafts > 0) {
      regraft = net->now;
    }
  }
  /* backoff 60 s plus a slack of two heartbeats */
  assert_true(regraft >= pruned + 60000 + 2 * P.heartbeat_ms);
  assert_true(regraft <= pruned + 60000 + 3 * P.heartbeat_ms);
  assert_true(ld_gs_router_in_mesh(net->nodes[0].r, T, 1));
  ld_gs_out_clear(&o);
  net_free(net);
}

static void graft_during_backoff_is_penalised(void **state) {
  (void)state;
  net_t *net = net_new(1, 1, 4);
  node_t *raw = &net->nodes[1];
  ld_gs_router_t *r = net->nodes[0].r;
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  raw_join(net, 1, 0, T, false);
  ld_gs_router_subscribe(r, T, net->now);
  net_run(net);
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  ld_gs_out_prune(&o, T, true, 60);
  raw_send(net, 1, 0, &o);
  assert_true(ld_gs_router_peer_score(r, 1, net->now) == 0);
  tick(net, 1);
  size_t mark = raw->n_inbox;
  ld_gs_out_graft(&o, T);
  raw_send(net, 1, 0, &o); /* within 10 s of the prune: two penalties */
  tally_t t = inbox_tally(raw, 0, mark);
  assert_int_equal(t.prunes, 1);
  assert_int_equal(t.last_backoff, 60);
  assert_false(ld_gs_router_in_mesh(r, T, 1));
  double s1 = ld_gs_router_peer_score(r, 1, net->now);
  assert_true(s1 <= -40 + 1e-9 && s1 >= -40 - 1e-9); /* -10 x 2^2 */
  tick(net, 15);
  ld_gs_out_graft(&o, T);
  raw_send(net, 1, 0, &o); /* the backoff was refreshed: still refused */
  assert_false(ld_gs_router_in_mesh(r, T, 1));
  double s2 = ld_gs_router_peer_score(r, 1, net->now);
  assert_true(s2 < -80); /* about 3 penalties */
  /* a peer with a negative score is not grafted even once the backoff is over */
  tick(net, 70);
  assert_false(ld_gs_router_in_mesh(r, T, 1));
  ld_gs_out_clear(&o);
  net_free(net);
}

/* Router 0 with raw peers 1 (IDONTWANT sender), 2 (source), 3 (relay), 4 (meshsub 1.1). */
static net_t *idontwant_net(void) {
  net_t *net = net_new(1, 4, 5);
  ld_gs_router_t *r = net->nodes[0].r;
  for (int i = 1; i <= 3; i++) {
    link_nodes(net, 0, i, LD_GS_PROTO_WAKU_RELAY);
  }
  link_nodes(net, 0, 4, LD_GS_PROTO_MESHSUB_11);
  ld_gs_router_subscribe(r, T, net->now);
  for (int i = 1; i <= 4; i++) {
    raw_join(net, i, 0, T, true);
    assert_true(ld_gs_router_in_mesh(r, T, (ld_gs_peer_t)i));
  }
  return net;
}

static void idontwant_suppresses_the_duplicate(void **state) {
  (void)state;
  net_t *net = idontwant_net();
  ld_gs_router_t *r = net->nodes[0].r;
  static uint8_t big[9000]; /* above idontwant_eager_size: IDONTWANT before validation */
  memset(big, 'B', sizeof big);
  uint8_t id[32];
  ld_gs_msg_id(big, sizeof big, id);
  size_t mark[5];
  for (int i = 1; i <= 4; i++) {
    mark[i] = net->nodes[i].n_inbox;
  }
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  ld_gs_out_idontwant(&o, id, 1);
  assert_int_equal(raw_send(net, 1, 0, &o), 0);
  assert_int_equal(raw_publish(net, 2, 0, T, big, sizeof big), 0);
  assert_true(delivered(&net->nodes[0], big, sizeof big));
  tally_t t1 = inbox_tally(&net->nodes[1], 0, mark[1]);
  tally_t t2 = inbox_tally(&net->nodes[2], 0, mark[2]);
  tally_t t3 = inbox_tally(&net->nodes[3], 0, mark[3]);
  tally_t t4 = inbox_tally(&net->nodes[4], 0, mark[4]);
  assert_int_equal(t1.msgs, 0); /* suppressed */
  assert_int_equal(t1.idontwant_ids, 1);
  assert_int_equal(t2.msgs, 0); /* never back to the source */
  assert_int_equal(t2.idontwant_ids, 0);
  assert_int_equal(t3.msgs, 1);
  assert_int_equal(t3.idontwant_ids, 1);
  assert_int_equal(t4.msgs, 1);
  assert_int_equal(t4.idontwant_ids, 0); /* meshsub 1.1 has no IDONTWANT */
  ld_gs_stats_t st;
  ld_gs_router_stats(r, &st);
  assert_int_equal(st.idontwant_skipped, 1);
  assert_int_equal(st.idontwant_in, 1);
  /* small messages get no IDONTWANT */
  mark[3] = net->nodes[3].n_inbox;
  assert_int_equal(raw_publish(net, 2, 0, T, "small", 5), 0);
  t3 = inbox_tally(&net->nodes[3], 0, mark[3]);
  assert_int_equal(t3.msgs, 1);
  assert_int_equal(t3.idontwant_ids, 0);
  ld_gs_out_clear(&o);
  net_free(net);
}

/* A mid-size message validated in the same pass: the forward itself replaces the IDONTWANT. */
static void idontwant_is_held_while_validation_is_quick(void **state) {
  (void)state;
  net_t *net = idontwant_net();
  uint8_t mid[600];
  memset(mid, 'M', sizeof mid);
  size_t mark[5];
  for (int i = 1; i <= 4; i++) {
    mark[i] = net->nodes[i].n_inbox;
  }
  assert_int_equal(raw_publish(net, 2, 0, T, mid, sizeof mid), 0);
  assert_true(delivered(&net->nodes[0], mid, sizeof mid));
  for (int i = 1; i <= 4; i++) {
    tally_t t = inbox_tally(&net->nodes[i], 0, mark[i]);
    assert_int_equal(t.msgs, i == 2 ? 0 : 1);
    assert_int_equal(t.idontwant_ids, 0);
  }
  net_free(net);
}

/* A mid-size message whose validation goes asynchronous: the held IDONTWANT goes out then, to
 * the mesh peers that have not sent it, and the forward follows the verdict. */
static void held_idontwant_goes_out_when_validation_is_deferred(void **state) {
  (void)state;
  net_t *net = idontwant_net();
  node_t *a = &net->nodes[0];
  a->defer = true;
  uint8_t mid[600];
  memset(mid, 'D', sizeof mid);
  size_t mark[5];
  for (int i = 1; i <= 4; i++) {
    mark[i] = net->nodes[i].n_inbox;
  }
  assert_int_equal(raw_publish(net, 2, 0, T, mid, sizeof mid), 0);
  assert_int_equal(a->n_deferred, 1);
  ld_gs_router_validation_deferred(a->r, a->deferred[0]);
  ld_gs_router_validation_deferred(a->r, a->deferred[0]); /* sent once */
  net_run(net);
  for (int i = 1; i <= 4; i++) {
    tally_t t = inbox_tally(&net->nodes[i], 0, mark[i]);
    assert_int_equal(t.msgs, 0);
    assert_int_equal(t.idontwant_ids, i == 1 || i == 3 ? 1 : 0); /* not the source, not 1.1 */
  }
  ld_gs_router_validated(a->r, a->deferred[0], LD_GS_ACCEPT, net->now);
  net_run(net);
  assert_true(delivered(a, mid, sizeof mid));
  for (int i = 1; i <= 4; i++) {
    assert_int_equal(inbox_tally(&net->nodes[i], 0, mark[i]).msgs, i == 2 ? 0 : 1);
  }
  net_free(net);
}

/* Copies of a seen message are handled from a scan of the RPC (no unpacking): they count as
 * duplicates, are not delivered again, and a copy that is not StrictNoSign or comes with other
 * parts still takes the full path (penalised / processed). */
static void seen_copies_take_the_short_path(void **state) {
  (void)state;
  net_t *net = idontwant_net();
  ld_gs_router_t *r = net->nodes[0].r;
  uint8_t data[100];
  memset(data, 'S', sizeof data);
  assert_int_equal(raw_publish(net, 2, 0, T, data, sizeof data), 0);
  assert_true(delivered(&net->nodes[0], data, sizeof data));
  size_t before = net->nodes[0].n_delivered;
  assert_int_equal(raw_publish(net, 1, 0, T, data, sizeof data), 0);
  assert_int_equal(raw_publish(net, 3, 0, T, data, sizeof data), 0);
  assert_int_equal(net->nodes[0].n_delivered, before);
  ld_gs_topic_stats_t ts;
  assert_int_equal(ld_gs_router_topic_stats(r, T, &ts), 0);
  assert_int_equal(ts.duplicates, 2);
  assert_int_equal(ts.msgs_in, 3);
  /* the same copy with a GRAFT in the RPC: full path, still a duplicate */
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  ld_gs_out_msg(&o, T, data, sizeof data);
  ld_gs_out_graft(&o, T);
  assert_int_equal(raw_send(net, 1, 0, &o), 0);
  ld_gs_out_clear(&o);
  assert_int_equal(ld_gs_router_topic_stats(r, T, &ts), 0);
  assert_int_equal(ts.duplicates, 3);
  /* a signed copy (from + seqno, protobuf fields 1 and 3) is refused and penalised */
  uint8_t signed_rpc[200];
  size_t n = 0;
  uint8_t msg[160];
  size_t m = 0;
  msg[m++] = 0x0a, msg[m++] = 2, msg[m++] = 'f', msg[m++] = 'r'; /* from */
  msg[m++] = 0x12, msg[m++] = sizeof data;                       /* data */
  memcpy(msg + m, data, sizeof data), m += sizeof data;
  msg[m++] = 0x1a, msg[m++] = 1, msg[m++] = 7;    /* seqno */
  msg[m++] = 0x22, msg[m++] = (uint8_t)strlen(T); /* topic */
  memcpy(msg + m, T, strlen(T)), m += strlen(T);
  signed_rpc[n++] = 0x12, signed_rpc[n++] = (uint8_t)m;
  memcpy(signed_rpc + n, msg, m), n += m;
  double score0 = ld_gs_router_peer_score(r, 3, net->now);
  assert_int_equal(ld_gs_router_handle_rpc(r, 3, signed_rpc, n, net->now), 0);
  ld_gs_stats_t st;
  ld_gs_router_stats(r, &st);
  assert_int_equal(st.msgs_invalid_sign, 1);
  assert_true(ld_gs_router_peer_score(r, 3, net->now) < score0);
  net_free(net);
}

/* Several hops (30 nodes, 6 links each), so that IDONTWANT can overtake later copies. */
static uint64_t network_copies(ld_gs_proto_t proto) {
  enum { N = 30, K = 3 };
  net_t *net = net_new(N, 0, 6);
  for (int i = 0; i < N; i++) {
    for (int k = 1; k <= K; k++) {
      link_nodes(net, i, (i + k) % N, proto);
    }
  }
  subscribe_all(net, T);
  tick(net, 5);
  net->msgs_delivered = 0;
  static uint8_t data[16384]; /* long enough to transmit that IDONTWANT goes out at once */
  for (int m = 0; m < 30; m++) {
    memset(data, m, sizeof data);
    ld_gs_router_publish(net->nodes[m % N].r, T, data, sizeof data, net->now);
    net_run(net);
    for (int i = 0; i < N; i++) {
      assert_int_equal(delivered(&net->nodes[i], data, sizeof data), i != m % N);
    }
  }
  uint64_t copies = net->msgs_delivered;
  net_free(net);
  return copies;
}

static void idontwant_reduces_copies_in_a_network(void **state) {
  (void)state;
  uint64_t with = network_copies(LD_GS_PROTO_WAKU_RELAY);
  uint64_t without = network_copies(LD_GS_PROTO_MESHSUB_11);
  print_message("message copies received: %llu with IDONTWANT, %llu without\n",
                (unsigned long long)with, (unsigned long long)without);
  assert_true(with < without);
}

static void invalid_sender_loses_score_is_pruned_then_disconnected(void **state) {
  (void)state;
  net_t *net = net_new(1, 2, 7);
  node_t *a = &net->nodes[0];
  a->reject_prefix = "bad";
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  link_nodes(net, 0, 2, LD_GS_PROTO_WAKU_RELAY);
  ld_gs_router_subscribe(a->r, T, net->now);
  raw_join(net, 1, 0, T, true);
  raw_join(net, 2, 0, T, true);
  assert_true(ld_gs_router_in_mesh(a->r, T, 1));
  assert_int_equal(raw_publish(net, 1, 0, T, "bad 0", 5), 0);
  assert_false(delivered(a, (const uint8_t *)"bad 0", 5));
  assert_true(ld_gs_router_peer_score(a->r, 1, net->now) < 0);
  size_t mark = net->nodes[1].n_inbox;
  tick(net, 1);
  assert_false(ld_gs_router_in_mesh(a->r, T, 1)); /* pruned */
  assert_true(ld_gs_router_in_mesh(a->r, T, 2));
  assert_int_equal(inbox_tally(&net->nodes[1], 0, mark).prunes, 1);
  assert_int_equal(a->n_disc, 0);
  for (int i = 1; i <= 10; i++) {
    char d[16];
    int n = snprintf(d, sizeof d, "bad %d", i);
    raw_publish(net, 1, 0, T, d, (size_t)n);
  }
  assert_true(ld_gs_router_peer_score(a->r, 1, net->now) < P.graylist_threshold);
  tick(net, 1);
  assert_int_equal(a->n_disc, 1);
  assert_int_equal(a->disconnected[0], 1);
  assert_int_equal(a->disc_reason[0], LD_GS_DISCONNECT_GRAYLISTED);
  ld_gs_stats_t st;
  ld_gs_router_stats(a->r, &st);
  uint64_t gray = st.rpcs_graylisted;
  assert_int_equal(raw_publish(net, 1, 0, T, "fine", 4), 0); /* ignored now */
  assert_false(delivered(a, (const uint8_t *)"fine", 4));
  ld_gs_router_stats(a->r, &st);
  assert_int_equal(st.rpcs_graylisted, gray + 1);
  assert_int_equal(st.disconnects, 1);
  /* the honest peer is unaffected and keeps relaying */
  assert_int_equal(raw_publish(net, 2, 0, T, "fine", 4), 0);
  assert_true(delivered(a, (const uint8_t *)"fine", 4));
  ld_gs_topic_stats_t ts;
  ld_gs_router_topic_stats(a->r, T, &ts);
  assert_int_equal(ts.rejected, 11);
  /* the score survives a reconnect */
  ld_gs_router_remove_peer(a->r, 1, net->now);
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  assert_true(ld_gs_router_peer_score(a->r, 1, net->now) < P.graylist_threshold);
  net_free(net);
}

static void ihave_floods_are_bounded(void **state) {
  (void)state;
  net_t *net = net_new(1, 1, 8);
  ld_gs_router_t *r = net->nodes[0].r;
  node_t *raw = &net->nodes[1];
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  ld_gs_router_subscribe(r, T, net->now);
  raw_join(net, 1, 0, T, false);
  tick(net, 1);
  enum { IDS = 4000 };
  uint8_t *ids = malloc(3 * IDS * 32);
  for (uint32_t i = 0; i < 3 * IDS; i++) {
    memset(ids + i * 32, 0x5a, 32);
    memcpy(ids + i * 32, &i, sizeof i);
  }
  size_t mark = raw->n_inbox;
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  for (int k = 0; k < 3; k++) { /* three 136 KB IHAVE RPCs in one heartbeat */
    ld_gs_out_ihave(&o, T, ids + (size_t)k * IDS * 32, IDS);
    assert_int_equal(raw_send(net, 1, 0, &o), 0);
  }
  tally_t t = inbox_tally(raw, 0, mark);
  assert_int_equal(t.iwant_ids, P.max_ihave_len); /* 12,000 advertised, 5,000 asked */
  /* next heartbeat: the same flood with 20 one-id IHAVE entries; only 10 are looked at */
  tick(net, 1);
  mark = raw->n_inbox;
  for (uint32_t i = 0; i < 20; i++) {
    uint8_t fresh[32];
    memset(fresh, 0x77, 32);
    memcpy(fresh, &i, sizeof i);
    ld_gs_out_ihave(&o, T, fresh, 1);
  }
  raw_send(net, 1, 0, &o);
  t = inbox_tally(raw, 0, mark);
  assert_int_equal(t.iwant_ids, P.max_ihave_messages);
  ld_gs_stats_t st;
  ld_gs_router_stats(r, &st);
  assert_true(st.ctrl_dropped >= 10);
  /* promises not kept cost behaviour penalties after the follow-up time */
  tick(net, 4);
  ld_gs_router_stats(r, &st);
  assert_true(st.broken_promises >= 2);
  assert_true(ld_gs_router_peer_score(r, 1, net->now) < 0);
  ld_gs_out_clear(&o);
  free(ids);
  net_free(net);
}

static void ten_thousand_ihave_ids_in_one_rpc(void **state) {
  (void)state;
  ld_gs_params_t saved = P;
  P.max_rpc_size = 1 << 20; /* a go-style 1 MiB frame can carry 10,000 ids */
  net_t *net = net_new(1, 1, 9);
  ld_gs_router_subscribe(net->nodes[0].r, T, net->now);
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  raw_join(net, 1, 0, T, false);
  enum { IDS = 10000 };
  uint8_t *ids = malloc(IDS * 32);
  for (uint32_t i = 0; i < IDS; i++) {
    memset(ids + i * 32, 0x33, 32);
    memcpy(ids + i * 32, &i, sizeof i);
  }
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  ld_gs_out_ihave(&o, T, ids, IDS);
  size_t mark = net->nodes[1].n_inbox;
  assert_int_equal(raw_send(net, 1, 0, &o), 0);
  tally_t t = inbox_tally(&net->nodes[1], 0, mark);
  assert_int_equal(t.iwant_ids, P.max_ihave_len);
  ld_gs_out_clear(&o);
  free(ids);
  net_free(net);
  P = saved;
}

static void graft_prune_iwant_idontwant_floods_are_bounded(void **state) {
  (void)state;
  net_t *net = net_new(1, 1, 10);
  ld_gs_router_t *r = net->nodes[0].r;
  node_t *raw = &net->nodes[1];
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  ld_gs_router_subscribe(r, T, net->now);
  raw_join(net, 1, 0, T, false);
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  /* 3,000 GRAFTs for our topic and 5,000 for other topics, in one RPC */
  static char topics[5000][24];
  for (int i = 0; i < 3000; i++) {
    ld_gs_out_graft(&o, T);
  }
  for (int i = 0; i < 5000; i++) {
    snprintf(topics[i], sizeof topics[i], "/flood/%d", i);
    ld_gs_out_graft(&o, topics[i]);
  }
  assert_int_equal(raw_send(net, 1, 0, &o), 0);
  ld_gs_stats_t st;
  ld_gs_router_stats(r, &st);
  assert_int_equal(st.graft_in, P.max_graft_per_rpc);
  assert_true(st.ctrl_dropped >= 8000 - P.max_graft_per_rpc);
  assert_int_equal(ld_gs_router_mesh_size(r, T), 1);
  /* 5,000 subscriptions: at most LD_GS_MAX_TOPICS_PER_PEER are remembered */
  for (int i = 0; i < 5000; i++) {
    ld_gs_out_sub(&o, topics[i], true);
  }
  assert_int_equal(raw_send(net, 1, 0, &o), 0);
  size_t known = 0;
  for (int i = 0; i < 5000; i++) {
    known += ld_gs_router_topic_peers(r, topics[i], NULL, 0);
  }
  assert_true(known <= LD_GS_MAX_TOPICS_PER_PEER);
  /* IWANT the same cached message 4,000 times: served at most 3 times */
  uint8_t id[32];
  ld_gs_msg_id((const uint8_t *)"cached", 6, id);
  ld_gs_router_publish(r, T, (const uint8_t *)"cached", 6, net->now);
  net_run(net);
  size_t mark = raw->n_inbox;
  uint8_t *many = malloc(4000 * 32);
  for (int i = 0; i < 4000; i++) {
    memcpy(many + i * 32, id, 32);
  }
  ld_gs_out_iwant(&o, many, 4000);
  assert_int_equal(raw_send(net, 1, 0, &o), 0);
  assert_int_equal(inbox_tally(raw, 0, mark).msgs, P.gossip_retransmission);
  /* 4,000 IDONTWANT ids: at most the per-heartbeat cap are kept */
  for (uint32_t i = 0; i < 4000; i++) {
    memcpy(many + i * 32, &i, sizeof i);
  }
  ld_gs_out_idontwant(&o, many, 4000);
  assert_int_equal(raw_send(net, 1, 0, &o), 0);
  ld_gs_router_stats(r, &st);
  assert_true(st.idontwant_in <= P.max_idontwant_ids_per_heartbeat);
  /* an RPC over the size cap is refused outright */
  uint8_t *huge = calloc(1, P.max_rpc_size + 1);
  assert_int_equal(raw_bytes(net, 1, 0, huge, P.max_rpc_size + 1), LD_ERR_TOO_LARGE);
  free(huge);
  free(many);
  ld_gs_out_clear(&o);
  /* the router still relays */
  net_free(net);
}

/* RPC { publish { <field> data="x" topic=T } } with `field` present but empty. */
static size_t signed_msg(uint8_t *out, uint8_t field_tag) {
  size_t tl = strlen(T), n = 0;
  size_t body = 2 + 3 + 2 + tl;
  out[n++] = 0x12;
  out[n++] = (uint8_t)body;
  out[n++] = field_tag;
  out[n++] = 0x00;
  out[n++] = 0x12;
  out[n++] = 0x01;
  out[n++] = 'x';
  out[n++] = 0x22;
  out[n++] = (uint8_t)tl;
  memcpy(out + n, T, tl);
  return n + tl;
}

static void strict_no_sign_rejections(void **state) {
  (void)state;
  net_t *net = net_new(1, 1, 11);
  node_t *a = &net->nodes[0];
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  ld_gs_router_subscribe(a->r, T, net->now);
  raw_join(net, 1, 0, T, true);
  const uint8_t tags[] = {0x0a /* from */, 0x1a /* seqno */, 0x2a /* signature */, 0x32 /* key */};
  uint8_t buf[64];
  for (size_t i = 0; i < sizeof tags; i++) {
    size_t n = signed_msg(buf, tags[i]);
    assert_int_equal(raw_bytes(net, 1, 0, buf, n), 0);
    assert_false(delivered(a, (const uint8_t *)"x", 1));
  }
  ld_gs_stats_t st;
  ld_gs_router_stats(a->r, &st);
  assert_int_equal(st.msgs_invalid_sign, 4);
  double s = ld_gs_router_peer_score(a->r, 1, net->now);
  assert_true(s < -1500); /* P4: -100 x 4^2 */
  /* the same data without the forbidden fields is still accepted (not marked seen) */
  assert_int_equal(raw_publish(net, 1, 0, T, "x", 1), 0);
  assert_true(delivered(a, (const uint8_t *)"x", 1));
  net_free(net);
}

static void malformed_rpcs_are_named_and_end_in_disconnect(void **state) {
  (void)state;
  net_t *net = net_new(1, 1, 12);
  node_t *a = &net->nodes[0];
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  const uint8_t junk[] = {0x12, 0x7f, 0x01};
  for (uint32_t i = 0; i < P.max_malformed_rpcs; i++) {
    assert_int_equal(raw_bytes(net, 1, 0, junk, sizeof junk), LD_ERR_BAD_PROTOBUF);
  }
  assert_int_equal(a->n_disc, 1);
  assert_int_equal(a->disc_reason[0], LD_GS_DISCONNECT_ABUSE);
  assert_int_equal(raw_bytes(net, 1, 0, junk, sizeof junk), 0); /* ignored from now on */
  assert_int_equal(ld_gs_router_handle_rpc(a->r, 99, junk, 3, net->now), LD_ERR_NOT_FOUND);
  net_free(net);
}

static void publish_results_and_errors(void **state) {
  (void)state;
  net_t *net = net_new(3, 0, 13);
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  link_nodes(net, 0, 2, LD_GS_PROTO_WAKU_RELAY);
  ld_gs_router_t *r = net->nodes[0].r;
  assert_int_equal(ld_gs_router_publish(r, T, (const uint8_t *)"a", 1, net->now), 0); /* nobody */
  subscribe_all(net, T);
  /* published to nobody, so not seen: it goes out once there are peers */
  assert_int_equal(ld_gs_router_publish(r, T, (const uint8_t *)"a", 1, net->now), 2);
  assert_int_equal(ld_gs_router_publish(r, T, (const uint8_t *)"b", 1, net->now), 2);
  assert_int_equal(ld_gs_router_publish(r, T, (const uint8_t *)"b", 1, net->now), LD_ERR_EXISTS);
  assert_int_equal(ld_gs_router_publish(r, "", (const uint8_t *)"c", 1, net->now),
                   LD_ERR_INVALID_ARG);
  uint8_t *big = calloc(1, P.max_rpc_size);
  assert_int_equal(ld_gs_router_publish(r, T, big, P.max_rpc_size - 20, net->now),
                   LD_ERR_TOO_LARGE);
  free(big);
  net_run(net);
  assert_true(delivered(&net->nodes[1], (const uint8_t *)"a", 1));
  assert_true(delivered(&net->nodes[1], (const uint8_t *)"b", 1));
  assert_int_equal(ld_gs_router_subscribe(r, T, net->now), LD_ERR_EXISTS);
  assert_int_equal(ld_gs_router_unsubscribe(r, "/other", net->now), LD_ERR_NOT_FOUND);
  const char *topics[4];
  assert_int_equal(ld_gs_router_topics(r, topics, 4), 1);
  assert_string_equal(topics[0], T);
  assert_int_equal(ld_gs_router_add_peer(r, 1, LD_GS_PROTO_WAKU_RELAY, true, NULL, net->now),
                   LD_ERR_EXISTS);
  net_free(net);
}

static int reach_of(const node_t *n, const char *topic, const char *data, uint64_t now) {
  uint8_t id[32];
  ld_gs_msg_id((const uint8_t *)data, strlen(data), id);
  return ld_gs_router_seen_reach(n->r, topic, id, now);
}

/* The seen cache remembers how many peers a message reached on its topic: the peers we
 * published it to, or those that delivered it (so far, while it is being validated) and those it
 * was forwarded to; nothing for one rejected, seen on another topic, or past the seen TTL. */
static void seen_reach_counts_the_peers_a_message_reached(void **state) {
  (void)state;
  net_t *net = net_new(4, 0, 16);
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  link_nodes(net, 1, 2, LD_GS_PROTO_WAKU_RELAY);
  link_nodes(net, 1, 3, LD_GS_PROTO_WAKU_RELAY);
  subscribe_all(net, T);
  tick(net, 2);
  node_t *src = &net->nodes[0], *mid = &net->nodes[1], *leaf = &net->nodes[2];
  assert_int_equal(ld_gs_router_publish(src->r, T, (const uint8_t *)"m1", 2, net->now), 1);
  assert_int_equal(reach_of(src, T, "m1", net->now), 1);
  assert_int_equal(reach_of(src, "/waku/2/rs/1/1", "m1", net->now), LD_ERR_NOT_FOUND);
  assert_int_equal(reach_of(src, T, "never", net->now), LD_ERR_NOT_FOUND);
  assert_int_equal(reach_of(mid, T, "m1", net->now), LD_ERR_NOT_FOUND); /* not arrived yet */
  net_run(net);
  assert_int_equal(reach_of(mid, T, "m1", net->now), 3);  /* from 0, forwarded to 2 and 3 */
  assert_int_equal(reach_of(leaf, T, "m1", net->now), 1); /* from 1, nobody else to send to */
  assert_int_equal(reach_of(mid, T, "m1", net->now + P.seen_ttl_ms), LD_ERR_NOT_FOUND);

  mid->defer = true;
  ld_gs_router_publish(src->r, T, (const uint8_t *)"m2", 2, net->now);
  ld_gs_router_publish(src->r, T, (const uint8_t *)"m3", 2, net->now);
  net_run(net);
  assert_int_equal(mid->n_deferred, 2);
  assert_int_equal(reach_of(mid, T, "m2", net->now), 1); /* being validated: node 0 has it */
  assert_int_equal(reach_of(mid, "/waku/2/rs/1/1", "m2", net->now), LD_ERR_NOT_FOUND);
  ld_gs_router_validated(mid->r, mid->deferred[0], LD_GS_REJECT, net->now);
  ld_gs_router_validated(mid->r, mid->deferred[1], LD_GS_ACCEPT, net->now);
  assert_int_equal(reach_of(mid, T, "m2", net->now), LD_ERR_NOT_FOUND);
  assert_int_equal(reach_of(mid, T, "m3", net->now), 3);
  assert_int_equal(ld_gs_router_seen_reach(mid->r, NULL, NULL, net->now), LD_ERR_INVALID_ARG);
  net_free(net);
}

/* Messages awaiting validation are capped by bytes: beyond the cap a new one is dropped, and
 * room comes back as validations finish. */
static void pending_validations_are_capped_by_bytes(void **state) {
  (void)state;
  ld_gs_params_t saved = P;
  P.max_pending_validation_bytes = 1000;
  net_t *net = net_new(2, 0, 15);
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  subscribe_all(net, T);
  tick(net, 2);
  node_t *b = &net->nodes[1];
  b->defer = true;
  uint8_t m[3][600];
  for (int i = 0; i < 3; i++)
    memset(m[i], 'a' + i, sizeof m[i]);
  ld_gs_router_publish(net->nodes[0].r, T, m[0], sizeof m[0], net->now);
  ld_gs_router_publish(net->nodes[0].r, T, m[1], sizeof m[1], net->now);
  net_run(net);
  assert_int_equal(b->n_deferred, 1); /* 600 + 600 bytes would pass the cap */
  ld_gs_stats_t st;
  ld_gs_router_stats(b->r, &st);
  assert_int_equal(st.validations_dropped, 1);
  ld_gs_router_validated(b->r, b->deferred[0], LD_GS_ACCEPT, net->now);
  ld_gs_router_publish(net->nodes[0].r, T, m[2], sizeof m[2], net->now);
  net_run(net);
  assert_int_equal(b->n_deferred, 2); /* room again */
  ld_gs_router_validated(b->r, b->deferred[1], LD_GS_ACCEPT, net->now);
  net_run(net);
  assert_true(delivered(b, m[0], sizeof m[0]));
  assert_false(delivered(b, m[1], sizeof m[1]));
  assert_true(delivered(b, m[2], sizeof m[2]));
  net_free(net);
  P = saved;
}

static void validation_is_asynchronous(void **state) {
  (void)state;
  net_t *net = net_new(3, 0, 14);
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  link_nodes(net, 1, 2, LD_GS_PROTO_WAKU_RELAY);
  subscribe_all(net, T);
  tick(net, 2);
  node_t *mid = &net->nodes[1];
  mid->defer = true;
  ld_gs_router_publish(net->nodes[0].r, T, (const uint8_t *)"m1", 2, net->now);
  ld_gs_router_publish(net->nodes[0].r, T, (const uint8_t *)"m2", 2, net->now);
  ld_gs_router_publish(net->nodes[0].r, T, (const uint8_t *)"m3", 2, net->now);
  net_run(net);
  assert_int_equal(mid->n_deferred, 3);
  assert_false(delivered(mid, (const uint8_t *)"m1", 2));
  assert_false(delivered(&net->nodes[2], (const uint8_t *)"m1", 2)); /* not forwarded yet */
  ld_gs_router_validated(mid->r, mid->deferred[0], LD_GS_ACCEPT, net->now);
  ld_gs_router_validated(mid->r, mid->deferred[1], LD_GS_IGNORE, net->now);
  ld_gs_router_validated(mid->r, mid->deferred[2], LD_GS_REJECT, net->now);
  ld_gs_router_validated(mid->r, mid->deferred[2], LD_GS_ACCEPT, net->now); /* stale: no-op */
  net_run(net);
  assert_true(delivered(mid, (const uint8_t *)"m1", 2));
  assert_true(delivered(&net->nodes[2], (const uint8_t *)"m1", 2));
  assert_false(delivered(&net->nodes[2], (const uint8_t *)"m2", 2));
  assert_false(delivered(&net->nodes[2], (const uint8_t *)"m3", 2));
  /* ignore costs nothing, reject costs the propagator P4 */
  double s = ld_gs_router_peer_score(mid->r, 0, net->now);
  assert_true(s < -90 && s > -100); /* -100 for P4, a little back for P1 and P2 */
  ld_gs_topic_stats_t ts;
  ld_gs_router_topic_stats(mid->r, T, &ts);
  assert_int_equal(ts.accepted, 1);
  assert_int_equal(ts.ignored, 1);
  assert_int_equal(ts.rejected, 1);
  net_free(net);
}

static void unsubscribe_prunes_with_backoff(void **state) {
  (void)state;
  net_t *net = net_new(1, 1, 15);
  ld_gs_router_t *r = net->nodes[0].r;
  node_t *raw = &net->nodes[1];
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  raw_join(net, 1, 0, T, false);
  ld_gs_router_subscribe(r, T, net->now);
  net_run(net);
  size_t mark = raw->n_inbox;
  assert_int_equal(net->nodes[0].mesh_joined, 1);
  assert_int_equal(ld_gs_router_unsubscribe(r, T, net->now), 0);
  assert_int_equal(net->nodes[0].mesh_left, 1);
  assert_false(ld_gs_router_subscribed(r, T));
  net_run(net);
  tally_t t = inbox_tally(raw, 0, mark);
  assert_int_equal(t.prunes, 1);
  assert_int_equal(t.last_backoff, 5); /* nwaku's unsubscribe backoff */
  assert_int_equal(t.subs, 1);
  assert_int_equal(ld_gs_router_mesh_size(r, T), 0);
  mark = raw->n_inbox;
  ld_gs_router_subscribe(r, T, net->now);
  net_run(net);
  assert_int_equal(inbox_tally(raw, 0, mark).grafts, 0); /* still backing off */
  tick(net, 8);
  assert_int_equal(inbox_tally(raw, 0, mark).grafts, 1);
  net_free(net);
}

static void fanout_without_flood_publish(void **state) {
  (void)state;
  ld_gs_params_t saved = P;
  P.flood_publish = false;
  enum { N = 10 };
  net_t *net = net_new(N, 0, 16);
  for (int i = 1; i < N; i++) {
    link_nodes(net, 0, i, LD_GS_PROTO_WAKU_RELAY);
  }
  for (int i = 1; i < N; i++) {
    ld_gs_router_subscribe(net->nodes[i].r, T, net->now);
  }
  net_run(net);
  /* node 0 is not subscribed: it publishes to a fanout of D peers */
  assert_int_equal(ld_gs_router_publish(net->nodes[0].r, T, (const uint8_t *)"f1", 2, net->now),
                   (int)P.d);
  assert_int_equal(ld_gs_router_publish(net->nodes[0].r, T, (const uint8_t *)"f2", 2, net->now),
                   (int)P.d);
  net_run(net);
  size_t fanout = 0; /* only node 0's fanout peers have the messages yet */
  for (int i = 1; i < N; i++) {
    fanout += delivered(&net->nodes[i], (const uint8_t *)"f1", 2);
  }
  assert_int_equal(fanout, P.d);
  tick(net, 1);
  assert_true(ld_gs_router_subscribed(net->nodes[0].r, T) == false);
  /* joining takes the fanout peers into the mesh; the others, whose meshes are empty, graft
   * node 0 as soon as its SUBSCRIBE arrives; the heartbeat trims the mesh back below D_hi */
  ld_gs_router_subscribe(net->nodes[0].r, T, net->now);
  net_run(net);
  for (int i = 1; i < N; i++) {
    assert_true(ld_gs_router_in_mesh(net->nodes[0].r, T, (ld_gs_peer_t)i));
  }
  tick(net, 1);
  assert_in_range(ld_gs_router_mesh_size(net->nodes[0].r, T), P.d_lo, P.d_hi);
  net_free(net);
  P = saved;
}

static void output_respects_the_rpc_cap(void **state) {
  (void)state;
  net_t *net = net_new(1, 1, 17);
  ld_gs_router_t *r = net->nodes[0].r;
  node_t *raw = &net->nodes[1];
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  raw_join(net, 1, 0, T, false);
  ld_gs_router_subscribe(r, T, net->now);
  net_run(net);
  uint8_t ids[5][32];
  uint8_t *data = malloc(60 * 1024);
  for (int i = 0; i < 5; i++) {
    memset(data, 'a' + i, 60 * 1024);
    ld_gs_msg_id(data, 60 * 1024, ids[i]);
    assert_int_equal(ld_gs_router_publish(r, T, data, 60 * 1024, net->now), 1);
  }
  net_run(net);
  size_t mark = raw->n_inbox;
  net->max_rpc_seen = 0;
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  ld_gs_out_iwant(&o, &ids[0][0], 5);
  raw_send(net, 1, 0, &o);
  tally_t t = inbox_tally(raw, 0, mark);
  assert_int_equal(t.msgs, 5);
  assert_true(raw->n_inbox - mark >= 3); /* split: two 60 KiB messages per 150 KiB frame */
  assert_true(net->max_rpc_seen <= LD_GS_MAX_RPC_SIZE);
  ld_gs_out_clear(&o);
  free(data);
  net_free(net);
}

static void direct_peers_are_flooded_and_never_grafted(void **state) {
  (void)state;
  net_t *net = net_new(1, 2, 18);
  ld_gs_router_t *r = net->nodes[0].r;
  link_nodes(net, 0, 1, LD_GS_PROTO_WAKU_RELAY);
  link_nodes(net, 0, 2, LD_GS_PROTO_WAKU_RELAY);
  assert_int_equal(ld_gs_router_set_direct(r, 1, true), 0);
  assert_int_equal(ld_gs_router_set_direct(r, 77, true), LD_ERR_NOT_FOUND);
  ld_gs_router_subscribe(r, T, net->now);
  raw_join(net, 1, 0, T, false);
  size_t mark = net->nodes[1].n_inbox;
  raw_join(net, 1, 0, T, true); /* GRAFT from a direct peer: PRUNE */
  assert_int_equal(inbox_tally(&net->nodes[1], 0, mark).prunes, 1);
  tick(net, 3);
  assert_false(ld_gs_router_in_mesh(r, T, 1));
  mark = net->nodes[1].n_inbox;
  assert_int_equal(raw_publish(net, 2, 0, T, "to all", 6), 0);
  assert_int_equal(inbox_tally(&net->nodes[1], 0, mark).msgs, 1);
  net_free(net);
}

/* A peer that subscribes to a topic whose mesh is below D_lo joins the mesh with the SUBSCRIBE,
 * not at the next heartbeat: a message published right after it reaches it through the mesh
 * (flood publish off, so only mesh peers get it). A full mesh takes no one, nor does a peer in
 * PRUNE backoff. */
static void new_subscriber_is_grafted_at_once(void **state) {
  (void)state;
  P.flood_publish = false;
  net_t *net = net_new(1, 6, 19);
  ld_gs_router_t *r = net->nodes[0].r;
  for (int i = 1; i <= 6; i++) {
    link_nodes(net, 0, i, LD_GS_PROTO_WAKU_RELAY);
  }
  ld_gs_router_subscribe(r, T, net->now);
  net_run(net);
  size_t mark = net->nodes[1].n_inbox;
  raw_join(net, 1, 0, T, false);
  assert_true(ld_gs_router_in_mesh(r, T, 1));
  assert_int_equal(inbox_tally(&net->nodes[1], 0, mark).grafts, 1);
  assert_int_equal(ld_gs_router_publish(r, T, (const uint8_t *)"at once", 7, net->now), 1);
  net_run(net);
  assert_int_equal(inbox_tally(&net->nodes[1], 0, mark).msgs, 1);

  for (int i = 2; i <= 4; i++) { /* up to D_lo */
    raw_join(net, i, 0, T, false);
  }
  assert_int_equal(ld_gs_router_mesh_peers(r, T, NULL, 0), P.d_lo);
  mark = net->nodes[5].n_inbox;
  raw_join(net, 5, 0, T, false); /* mesh at D_lo: the heartbeat decides */
  assert_false(ld_gs_router_in_mesh(r, T, 5));
  assert_int_equal(inbox_tally(&net->nodes[5], 0, mark).grafts, 0);

  ld_gs_out_t o; /* peer 1 leaves with PRUNE and comes back within its backoff */
  ld_gs_out_init(&o);
  ld_gs_out_prune(&o, T, true, 60);
  assert_int_equal(raw_send(net, 1, 0, &o), 0);
  ld_gs_out_clear(&o);
  assert_false(ld_gs_router_in_mesh(r, T, 1));
  ld_gs_out_init(&o);
  ld_gs_out_sub(&o, T, false);
  assert_int_equal(raw_send(net, 1, 0, &o), 0);
  ld_gs_out_clear(&o);
  mark = net->nodes[1].n_inbox;
  raw_join(net, 1, 0, T, false);
  assert_false(ld_gs_router_in_mesh(r, T, 1));
  assert_int_equal(inbox_tally(&net->nodes[1], 0, mark).grafts, 0);
  net_free(net);
}

static void params_are_checked(void **state) {
  (void)state;
  ld_gs_params_t p;
  ld_gs_params_nwaku(&p);
  assert_int_equal(ld_gs_params_check(&p), 0);
  assert_int_equal(p.d, 6);
  assert_int_equal(p.d_lo, 4);
  assert_int_equal(p.d_hi, 8);
  assert_int_equal(p.d_score, 6);
  assert_int_equal(p.d_out, 3);
  assert_int_equal(p.mcache_len, 6);
  assert_int_equal(p.mcache_gossip, 3);
  assert_int_equal(p.max_rpc_size, 153600);
  p.d_lo = 7;
  assert_int_equal(ld_gs_params_check(&p), LD_ERR_INVALID_ARG);
  ld_gs_params_nwaku(&p);
  p.graylist_threshold = 0;
  assert_int_equal(ld_gs_params_check(&p), LD_ERR_INVALID_ARG);
  ld_gs_callbacks_t none = {0};
  ld_gs_params_nwaku(&p);
  assert_null(ld_gs_router_new(&p, &none, NULL, 1));
  ld_gs_router_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(mesh_converges_and_every_message_arrives_once, setup),
      cmocka_unit_test_setup(gossip_repairs_a_missed_message, setup),
      cmocka_unit_test_setup(prune_backoff_is_honoured, setup),
      cmocka_unit_test_setup(graft_during_backoff_is_penalised, setup),
      cmocka_unit_test_setup(idontwant_suppresses_the_duplicate, setup),
      cmocka_unit_test_setup(idontwant_is_held_while_validation_is_quick, setup),
      cmocka_unit_test_setup(held_idontwant_goes_out_when_validation_is_deferred, setup),
      cmocka_unit_test_setup(seen_copies_take_the_short_path, setup),
      cmocka_unit_test_setup(idontwant_reduces_copies_in_a_network, setup),
      cmocka_unit_test_setup(invalid_sender_loses_score_is_pruned_then_disconnected, setup),
      cmocka_unit_test_setup(ihave_floods_are_bounded, setup),
      cmocka_unit_test_setup(ten_thousand_ihave_ids_in_one_rpc, setup),
      cmocka_unit_test_setup(graft_prune_iwant_idontwant_floods_are_bounded, setup),
      cmocka_unit_test_setup(strict_no_sign_rejections, setup),
      cmocka_unit_test_setup(malformed_rpcs_are_named_and_end_in_disconnect, setup),
      cmocka_unit_test_setup(publish_results_and_errors, setup),
      cmocka_unit_test_setup(seen_reach_counts_the_peers_a_message_reached, setup),
      cmocka_unit_test_setup(validation_is_asynchronous, setup),
      cmocka_unit_test_setup(pending_validations_are_capped_by_bytes, setup),
      cmocka_unit_test_setup(unsubscribe_prunes_with_backoff, setup),
      cmocka_unit_test_setup(fanout_without_flood_publish, setup),
      cmocka_unit_test_setup(output_respects_the_rpc_cap, setup),
      cmocka_unit_test_setup(direct_peers_are_flooded_and_never_grafted, setup),
      cmocka_unit_test_setup(new_subscriber_is_grafted_at_once, setup),
      cmocka_unit_test_setup(params_are_checked, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
