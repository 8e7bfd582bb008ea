/* Fuzz target: NODES answers as the discv5 engine receives them. Two engines, A and B, share a
 * session (a real handshake, once). For each input A asks B a FINDNODE — a request of its own
 * for all distances (first byte even) or the requests of a lookup of a target at distance 256 from
 * B (odd) — and B answers it, over
 * the session, with a NODES message whose total is the second byte and whose record list is the
 * rest of the input (items as they are: A must check every one). Then the clock moves past every
 * timeout, so each input starts from the same kind of state; the table, the sessions and the
 * caches stay within their bounds across inputs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "crypto/crypto.h"
#include "waku/discovery/discv5.h"
#include "waku/discovery/discv5_internal.h"

#define MAX_CAPTURED 64

typedef struct captured {
  size_t len;
  uint8_t data[LD_DISCV5_MAX_PACKET];
} captured_t;

typedef struct peer {
  ld_discv5_t *d;
  ld_privkey_t key;
  ld_enr_t enr;
  uint8_t id[32];
  ld_discv5_addr_t addr;
  captured_t out[MAX_CAPTURED];
  size_t n_out;
} peer_t;

static peer_t g_a, g_b;
static uint64_t g_now = 1000;

static void capture(void *ud, const ld_discv5_addr_t *to, const uint8_t *data, size_t len) {
  peer_t *p = ud;
  (void)to;
  if (p->n_out < MAX_CAPTURED) {
    p->out[p->n_out].len = len;
    memcpy(p->out[p->n_out].data, data, len);
    p->n_out++;
  }
}

static void make_peer(peer_t *p, uint8_t key_byte, uint8_t ip_last) {
  uint8_t secret[32];
  memset(secret, key_byte, sizeof secret);
  ld_enr_builder_t b;
  ld_enr_builder_init(&b, 1);
  p->addr.ip_len = 4;
  p->addr.ip[0] = 10;
  p->addr.ip[3] = ip_last;
  p->addr.port = 9000;
  if (ld_privkey_from_secp256k1(&p->key, secret) != 0 || ld_enr_builder_set_ip4(&b, p->addr.ip) ||
      ld_enr_builder_set_uint(&b, "udp", 9000) || ld_enr_builder_sign(&b, &p->key, &p->enr) ||
      ld_enr_node_id(&p->enr, p->id))
    abort();
  ld_discv5_config_t cfg;
  ld_discv5_config_default(&cfg);
  cfg.key = &p->key;
  cfg.enr = &p->enr;
  cfg.findnode_burst = 1000000; /* B answers every input */
  ld_discv5_callbacks_t cb = {capture, NULL};
  if ((p->d = ld_discv5_new(&cfg, &cb, p, g_now)) == NULL)
    abort();
}

/* Delivers what each peer sent to the other, until both are quiet. */
static void exchange(void) {
  while (g_a.n_out > 0 || g_b.n_out > 0) {
    peer_t *from = g_a.n_out > 0 ? &g_a : &g_b, *to = from == &g_a ? &g_b : &g_a;
    captured_t c = from->out[0];
    memmove(&from->out[0], &from->out[1], (from->n_out - 1) * sizeof from->out[0]);
    from->n_out--;
    ld_discv5_receive(to->d, &from->addr, c.data, c.len, g_now);
  }
}

static void init(void) {
  static int done;
  if (done)
    return;
  make_peer(&g_a, 0x11, 1);
  make_peer(&g_b, 0x22, 2);
  if (ld_discv5_add_enr(g_a.d, &g_b.enr, true, g_now) < 0 ||
      ld_discv5_ping(g_a.d, &g_b.enr, g_now, NULL) != 0)
    abort();
  exchange();
  if (ld_discv5_sessions(g_a.d) != 1 || ld_discv5_sessions(g_b.d) != 1)
    abort();
  done = 1;
}

/* B's reading of the FINDNODE A just sent: its request ID. */
static int read_request(const captured_t *c, ld_discv5_msg_t *m) {
  ld_discv5_packet_t p;
  uint8_t pt[LD_DISCV5_MAX_PACKET];
  size_t pt_len;
  session_t *s = ld_discv5_session_get(g_b.d, g_a.id, &g_a.addr);
  if (s == NULL ||
      ld_discv5_packet_decode(&p, LD_DISCV5_PROTOCOL_ID_WAKU, g_b.id, c->data, c->len) != 0 ||
      ld_discv5_packet_open(&p, s->read_key, pt, &pt_len) != 0 ||
      ld_discv5_msg_decode(m, pt, pt_len) != 0 || m->type != LD_DISCV5_FINDNODE)
    return -1;
  return 0;
}

static void answer(const ld_discv5_msg_t *req, const uint8_t *data, size_t size) {
  ld_discv5_msg_t m;
  ld_discv5_msg_init(&m, LD_DISCV5_NODES);
  m.req_id_len = req->req_id_len;
  memcpy(m.req_id, req->req_id, req->req_id_len);
  m.total = data[0];
  m.enrs = data + 1;
  m.enrs_len = size - 1;
  ld_buf_t b;
  ld_buf_init(&b);
  if (ld_discv5_msg_encode(&b, &m) == 0)
    ld_discv5_send_message(g_b.d, g_a.id, &g_a.addr, b.data, b.len);
  ld_buf_clear(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  init();
  if (size < 2)
    return 0;
  bool lookup = (data[0] & 1) != 0;
  data++;
  size--;
  g_a.n_out = g_b.n_out = 0;
  if (lookup) {
    /* At distance 256 from B: its FINDNODE asks 256, 255 and 254, where most records are. */
    uint8_t target[32];
    memcpy(target, g_b.id, sizeof target);
    target[0] ^= 0x80;
    target[31] ^= data[0];
    ld_discv5_lookup(g_a.d, target, g_now, NULL);
  } else {
    uint16_t all[LD_DISCV5_MAX_DISTANCE];
    for (int i = 0; i < LD_DISCV5_MAX_DISTANCE; i++)
      all[i] = (uint16_t)(LD_DISCV5_MAX_DISTANCE - i);
    ld_discv5_findnode(g_a.d, &g_b.enr, all, LD_DISCV5_MAX_DISTANCE, g_now, NULL);
  }
  /* Answer every FINDNODE that went to B (lookups may ask others: those stay unanswered). */
  size_t n = g_a.n_out;
  captured_t *sent = malloc(n * sizeof *sent + 1);
  memcpy(sent, g_a.out, n * sizeof *sent);
  g_a.n_out = 0;
  for (size_t i = 0; i < n; i++) {
    ld_discv5_msg_t req;
    if (read_request(&sent[i], &req) == 0) {
      answer(&req, data, size);
      for (size_t j = 0; j < g_b.n_out; j++)
        ld_discv5_receive(g_a.d, &g_b.addr, g_b.out[j].data, g_b.out[j].len, g_now);
      g_b.n_out = 0;
    }
  }
  free(sent);
  /* Past every timeout; what the engines send then is dropped. */
  g_now += 10000;
  ld_discv5_handle_timeout(g_a.d, g_now);
  ld_discv5_handle_timeout(g_b.d, g_now);
  g_a.n_out = g_b.n_out = 0;
  if (ld_discv5_requests(g_a.d) > 256 || ld_discv5_table_size(ld_discv5_table(g_a.d)) > 6144)
    abort();
  return 0;
}
