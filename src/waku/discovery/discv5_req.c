/* Our requests: sending (with a session, or starting a handshake and queueing behind it),
 * answering WHOAREYOU, matching answers, checking NODES records, timeouts. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "crypto/crypto.h"
#include "waku/discovery/discv5_internal.h"

/* node ID ‖ request ID without its leading zero bytes. */
static size_t response_key(uint8_t key[RESPONSE_KEY_MAX], const uint8_t *node_id,
                           const uint8_t *req_id, size_t len) {
  while (len > 0 && req_id[0] == 0) {
    req_id++;
    len--;
  }
  memcpy(key, node_id, LD_DISCV5_NODE_ID_LEN);
  memcpy(key + LD_DISCV5_NODE_ID_LEN, req_id, len);
  return LD_DISCV5_NODE_ID_LEN + len;
}

static void set_nonce(ld_discv5_t *d, request_t *r, const uint8_t nonce[LD_DISCV5_NONCE_LEN]) {
  if (r->has_nonce)
    ld_hashmap_remove(d->by_nonce, r->nonce, LD_DISCV5_NONCE_LEN);
  memcpy(r->nonce, nonce, LD_DISCV5_NONCE_LEN);
  r->has_nonce = ld_hashmap_put(d->by_nonce, r->nonce, LD_DISCV5_NONCE_LEN, r, NULL) == 0;
}

/* ---- sending -------------------------------------------------------------------------------- */

static void send_with_session(ld_discv5_t *d, request_t *r, session_t *s) {
  uint8_t iv[LD_DISCV5_IV_LEN], nonce[LD_DISCV5_NONCE_LEN], out[LD_DISCV5_MAX_PACKET];
  size_t len;
  ld_random_bytes(iv, sizeof iv);
  ld_discv5_session_nonce(s, nonce);
  if (ld_discv5_packet_encode(out, &len, d->protocol_id, r->node_id, iv, LD_DISCV5_FLAG_MESSAGE,
                              nonce, d->local_id, LD_DISCV5_NODE_ID_LEN, s->write_key, r->msg,
                              r->msg_len, NULL, NULL) != 0)
    return;
  set_nonce(d, r, nonce);
  ld_discv5_send(d, &r->addr, out, len);
}

/* No session yet: random content the peer cannot decrypt, to which it answers WHOAREYOU. */
static void send_random(ld_discv5_t *d, request_t *r) {
  uint8_t iv[LD_DISCV5_IV_LEN], nonce[LD_DISCV5_NONCE_LEN], filler[RANDOM_MESSAGE_LEN];
  uint8_t out[LD_DISCV5_MAX_PACKET];
  size_t len;
  ld_random_bytes(iv, sizeof iv);
  ld_random_bytes(nonce, sizeof nonce);
  ld_random_bytes(filler, sizeof filler);
  if (ld_discv5_packet_encode(out, &len, d->protocol_id, r->node_id, iv, LD_DISCV5_FLAG_MESSAGE,
                              nonce, d->local_id, LD_DISCV5_NODE_ID_LEN, NULL, filler,
                              sizeof filler, NULL, NULL) != 0)
    return;
  set_nonce(d, r, nonce);
  ld_discv5_send(d, &r->addr, out, len);
}

static handshake_t *handshake_of(ld_discv5_t *d, const request_t *r) {
  peer_key_t k;
  ld_discv5_peer_key(&k, r->node_id, &r->addr);
  return ld_hashmap_get(d->handshakes, k.b, PEER_KEY_LEN);
}

/* Sends `r` now, or queues it behind the handshake under way with its peer, or starts one. */
static void send_request(ld_discv5_t *d, request_t *r) {
  session_t *s = ld_discv5_session_get(d, r->node_id, &r->addr);
  if (s != NULL) {
    send_with_session(d, r, s);
    return;
  }
  handshake_t *h = handshake_of(d, r);
  if (h != NULL) {
    r->queued = true;
    r->queue_next = NULL;
    if (h->queue_tail)
      h->queue_tail->queue_next = r;
    else
      h->queue_head = r;
    h->queue_tail = r;
    h->queued++;
    return;
  }
  h = calloc(1, sizeof *h);
  if (h != NULL) {
    ld_discv5_peer_key(&h->key, r->node_id, &r->addr);
    h->first = r;
    if (ld_hashmap_put(d->handshakes, h->key.b, PEER_KEY_LEN, h, NULL) != 0) {
      free(h);
      h = NULL;
    }
  }
  send_random(d, r);
}

/* A request ID of 8 random bytes, the first one nonzero (@chainsafe/discv5 mirrors IDs as
 * integers, dropping leading zeros), unique among ours to that node. */
static void new_req_id(ld_discv5_t *d, request_t *r) {
  uint8_t key[RESPONSE_KEY_MAX];
  do {
    ld_random_bytes(r->req_id, LD_DISCV5_REQ_ID_MAX);
    r->req_id[0] |= 0x01;
    r->req_id_len = LD_DISCV5_REQ_ID_MAX;
  } while (ld_hashmap_contains(d->by_response, key,
                               response_key(key, r->node_id, r->req_id, r->req_id_len)));
}

static void request_release(request_t *r) {
  free(r->msg);
  free(r->distances);
  free(r->found);
  free(r);
}

static int fill_request(ld_discv5_t *d, request_t *r, const ld_discv5_msg_t *m) {
  ld_discv5_msg_t copy = *m;
  ld_buf_t b;
  new_req_id(d, r);
  copy.req_id_len = r->req_id_len;
  memcpy(copy.req_id, r->req_id, r->req_id_len);
  ld_buf_init(&b);
  int rc = ld_discv5_msg_encode(&b, &copy);
  if (rc == 0 && b.len > MAX_REQUEST_PT)
    rc = LD_ERR_TOO_LARGE;
  if (rc != 0) {
    ld_buf_clear(&b);
    return rc;
  }
  r->msg = b.data;
  r->msg_len = b.len;
  if (m->type == LD_DISCV5_FINDNODE) {
    r->distances = malloc(m->n_distances * sizeof *r->distances + 1);
    if (r->distances == NULL)
      return LD_ERR_NOMEM;
    memcpy(r->distances, m->distances, m->n_distances * sizeof *r->distances);
    r->n_distances = m->n_distances;
  }
  return 0;
}

int ld_discv5_request_new(ld_discv5_t *d, request_owner_t owner, const ld_discv5_node_t *to,
                          const ld_discv5_msg_t *m, uint64_t now, request_t **out) {
  if (d->n_requests >= d->cfg.max_requests)
    return LD_ERR_LIMIT;
  request_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return LD_ERR_NOMEM;
  r->tm.kind = TIMER_REQUEST;
  r->owner = owner;
  r->handle = d->next_handle++;
  r->type = m->type;
  memcpy(r->node_id, to->id, LD_DISCV5_NODE_ID_LEN);
  memcpy(r->pubkey, to->pubkey, LD_SECP256K1_PUBLIC_LEN);
  r->addr = to->addr;
  handshake_t *h = handshake_of(d, r);
  if (h != NULL && h->queued >= LD_DISCV5_MAX_QUEUED) {
    free(r);
    return LD_ERR_LIMIT;
  }
  uint8_t key[RESPONSE_KEY_MAX];
  int rc = fill_request(d, r, m);
  if (rc == 0 &&
      ld_hashmap_put(d->by_response, key, response_key(key, r->node_id, r->req_id, r->req_id_len),
                     r, NULL) != 0)
    rc = LD_ERR_NOMEM;
  if (rc == 0 && ld_discv5_arm(d, &r->tm, now + d->cfg.request_timeout_ms) != 0) {
    ld_hashmap_remove(d->by_response, key, response_key(key, r->node_id, r->req_id, r->req_id_len));
    rc = LD_ERR_NOMEM;
  }
  if (rc != 0) {
    request_release(r);
    return rc;
  }
  d->n_requests++;
  d->stats.requests_sent++;
  send_request(d, r);
  if (out != NULL)
    *out = r;
  return 0;
}

/* ---- WHOAREYOU ------------------------------------------------------------------------------ */

/* Sends the requests that waited for the handshake with r's peer, now that a session exists. */
static void flush_queue(ld_discv5_t *d, const request_t *r) {
  handshake_t *h = handshake_of(d, r);
  if (h == NULL)
    return;
  ld_hashmap_remove(d->handshakes, h->key.b, PEER_KEY_LEN);
  request_t *q = h->queue_head;
  free(h);
  while (q != NULL) {
    request_t *next = q->queue_next;
    q->queued = false;
    q->queue_next = NULL;
    send_request(d, q);
    q = next;
  }
}

/* Builds the handshake packet that answers challenge `p` with r's message: a fresh ephemeral
 * key, our ID signature, the new session keys, our record if the challenge holds an older one. */
static int build_handshake(ld_discv5_t *d, request_t *r, const ld_discv5_packet_t *p,
                           const ld_discv5_addr_t *from, uint8_t *out, size_t *len,
                           uint8_t nonce[LD_DISCV5_NONCE_LEN]) {
  uint8_t eph[LD_SECP256K1_SECRET_LEN], eph_pub[LD_SECP256K1_PUBLIC_LEN], sig[LD_DISCV5_SIG_LEN];
  uint8_t ikey[LD_DISCV5_KEY_LEN], rkey[LD_DISCV5_KEY_LEN], iv[LD_DISCV5_IV_LEN];
  uint8_t authdata[LD_DISCV5_MAX_PACKET];
  ld_secp256k1_generate(eph);
  int rc = ld_secp256k1_public(eph, eph_pub);
  if (rc == 0)
    rc = ld_discv5_id_sign(d->key.secret, p->ad, p->ad_len, eph_pub, sizeof eph_pub, r->node_id,
                           sig);
  if (rc == 0)
    rc = ld_discv5_derive_keys(eph, r->pubkey, sizeof r->pubkey, d->local_id, r->node_id, p->ad,
                               p->ad_len, ikey, rkey);
  memset(eph, 0, sizeof eph);
  if (rc != 0)
    return rc;
  bool with_record = p->enr_seq < d->enr.seq;
  int alen =
      ld_discv5_authdata_handshake(authdata, sizeof authdata, d->local_id, sig, eph_pub,
                                   with_record ? d->enr.raw : NULL, with_record ? d->enr.len : 0);
  if (alen < 0)
    return alen;
  if ((rc = ld_discv5_session_put(d, r->node_id, from, rkey, ikey)) != 0)
    return rc;
  ld_discv5_session_nonce(ld_discv5_session_get(d, r->node_id, from), nonce);
  ld_random_bytes(iv, sizeof iv);
  return ld_discv5_packet_encode(out, len, d->protocol_id, r->node_id, iv, LD_DISCV5_FLAG_HANDSHAKE,
                                 nonce, authdata, (size_t)alen, ikey, r->msg, r->msg_len, NULL,
                                 NULL);
}

void ld_discv5_request_whoareyou(ld_discv5_t *d, request_t *r, const ld_discv5_packet_t *p,
                                 const ld_discv5_addr_t *from, uint64_t now) {
  (void)now;
  uint8_t out[LD_DISCV5_MAX_PACKET], nonce[LD_DISCV5_NONCE_LEN];
  size_t len;
  int rc = build_handshake(d, r, p, from, out, &len, nonce);
  if (rc != 0) {
    LD_DEBUG("discv5", "cannot answer WHOAREYOU: %s", ld_errname(rc));
    return;
  }
  r->handshake_sent = true;
  set_nonce(d, r, nonce);
  ld_discv5_send(d, from, out, len);
  ld_discv5_event_t ev = {
      .type = LD_DISCV5_EV_SESSION, .node_id = r->node_id, .addr = from, .initiator = true};
  ld_discv5_emit(d, &ev);
  flush_queue(d, r);
}

/* ---- completion ----------------------------------------------------------------------------- */

static void unlink_request(ld_discv5_t *d, request_t *r) {
  uint8_t key[RESPONSE_KEY_MAX];
  ld_timerheap_remove(&d->timers, &r->tm.timer);
  ld_hashmap_remove(d->by_response, key, response_key(key, r->node_id, r->req_id, r->req_id_len));
  if (r->has_nonce)
    ld_hashmap_remove(d->by_nonce, r->nonce, LD_DISCV5_NONCE_LEN);
  d->n_requests--;
}

/* Takes r out of its peer's handshake queue, or, when it started the handshake, ends the
 * handshake and hands back the requests that waited behind it (to fail with it). */
static request_t *leave_handshake(ld_discv5_t *d, request_t *r) {
  handshake_t *h = handshake_of(d, r);
  if (h == NULL)
    return NULL;
  if (h->first == r) {
    request_t *waiting = h->queue_head;
    ld_hashmap_remove(d->handshakes, h->key.b, PEER_KEY_LEN);
    free(h);
    return waiting;
  }
  if (!r->queued)
    return NULL;
  request_t **pp = &h->queue_head;
  while (*pp != NULL && *pp != r)
    pp = &(*pp)->queue_next;
  if (*pp == r) {
    *pp = r->queue_next;
    if (h->queue_tail == r) {
      h->queue_tail = h->queue_head;
      while (h->queue_tail != NULL && h->queue_tail->queue_next != NULL)
        h->queue_tail = h->queue_tail->queue_next;
    }
    h->queued--;
  }
  r->queued = false;
  return NULL;
}

static void fetch_newer_record(ld_discv5_t *d, const uint8_t *node_id, uint64_t seq, uint64_t now) {
  ld_discv5_node_t *n = ld_discv5_table_get(d->table, node_id);
  if (n == NULL || seq <= n->seq)
    return;
  ld_discv5_msg_t m;
  ld_discv5_msg_init(&m, LD_DISCV5_FINDNODE);
  m.n_distances = 1;
  m.distances[0] = 0;
  ld_discv5_request_new(d, OWNER_ENR_FETCH, n, &m, now, NULL);
}

static void report_user(ld_discv5_t *d, request_t *r, int err, const ld_discv5_msg_t *m) {
  ld_discv5_event_t ev = {.request = r->handle, .node_id = r->node_id, .addr = &r->addr};
  if (err != 0) {
    ev.type = LD_DISCV5_EV_REQUEST_FAILED;
    ev.error = err;
  } else if (r->type == LD_DISCV5_PING) {
    ev.type = LD_DISCV5_EV_PONG;
    ev.enr_seq = m->enr_seq;
    ev.observed.ip_len = m->ip_len;
    memcpy(ev.observed.ip, m->ip, m->ip_len);
    ev.observed.port = m->port;
  } else if (r->type == LD_DISCV5_FINDNODE) {
    ev.type = LD_DISCV5_EV_NODES;
    ev.enrs = r->found;
    ev.count = r->n_found;
  } else {
    ev.type = LD_DISCV5_EV_TALKRESP;
    ev.payload = m->payload;
    ev.payload_len = m->payload_len;
  }
  ld_discv5_emit(d, &ev);
}

/* Ends a request: `err` 0 with the final answer `m` (PONG, TALKRESP, or the last NODES; NULL
 * for NODES cut short by the timeout), or the failure. The node is marked seen, or replaced. */
static void complete(ld_discv5_t *d, request_t *r, int err, const ld_discv5_msg_t *m,
                     uint64_t now) {
  unlink_request(d, r);
  request_t *waiting = leave_handshake(d, r);
  if (err == 0) {
    ld_discv5_table_set_seen(d->table, r->node_id);
  } else {
    ld_discv5_table_replace(d->table, r->node_id);
  }
  if (err == 0 && r->type == LD_DISCV5_PING) {
    ld_discv5_addr_t observed = {.ip_len = m->ip_len, .port = m->port};
    memcpy(observed.ip, m->ip, m->ip_len);
    ld_discv5_vote(d, r->node_id, &observed, now);
    fetch_newer_record(d, r->node_id, m->enr_seq, now);
  }
  if (r->owner == OWNER_USER)
    report_user(d, r, err, m);
  else if (r->owner == OWNER_LOOKUP)
    ld_discv5_lookup_answered(d, r->lookup, r->node_id, err == 0, now);
  request_release(r);
  while (waiting != NULL) {
    request_t *next = waiting->queue_next;
    waiting->queued = false;
    waiting->queue_next = NULL;
    if (err == 0)
      send_request(d, waiting);
    else
      complete(d, waiting, err, NULL, now);
    waiting = next;
  }
}

void ld_discv5_request_expired(ld_discv5_t *d, request_t *r, uint64_t now) {
  bool partial = r->type == LD_DISCV5_FINDNODE && r->received > 0;
  if (!partial)
    d->stats.requests_timed_out++;
  complete(d, r, partial ? 0 : LD_ERR_TIMEOUT, NULL, now);
}

/* ---- NODES ---------------------------------------------------------------------------------- */

/* nim-eth's validIp: a public address, or one of the sender's own class. */
static bool valid_ip(const ld_discv5_addr_t *sender, const ld_discv5_addr_t *a) {
  if (ld_discv5_addr_is_public(a))
    return true;
  return (ld_discv5_addr_is_loopback(a) && ld_discv5_addr_is_loopback(sender)) ||
         (ld_discv5_addr_is_site_local(a) && ld_discv5_addr_is_site_local(sender));
}

static bool distance_requested(const request_t *r, int dist) {
  for (size_t i = 0; i < r->n_distances; i++)
    if (r->distances[i] == dist)
      return true;
  return false;
}

static bool already_seen(const request_t *r, const uint8_t *id) {
  for (uint32_t i = 0; i < r->n_seen; i++)
    if (memcmp(r->seen[i], id, LD_DISCV5_NODE_ID_LEN) == 0)
      return true;
  return false;
}

/* One record of a NODES answer to r: verified (or known byte for byte), with an endpoint, at a
 * requested distance from the responder, not a duplicate, at a plausible address. */
static int check_record(ld_discv5_t *d, const request_t *r, const uint8_t *rec, size_t len,
                        ld_enr_t *enr, ld_discv5_node_t *n) {
  int rc = ld_discv5_check_record(d, rec, len, enr, n);
  if (rc != 0)
    return rc;
  if (!valid_ip(&r->addr, &n->addr))
    return LD_ERR_UNREACHABLE;
  if (!distance_requested(r, ld_discv5_log_distance(n->id, r->node_id)))
    return LD_ERR_PROTOCOL;
  return already_seen(r, n->id) ? LD_ERR_EXISTS : 0;
}

static void deliver_record(ld_discv5_t *d, request_t *r, const ld_enr_t *enr,
                           const ld_discv5_node_t *n, uint64_t now) {
  if (r->owner == OWNER_LOOKUP) {
    ld_discv5_lookup_nodes(d, r->lookup, enr, n, now);
  } else if (r->owner == OWNER_ENR_FETCH) {
    if (memcmp(n->id, r->node_id, LD_DISCV5_NODE_ID_LEN) == 0)
      ld_discv5_learn(d, n, enr, now);
  } else if (r->owner == OWNER_USER) {
    if (r->found == NULL &&
        (r->found = malloc(LD_DISCV5_MAX_NODES_RESULT * sizeof *r->found)) == NULL)
      return;
    r->found[r->n_found++] = *enr;
  }
}

static void on_nodes(ld_discv5_t *d, request_t *r, const ld_discv5_msg_t *m, uint64_t now) {
  if (r->received++ == 0) {
    r->total = m->total == 0 ? 1 : m->total;
    if (r->total > LD_DISCV5_MAX_NODES_RESULT)
      r->total = LD_DISCV5_MAX_NODES_RESULT;
  }
  ld_cursor_t list;
  const uint8_t *rec;
  size_t len;
  ld_enr_t enr;
  ld_discv5_node_t n;
  ld_cursor_init(&list, m->enrs, m->enrs_len);
  while (ld_discv5_nodes_next(&list, &rec, &len) == 0) {
    if (r->processed >= LD_DISCV5_MAX_NODES_RESULT) {
      d->stats.nodes_records_dropped++;
      continue;
    }
    r->processed++;
    if (check_record(d, r, rec, len, &enr, &n) != 0) {
      d->stats.nodes_records_dropped++;
      continue;
    }
    memcpy(r->seen[r->n_seen++], n.id, LD_DISCV5_NODE_ID_LEN);
    if (memcmp(n.id, d->local_id, LD_DISCV5_NODE_ID_LEN) != 0)
      deliver_record(d, r, &enr, &n, now);
  }
  if (r->received >= r->total)
    complete(d, r, 0, m, now);
}

static ld_discv5_msg_type_t answer_type(ld_discv5_msg_type_t request) {
  return request == LD_DISCV5_PING       ? LD_DISCV5_PONG
         : request == LD_DISCV5_FINDNODE ? LD_DISCV5_NODES
                                         : LD_DISCV5_TALKRESP;
}

void ld_discv5_request_answer(ld_discv5_t *d, const uint8_t *src_id, const ld_discv5_addr_t *from,
                              const ld_discv5_msg_t *m, uint64_t now) {
  uint8_t key[RESPONSE_KEY_MAX];
  request_t *r =
      ld_hashmap_get(d->by_response, key, response_key(key, src_id, m->req_id, m->req_id_len));
  if (r == NULL || !ld_discv5_addr_equal(&r->addr, from)) {
    d->stats.unsolicited++;
    return;
  }
  if (m->type != answer_type(r->type))
    complete(d, r, LD_ERR_PROTOCOL, NULL, now);
  else if (m->type == LD_DISCV5_NODES)
    on_nodes(d, r, m, now);
  else
    complete(d, r, 0, m, now);
}

void ld_discv5_request_free_all(ld_discv5_t *d) {
  ld_hashmap_iter_t it = {0};
  void *val;
  while (ld_hashmap_next(d->by_response, &it, NULL, NULL, &val)) {
    request_t *r = val;
    ld_timerheap_remove(&d->timers, &r->tm.timer);
    request_release(r);
  }
  ld_hashmap_clear(d->by_response, NULL);
  ld_hashmap_clear(d->by_nonce, NULL);
  d->n_requests = 0;
}

/* ---- requests from outside ------------------------------------------------------------------ */

int ld_discv5_ping_node(ld_discv5_t *d, request_owner_t owner, const ld_discv5_node_t *n,
                        uint64_t now) {
  ld_discv5_msg_t m;
  ld_discv5_msg_init(&m, LD_DISCV5_PING);
  m.enr_seq = d->enr.seq;
  return ld_discv5_request_new(d, owner, n, &m, now, NULL);
}

static int user_request(ld_discv5_t *d, const ld_enr_t *enr, const ld_discv5_msg_t *m, uint64_t now,
                        uint64_t *handle) {
  ld_discv5_node_t n;
  request_t *r;
  int rc = ld_discv5_node_from_enr(&n, enr);
  if (rc == 0)
    rc = ld_discv5_request_new(d, OWNER_USER, &n, m, now, &r);
  if (rc == 0 && handle != NULL)
    *handle = r->handle;
  return rc;
}

int ld_discv5_ping(ld_discv5_t *d, const ld_enr_t *enr, uint64_t now_ms, uint64_t *handle) {
  ld_discv5_msg_t m;
  ld_discv5_msg_init(&m, LD_DISCV5_PING);
  m.enr_seq = d->enr.seq;
  return user_request(d, enr, &m, now_ms, handle);
}

int ld_discv5_findnode(ld_discv5_t *d, const ld_enr_t *enr, const uint16_t *distances, size_t n,
                       uint64_t now_ms, uint64_t *handle) {
  if (n == 0 || n > LD_DISCV5_MAX_DISTANCES)
    return LD_ERR_INVALID_ARG;
  ld_discv5_msg_t *m = calloc(1, sizeof *m);
  if (m == NULL)
    return LD_ERR_NOMEM;
  m->type = LD_DISCV5_FINDNODE;
  m->n_distances = n;
  memcpy(m->distances, distances, n * sizeof *distances);
  int rc = user_request(d, enr, m, now_ms, handle);
  free(m);
  return rc;
}

int ld_discv5_talkreq(ld_discv5_t *d, const ld_enr_t *enr, const uint8_t *protocol,
                      size_t protocol_len, const uint8_t *request, size_t request_len,
                      uint64_t now_ms, uint64_t *handle) {
  ld_discv5_msg_t m;
  ld_discv5_msg_init(&m, LD_DISCV5_TALKREQ);
  m.protocol = protocol;
  m.protocol_len = protocol_len;
  m.payload = request;
  m.payload_len = request_len;
  return user_request(d, enr, &m, now_ms, handle);
}
