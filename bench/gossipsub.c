/* Benchmark of the gossipsub router alone: an in-memory network of routers (each dialing 4
 * others) wired through the send callback, with a virtual clock and no sockets, publishing
 * 1 KiB messages round-robin. Measures the engine's cost per delivered message (codec, seen
 * cache, mcache, scoring, forwarding, IDONTWANT, gossip) without transport or crypto.
 *
 *   bench_gossipsub [--nodes N] [--messages M] [--size BYTES] [--rate MSGS_PER_VIRTUAL_S]
 *                   [--proto relay|meshsub11]
 *
 * Deterministic (seeded), so `valgrind --tool=callgrind bench_gossipsub --messages 2000` counts
 * instructions reproducibly. Prints one JSON line. Nothing passes or fails on a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "p2p/gossipsub/router.h"

#define TOPIC "/waku/2/rs/1/0"
#define MAX_NODES 64
#define DIALS 4

typedef struct rec {
  int from, to;
  uint8_t *buf;
  size_t len;
} rec_t;

typedef struct node {
  int idx;
  ld_gs_router_t *r;
  uint64_t delivered;
} node_t;

static node_t nodes[MAX_NODES];
static rec_t *queue;
static size_t q_head, q_tail, q_cap;
static uint64_t rpcs, rpc_bytes, now_ms = 1000;

static void on_send(void *ud, ld_gs_peer_t peer, const uint8_t *rpc, size_t len) {
  node_t *n = ud;
  if (q_tail == q_cap) {
    if (q_head > 0) {
      memmove(queue, queue + q_head, (q_tail - q_head) * sizeof *queue);
      q_tail -= q_head;
      q_head = 0;
    }
    if (q_tail == q_cap) {
      q_cap = q_cap ? q_cap * 2 : 4096;
      queue = realloc(queue, q_cap * sizeof *queue);
      if (queue == NULL) {
        abort();
      }
    }
  }
  rec_t *r = &queue[q_tail++];
  r->from = n->idx;
  r->to = (int)peer;
  r->buf = malloc(len ? len : 1);
  if (r->buf == NULL) {
    abort();
  }
  memcpy(r->buf, rpc, len);
  r->len = len;
  rpcs++;
  rpc_bytes += len;
}

static void on_deliver(void *ud, const char *topic, const uint8_t *data, size_t len,
                       const uint8_t id[32], ld_gs_peer_t from) {
  (void)topic, (void)data, (void)len, (void)id, (void)from;
  ((node_t *)ud)->delivered++;
}

static void run_queue(void) {
  while (q_head < q_tail) {
    rec_t r = queue[q_head++];
    ld_gs_router_handle_rpc(nodes[r.to].r, (ld_gs_peer_t)r.from, r.buf, r.len, now_ms);
    free(r.buf);
  }
  q_head = q_tail = 0;
}

static void heartbeat(int n) {
  now_ms += 1000;
  for (int i = 0; i < n; i++) {
    ld_gs_router_heartbeat(nodes[i].r, now_ms);
  }
  run_queue();
}

static double seconds(const struct timespec *a, const struct timespec *b) {
  return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

typedef struct opts {
  int nodes;
  long messages;
  size_t size;
  long rate;
  ld_gs_proto_t proto;
} opts_t;

static int parse(int argc, char **argv, opts_t *o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--nodes") == 0) {
      o->nodes = atoi(argv[i + 1]);
    } else if (strcmp(argv[i], "--messages") == 0) {
      o->messages = atol(argv[i + 1]);
    } else if (strcmp(argv[i], "--size") == 0) {
      o->size = (size_t)atol(argv[i + 1]);
    } else if (strcmp(argv[i], "--rate") == 0) {
      o->rate = atol(argv[i + 1]);
    } else if (strcmp(argv[i], "--proto") == 0) {
      o->proto =
          strcmp(argv[i + 1], "meshsub11") == 0 ? LD_GS_PROTO_MESHSUB_11 : LD_GS_PROTO_WAKU_RELAY;
    } else {
      return -1;
    }
  }
  return (o->nodes > DIALS && o->nodes <= MAX_NODES && o->messages > 0 && o->size >= 8 &&
          o->rate > 0)
             ? 0
             : -1;
}

static void build(const opts_t *o) {
  ld_gs_params_t p;
  ld_gs_params_nwaku(&p);
  ld_gs_callbacks_t cb = {.send = on_send, .deliver = on_deliver};
  for (int i = 0; i < o->nodes; i++) {
    nodes[i].idx = i;
    nodes[i].r = ld_gs_router_new(&p, &cb, &nodes[i], (uint64_t)i + 1);
    ld_gs_router_subscribe(nodes[i].r, TOPIC, now_ms);
  }
  for (int i = 0; i < o->nodes; i++) {
    for (int k = 1; k <= DIALS; k++) {
      int j = (i + k) % o->nodes;
      char ip[32];
      snprintf(ip, sizeof ip, "10.0.0.%d", j);
      ld_gs_router_add_peer(nodes[i].r, (ld_gs_peer_t)j, o->proto, true, ip, now_ms);
      snprintf(ip, sizeof ip, "10.0.0.%d", i);
      ld_gs_router_add_peer(nodes[j].r, (ld_gs_peer_t)i, o->proto, false, ip, now_ms);
    }
  }
  run_queue();
  for (int h = 0; h < 5; h++) {
    heartbeat(o->nodes);
  }
}

int main(int argc, char **argv) {
  opts_t o = {10, 20000, 1024, 5000, LD_GS_PROTO_WAKU_RELAY};
  if (parse(argc, argv, &o) != 0) {
    fprintf(stderr,
            "usage: %s [--nodes N] [--messages M] [--size B] [--rate R] "
            "[--proto relay|meshsub11]\n",
            argv[0]);
    return 2;
  }
  build(&o);
  uint8_t *data = calloc(1, o.size);
  uint64_t rpcs0 = rpcs, bytes0 = rpc_bytes;
  struct timespec t0, t1;
  clock_t c0 = clock();
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long m = 0; m < o.messages; m++) {
    memcpy(data, &m, sizeof m);
    ld_gs_router_publish(nodes[m % o.nodes].r, TOPIC, data, o.size, now_ms);
    run_queue();
    if ((m + 1) % o.rate == 0) {
      heartbeat(o.nodes);
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double wall = seconds(&t0, &t1);
  double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
  uint64_t delivered = 0;
  for (int i = 0; i < o.nodes; i++) {
    delivered += nodes[i].delivered;
  }
  uint64_t expected = (uint64_t)o.messages * (uint64_t)(o.nodes - 1);
  printf("{\"bench\":\"gossipsub_inmemory\",\"proto\":\"%s\",\"nodes\":%d,\"msg_bytes\":%zu,"
         "\"messages\":%ld,\"deliveries\":%llu,\"complete\":%s,\"msgs_per_s\":%.0f,"
         "\"deliveries_per_s\":%.0f,\"cpu_us_per_delivery\":%.2f,\"rpcs_per_msg\":%.2f,"
         "\"wire_bytes_per_msg\":%.0f}\n",
         o.proto == LD_GS_PROTO_WAKU_RELAY ? "relay" : "meshsub11", o.nodes, o.size, o.messages,
         (unsigned long long)delivered, delivered == expected ? "true" : "false",
         (double)o.messages / wall, (double)delivered / wall, cpu * 1e6 / (double)delivered,
         (double)(rpcs - rpcs0) / (double)o.messages,
         (double)(rpc_bytes - bytes0) / (double)o.messages);
  for (int i = 0; i < o.nodes; i++) {
    ld_gs_router_free(nodes[i].r);
  }
  free(queue);
  free(data);
  return delivered == expected ? 0 : 1;
}
