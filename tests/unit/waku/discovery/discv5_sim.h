/* An in-memory network of discv5 engines with a simulated clock, for the engine tests and the
 * benchmark. Node i lives at 10.(i / 256).(i % 256).1:9000 (a site-local address, which the
 * engines accept from each other and exempt from IP limits); datagrams are delivered in order,
 * each once (or dropped with probability `loss`). Header-only: static functions. */
#ifndef LD_TESTS_DISCV5_SIM_H
#define LD_TESTS_DISCV5_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/crypto.h"
#include "waku/discovery/discv5.h"

#define SIM_PORT 9000

typedef struct sim sim_t;

typedef struct sim_node {
  sim_t *sim;
  size_t idx;
  ld_discv5_t *d;
  ld_privkey_t key;
  ld_enr_t enr;
  uint8_t id[LD_DISCV5_NODE_ID_LEN];
  ld_discv5_addr_t addr;
  bool down; /* drops everything sent to it */
  /* what its events said */
  size_t discovered, added, sessions, lookups_done, pongs, failures, enr_updates;
  uint64_t last_request;
  int last_error;
  ld_discv5_event_t last_pong;
  size_t last_nodes_count;
  ld_enr_t last_nodes[LD_DISCV5_MAX_NODES_RESULT];
  uint8_t last_talkresp[256];
  size_t last_talkresp_len;
  bool talkresp_seen;
} sim_node_t;

typedef struct sim_packet {
  ld_discv5_addr_t from, to;
  size_t len;
  uint8_t data[LD_DISCV5_MAX_PACKET];
} sim_packet_t;

struct sim {
  sim_node_t *nodes;
  size_t n;
  sim_packet_t *queue; /* ring */
  size_t head, len, cap;
  uint64_t now;
  uint64_t delivered, dropped;
  double loss;
  uint64_t rng;
  /* optional hooks */
  void (*on_event)(sim_node_t *n, ld_discv5_event_t *ev);
  bool (*on_packet)(sim_t *s, const sim_packet_t *p); /* false: drop it */
};

static inline void sim_addr(size_t i, ld_discv5_addr_t *a) {
  memset(a, 0, sizeof *a);
  a->ip_len = 4;
  a->ip[0] = 10;
  a->ip[1] = (uint8_t)(i / 256);
  a->ip[2] = (uint8_t)(i % 256);
  a->ip[3] = 1;
  a->port = SIM_PORT;
}

static inline sim_node_t *sim_find(sim_t *s, const ld_discv5_addr_t *a) {
  if (a->ip_len != 4 || a->ip[0] != 10 || a->ip[3] != 1 || a->port != SIM_PORT)
    return NULL;
  size_t i = (size_t)a->ip[1] * 256 + a->ip[2];
  return i < s->n ? &s->nodes[i] : NULL;
}

static inline void sim_send(void *ud, const ld_discv5_addr_t *to, const uint8_t *data, size_t len) {
  sim_node_t *from = ud;
  sim_t *s = from->sim;
  if (s->len == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 1024;
    sim_packet_t *q = malloc(cap * sizeof *q);
    for (size_t i = 0; i < s->len; i++)
      q[i] = s->queue[(s->head + i) % s->cap];
    free(s->queue);
    s->queue = q;
    s->cap = cap;
    s->head = 0;
  }
  sim_packet_t *p = &s->queue[(s->head + s->len++) % s->cap];
  p->from = from->addr;
  p->to = *to;
  p->len = len;
  memcpy(p->data, data, len);
}

static inline void sim_event(void *ud, ld_discv5_event_t *ev) {
  sim_node_t *n = ud;
  switch (ev->type) {
  case LD_DISCV5_EV_DISCOVERED:
    n->discovered++;
    break;
  case LD_DISCV5_EV_NODE_ADDED:
    n->added++;
    break;
  case LD_DISCV5_EV_SESSION:
    n->sessions++;
    break;
  case LD_DISCV5_EV_LOOKUP_DONE:
    n->lookups_done++;
    break;
  case LD_DISCV5_EV_PONG:
    n->pongs++;
    n->last_pong = *ev;
    break;
  case LD_DISCV5_EV_NODES:
    n->last_nodes_count = ev->count;
    if (ev->count > 0)
      memcpy(n->last_nodes, ev->enrs, ev->count * sizeof ev->enrs[0]);
    break;
  case LD_DISCV5_EV_TALKRESP:
    n->talkresp_seen = true;
    n->last_talkresp_len = ev->payload_len < 256 ? ev->payload_len : 256;
    memcpy(n->last_talkresp, ev->payload, n->last_talkresp_len);
    break;
  case LD_DISCV5_EV_REQUEST_FAILED:
    if (getenv("SIM_DEBUG"))
      fprintf(stderr, "node %zu: request %llu failed at %llu: %d\n", n->idx,
              (unsigned long long)ev->request, (unsigned long long)n->sim->now, ev->error);
    n->failures++;
    n->last_error = ev->error;
    break;
  case LD_DISCV5_EV_ENR_UPDATED:
    n->enr_updates++;
    break;
  case LD_DISCV5_EV_TALKREQ:
    break;
  }
  if (n->sim->on_event != NULL)
    n->sim->on_event(n, ev);
}

/* Extra record fields for node i (NULL: none). */
typedef void (*sim_enr_fn)(size_t i, ld_enr_builder_t *b);
static sim_enr_fn g_sim_enr_fields;

/* The record of node i: a deterministic key, `ip`/`udp` of its address (or of `announce`), and
 * what g_sim_enr_fields adds. */
static inline int sim_make_enr(size_t i, uint64_t seed, const ld_discv5_addr_t *announce,
                               ld_privkey_t *key, ld_enr_t *enr) {
  uint8_t secret[32];
  uint64_t words[2] = {seed, i};
  ld_sha256(words, sizeof words, secret);
  int rc = ld_privkey_from_secp256k1(key, secret);
  if (rc != 0)
    return rc;
  ld_enr_builder_t b;
  ld_enr_builder_init(&b, 1);
  ld_enr_builder_set_ip4(&b, announce->ip);
  ld_enr_builder_set_uint(&b, "udp", announce->port);
  if (g_sim_enr_fields != NULL)
    g_sim_enr_fields(i, &b);
  return ld_enr_builder_sign(&b, key, enr);
}

/* Creates n nodes with `cfg` (key and record filled in per node). NULL on failure. */
static inline sim_t *sim_new(size_t n, const ld_discv5_config_t *base, uint64_t seed) {
  sim_t *s = calloc(1, sizeof *s);
  s->nodes = calloc(n, sizeof *s->nodes);
  s->n = n;
  s->rng = seed * 2654435761u + 1;
  ld_discv5_callbacks_t cb = {sim_send, sim_event};
  for (size_t i = 0; i < n; i++) {
    sim_node_t *node = &s->nodes[i];
    node->sim = s;
    node->idx = i;
    sim_addr(i, &node->addr);
    if (sim_make_enr(i, seed, &node->addr, &node->key, &node->enr) != 0)
      return NULL;
    ld_enr_node_id(&node->enr, node->id);
    ld_discv5_config_t cfg = *base;
    cfg.key = &node->key;
    cfg.enr = &node->enr;
    cfg.seed = seed * 1000003u + i;
    node->d = ld_discv5_new(&cfg, &cb, node, s->now);
    if (node->d == NULL)
      return NULL;
  }
  return s;
}

static inline void sim_free(sim_t *s) {
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->n; i++)
    ld_discv5_free(s->nodes[i].d);
  free(s->nodes);
  free(s->queue);
  free(s);
}

static inline double sim_uniform(sim_t *s) {
  s->rng ^= s->rng << 13;
  s->rng ^= s->rng >> 7;
  s->rng ^= s->rng << 17;
  return (double)(s->rng >> 11) / 9007199254740992.0;
}

/* Delivers every queued datagram, including those sent while delivering. */
static inline void sim_deliver(sim_t *s) {
  sim_packet_t p;
  while (s->len > 0) {
    p = s->queue[s->head];
    s->head = (s->head + 1) % s->cap;
    s->len--;
    sim_node_t *to = sim_find(s, &p.to);
    if (to == NULL || to->down || (s->loss > 0 && sim_uniform(s) < s->loss) ||
        (s->on_packet != NULL && !s->on_packet(s, &p))) {
      s->dropped++;
      continue;
    }
    s->delivered++;
    ld_discv5_receive(to->d, &p.from, p.data, p.len, s->now);
  }
}

/* Runs the network until `until_ms` (absolute), jumping from deadline to deadline. */
static inline void sim_run_until(sim_t *s, uint64_t until_ms) {
  for (;;) {
    sim_deliver(s);
    uint64_t next = UINT64_MAX;
    for (size_t i = 0; i < s->n; i++) {
      uint64_t dl = ld_discv5_next_deadline(s->nodes[i].d);
      if (dl < next)
        next = dl;
    }
    if (next > until_ms) {
      s->now = until_ms;
      return;
    }
    if (next > s->now)
      s->now = next;
    for (size_t i = 0; i < s->n; i++)
      if (ld_discv5_next_deadline(s->nodes[i].d) <= s->now)
        ld_discv5_handle_timeout(s->nodes[i].d, s->now);
  }
}

static inline void sim_run(sim_t *s, uint64_t ms) {
  sim_run_until(s, s->now + ms);
}

#endif
