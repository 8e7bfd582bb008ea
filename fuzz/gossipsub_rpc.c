/* Fuzz target: arbitrary bytes as a pubsub RPC into a gossipsub router that has three peers (Waku
 * relay, meshsub 1.0, floodsub), a subscription, a cached message and a pending validation. The
 * same bytes arrive from each peer in turn, with heartbeats in between, so that duplicates,
 * IWANT answers, GRAFT/PRUNE state and expiry paths all run. Every RPC the router emits must fit
 * the size cap and decode again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "p2p/gossipsub/router.h"
#include "p2p/gossipsub/rpc.h"

#define TOPIC "/waku/2/rs/1/0"

typedef struct ctx {
  ld_gs_router_t *r;
  size_t max;
  uint64_t deferred;
  uint64_t now;
} ctx_t;

static void on_send(void *ud, ld_gs_peer_t peer, const uint8_t *rpc, size_t len) {
  ctx_t *c = ud;
  (void)peer;
  if (len > c->max) {
    abort(); /* the outbound cap is an invariant */
  }
  ld_gs_rpc_t *msg = NULL;
  if (ld_gs_rpc_decode(rpc, len, &msg) != 0) {
    abort(); /* we only emit well-formed RPCs */
  }
  ld_gs_rpc_free(msg);
}

/* Verdict from the first data byte: even accept, 1 mod 4 reject, 3 mod 8 ignore, else later. */
static void on_validate(void *ud, uint64_t vid, ld_gs_peer_t from, const char *topic,
                        const uint8_t *data, size_t len, const uint8_t id[32]) {
  ctx_t *c = ud;
  (void)from, (void)topic, (void)id;
  uint8_t b = len ? data[0] : 0;
  if ((b & 1) == 0) {
    ld_gs_router_validated(c->r, vid, LD_GS_ACCEPT, c->now);
  } else if ((b & 3) == 1) {
    ld_gs_router_validated(c->r, vid, LD_GS_REJECT, c->now);
  } else if ((b & 7) == 3) {
    ld_gs_router_validated(c->r, vid, LD_GS_IGNORE, c->now);
  } else {
    c->deferred = vid;
  }
}

static void on_deliver(void *ud, const char *topic, const uint8_t *data, size_t len,
                       const uint8_t id[32], ld_gs_peer_t from) {
  (void)ud, (void)topic, (void)data, (void)len, (void)id, (void)from;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_gs_params_t p;
  ld_gs_params_nwaku(&p);
  ctx_t c = {.max = p.max_rpc_size, .now = 1000};
  ld_gs_callbacks_t cb = {on_send, on_validate, on_deliver, NULL, NULL};
  c.r = ld_gs_router_new(&p, &cb, &c, 7);
  if (c.r == NULL) {
    abort();
  }
  ld_gs_router_subscribe(c.r, TOPIC, c.now);
  ld_gs_router_add_peer(c.r, 1, LD_GS_PROTO_WAKU_RELAY, true, "10.0.0.1", c.now);
  ld_gs_router_add_peer(c.r, 2, LD_GS_PROTO_MESHSUB_10, false, "10.0.0.2", c.now);
  ld_gs_router_add_peer(c.r, 3, LD_GS_PROTO_FLOODSUB, false, NULL, c.now);
  ld_gs_router_heartbeat(c.r, c.now);
  ld_gs_router_publish(c.r, TOPIC, (const uint8_t *)"hello", 5, c.now);
  for (ld_gs_peer_t peer = 1; peer <= 3; peer++) {
    ld_gs_router_handle_rpc(c.r, peer, data, size, c.now);
    c.now += 1000;
    ld_gs_router_heartbeat(c.r, c.now);
  }
  if (c.deferred != 0) {
    ld_gs_router_validated(c.r, c.deferred, LD_GS_ACCEPT, c.now);
  }
  c.now += 130000; /* past the seen TTL, the promises and the backoffs */
  ld_gs_router_heartbeat(c.r, c.now);
  ld_gs_router_remove_peer(c.r, 2, c.now);
  ld_gs_router_handle_rpc(c.r, 1, data, size, c.now);
  ld_gs_router_unsubscribe(c.r, TOPIC, c.now);
  ld_gs_router_free(c.r);
  return 0;
}
