/* The receive path: packets in, WHOAREYOU challenges, handshakes, and the answers we give. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "crypto/crypto.h"
#include "waku/discovery/discv5_internal.h"

/* ---- challenges ----------------------------------------------------------------------------- */

static void drop_challenge(ld_discv5_t *d, challenge_t *c) {
  ld_timerheap_remove(&d->timers, &c->tm.timer);
  ld_hashmap_remove(d->challenges, c->key.b, PEER_KEY_LEN);
  free(c);
}

void ld_discv5_challenge_expired(ld_discv5_t *d, challenge_t *c) {
  drop_challenge(d, c);
}

/* Answers a packet we cannot decrypt with a WHOAREYOU referencing its nonce. While a challenge
 * is outstanding for the peer, that same packet is sent again (nim-eth and go-ethereum), so a
 * lost WHOAREYOU does not stall the handshake and a flood cannot make us mint challenges. */
static void send_whoareyou(ld_discv5_t *d, const uint8_t *src_id, const ld_discv5_addr_t *from,
                           const uint8_t nonce[LD_DISCV5_NONCE_LEN], uint64_t now) {
  peer_key_t k;
  ld_discv5_peer_key(&k, src_id, from);
  if (!ld_discv5_rate_allow(d, 'W', from, now)) {
    d->stats.whoareyou_rate_limited++;
    return;
  }
  challenge_t *c = ld_hashmap_get(d->challenges, k.b, PEER_KEY_LEN);
  if (c != NULL) {
    ld_discv5_send(d, from, c->packet, sizeof c->packet);
    d->stats.whoareyou_sent++;
    return;
  }
  if (ld_hashmap_size(d->challenges) >= d->cfg.max_challenges)
    return;
  if ((c = calloc(1, sizeof *c)) == NULL)
    return;
  c->tm.kind = TIMER_CHALLENGE;
  c->key = k;
  const ld_discv5_node_t *known = ld_discv5_table_get(d->table, src_id);
  uint64_t seq = 0;
  if (known != NULL && ld_discv5_addr_equal(&known->addr, from)) {
    c->has_pubkey = true;
    memcpy(c->pubkey, known->pubkey, sizeof c->pubkey);
    seq = known->seq;
  }
  uint8_t id_nonce[LD_DISCV5_ID_NONCE_LEN], iv[LD_DISCV5_IV_LEN];
  uint8_t authdata[LD_DISCV5_WHOAREYOU_AUTHDATA_LEN], ad[LD_DISCV5_MAX_AD];
  uint8_t packet[LD_DISCV5_MAX_PACKET];
  size_t len, ad_len;
  ld_random_bytes(id_nonce, sizeof id_nonce);
  ld_random_bytes(iv, sizeof iv);
  ld_discv5_authdata_whoareyou(authdata, id_nonce, seq);
  if (ld_discv5_packet_encode(packet, &len, d->protocol_id, src_id, iv, LD_DISCV5_FLAG_WHOAREYOU,
                              nonce, authdata, sizeof authdata, NULL, NULL, 0, ad, &ad_len) != 0 ||
      len != sizeof c->packet ||
      ld_hashmap_put(d->challenges, c->key.b, PEER_KEY_LEN, c, NULL) != 0) {
    free(c);
    return;
  }
  memcpy(c->packet, packet, len);
  memcpy(c->data, ad, LD_DISCV5_CHALLENGE_LEN);
  if (ld_discv5_arm(d, &c->tm, now + d->cfg.handshake_timeout_ms) != 0) {
    ld_hashmap_remove(d->challenges, c->key.b, PEER_KEY_LEN);
    free(c);
    return;
  }
  ld_discv5_send(d, from, c->packet, len);
  d->stats.whoareyou_sent++;
}

/* ---- answers -------------------------------------------------------------------------------- */

static void reply(ld_discv5_t *d, const uint8_t *to_id, const ld_discv5_addr_t *to,
                  const ld_discv5_msg_t *m) {
  ld_buf_t b;
  ld_buf_init(&b);
  if (ld_discv5_msg_encode(&b, m) == 0)
    ld_discv5_send_message(d, to_id, to, b.data, b.len);
  ld_buf_clear(&b);
}

static void answer_ping(ld_discv5_t *d, const uint8_t *src_id, const ld_discv5_addr_t *from,
                        const ld_discv5_msg_t *ping) {
  ld_discv5_msg_t pong;
  ld_discv5_msg_init(&pong, LD_DISCV5_PONG);
  pong.req_id_len = ping->req_id_len;
  memcpy(pong.req_id, ping->req_id, ping->req_id_len);
  pong.enr_seq = d->enr.seq;
  pong.ip_len = from->ip_len;
  memcpy(pong.ip, from->ip, from->ip_len);
  pong.port = from->port;
  reply(d, src_id, from, &pong);
}

/* Sends records (whole RLP items, ≤ LD_DISCV5_MAX_NODES_RESULT of them) as NODES messages of
 * at most one packet each; an empty answer is one NODES with no record. */
static void send_nodes(ld_discv5_t *d, const uint8_t *to_id, const ld_discv5_addr_t *to,
                       const ld_discv5_msg_t *req, const uint8_t *const *recs, const size_t *lens,
                       size_t n) {
  /* Group records greedily; total (≤ 16) takes one byte, which the size check assumes. */
  size_t group_end[LD_DISCV5_MAX_NODES_RESULT + 1], groups = 0, start = 0, bytes = 0;
  for (size_t i = 0; i < n; i++) {
    if (i > start && ld_discv5_nodes_size(req->req_id_len, 1, bytes + lens[i]) > MAX_MESSAGE_PT) {
      group_end[groups++] = i;
      start = i;
      bytes = 0;
    }
    bytes += lens[i];
  }
  group_end[groups++] = n;
  ld_discv5_msg_t m;
  ld_discv5_msg_init(&m, LD_DISCV5_NODES);
  m.req_id_len = req->req_id_len;
  memcpy(m.req_id, req->req_id, req->req_id_len);
  m.total = groups;
  uint8_t enrs[MAX_MESSAGE_PT];
  start = 0;
  for (size_t g = 0; g < groups; g++) {
    size_t len = 0;
    for (size_t i = start; i < group_end[g]; i++) {
      memcpy(enrs + len, recs[i], lens[i]);
      len += lens[i];
    }
    m.enrs = enrs;
    m.enrs_len = len;
    m.total = groups;
    reply(d, to_id, to, &m);
    start = group_end[g];
  }
}

/* FINDNODE as nim-eth answers it: no distance → an empty answer; distance 0 → our record only;
 * a distance above 256 → an empty answer; else up to 16 seen nodes at those distances. */
static void answer_findnode(ld_discv5_t *d, const uint8_t *src_id, const ld_discv5_addr_t *from,
                            const ld_discv5_msg_t *req, uint64_t now) {
  if (!ld_discv5_rate_allow(d, 'F', from, now)) {
    d->stats.findnode_rate_limited++;
    return;
  }
  d->stats.findnode_answered++;
  const uint8_t *recs[LD_DISCV5_MAX_NODES_RESULT];
  size_t lens[LD_DISCV5_MAX_NODES_RESULT], n = 0;
  bool own = false, invalid = false;
  for (size_t i = 0; i < req->n_distances; i++) {
    own |= req->distances[i] == 0;
    invalid |= req->distances[i] > LD_DISCV5_MAX_DISTANCE;
  }
  if (own) {
    recs[0] = d->enr.raw;
    lens[0] = d->enr.len;
    n = 1;
  } else if (!invalid && req->n_distances > 0) {
    ld_discv5_node_t *nodes[LD_DISCV5_MAX_NODES_RESULT];
    n = ld_discv5_table_at_distances(d->table, req->distances, req->n_distances,
                                     LD_DISCV5_MAX_NODES_RESULT, true, nodes);
    for (size_t i = 0; i < n; i++) {
      recs[i] = nodes[i]->enr;
      lens[i] = nodes[i]->enr_len;
    }
  }
  send_nodes(d, src_id, from, req, recs, lens, n);
}

static void answer_talkreq(ld_discv5_t *d, const uint8_t *src_id, const ld_discv5_addr_t *from,
                           const ld_discv5_msg_t *req) {
  ld_discv5_event_t ev = {.type = LD_DISCV5_EV_TALKREQ,
                          .node_id = src_id,
                          .addr = from,
                          .protocol = req->protocol,
                          .protocol_len = req->protocol_len,
                          .payload = req->payload,
                          .payload_len = req->payload_len};
  ld_discv5_emit(d, &ev);
  ld_discv5_msg_t resp;
  ld_discv5_msg_init(&resp, LD_DISCV5_TALKRESP);
  resp.req_id_len = req->req_id_len;
  memcpy(resp.req_id, req->req_id, req->req_id_len);
  if (ev.reply != NULL && ev.reply_len <= LD_DISCV5_MAX_TALK_PAYLOAD) {
    resp.payload = ev.reply;
    resp.payload_len = ev.reply_len;
  }
  reply(d, src_id, from, &resp);
}

static void handle_message(ld_discv5_t *d, const uint8_t *src_id, const ld_discv5_addr_t *from,
                           const ld_discv5_msg_t *m, uint64_t now) {
  switch (m->type) {
  case LD_DISCV5_PING:
    answer_ping(d, src_id, from, m);
    break;
  case LD_DISCV5_FINDNODE:
    answer_findnode(d, src_id, from, m, now);
    break;
  case LD_DISCV5_TALKREQ:
    answer_talkreq(d, src_id, from, m);
    break;
  case LD_DISCV5_PONG:
  case LD_DISCV5_NODES:
  case LD_DISCV5_TALKRESP:
    ld_discv5_request_answer(d, src_id, from, m, now);
    break;
  }
}

/* Decrypts and decodes the message of a packet with `key`. */
static int open_message(ld_discv5_t *d, const ld_discv5_packet_t *p, const uint8_t *key,
                        uint8_t *pt, ld_discv5_msg_t *m) {
  size_t pt_len;
  int rc = ld_discv5_packet_open(p, key, pt, &pt_len);
  if (rc != 0)
    return rc;
  rc = ld_discv5_msg_decode(m, pt, pt_len);
  if (rc != 0)
    d->stats.dropped_malformed++;
  return rc;
}

/* ---- packets -------------------------------------------------------------------------------- */

static int on_message_packet(ld_discv5_t *d, const ld_discv5_packet_t *p,
                             const ld_discv5_addr_t *from, uint64_t now) {
  session_t *s = ld_discv5_session_get(d, p->src_id, from);
  uint8_t pt[LD_DISCV5_MAX_PACKET];
  ld_discv5_msg_t m;
  int rc = s != NULL ? open_message(d, p, s->read_key, pt, &m) : LD_ERR_DECRYPT;
  if (rc == 0) {
    handle_message(d, p->src_id, from, &m, now);
  } else if (rc == LD_ERR_DECRYPT) {
    /* No session, or the peer lost ours: a new handshake. Not an error of the packet. */
    if (s != NULL)
      d->stats.dropped_undecryptable++;
    send_whoareyou(d, p->src_id, from, p->nonce, now);
    rc = 0;
  }
  return rc;
}

/* Checks a handshake packet against the challenge we sent the peer: the record (if any) is
 * valid and is the sender's, the ID signature is made with the sender's key over our
 * challenge. Fills *enr (when the packet has a record) and the sender's key. */
static int check_handshake(ld_discv5_t *d, const ld_discv5_packet_t *p, const challenge_t *c,
                           ld_enr_t *enr, bool *has_enr, uint8_t pubkey[33]) {
  *has_enr = p->record != NULL;
  if (p->record != NULL) {
    uint8_t id[LD_DISCV5_NODE_ID_LEN];
    int rc = ld_enr_decode(enr, p->record, p->record_len);
    if (rc == 0)
      rc = ld_enr_node_id(enr, id);
    if (rc != 0)
      return rc;
    if (memcmp(id, p->src_id, LD_DISCV5_NODE_ID_LEN) != 0)
      return LD_ERR_PEER_ID_MISMATCH;
    memcpy(pubkey, enr->pubkey, LD_SECP256K1_PUBLIC_LEN);
  } else if (c->has_pubkey) {
    memcpy(pubkey, c->pubkey, LD_SECP256K1_PUBLIC_LEN);
  } else {
    return LD_ERR_MISSING_FIELD; /* we hold no record of the node and it sent none */
  }
  return ld_discv5_id_verify(pubkey, LD_SECP256K1_PUBLIC_LEN, c->data, sizeof c->data,
                             p->eph_pubkey, LD_DISCV5_EPH_KEY_LEN, d->local_id, p->id_signature);
}

/* A node whose handshake carried its record, at the address the packet came from, joins the
 * table and is pinged back (nim-eth: so that it becomes `seen`). */
static void learn_from_handshake(ld_discv5_t *d, const ld_enr_t *enr, const ld_discv5_addr_t *from,
                                 uint64_t now) {
  ld_discv5_node_t n;
  if (ld_discv5_node_from_enr(&n, enr) != 0 || !ld_discv5_addr_equal(&n.addr, from))
    return;
  if (ld_discv5_learn(d, &n, enr, now) == LD_DISCV5_ADDED)
    ld_discv5_schedule_pingback(d, n.id, now);
}

static int on_handshake_packet(ld_discv5_t *d, const ld_discv5_packet_t *p,
                               const ld_discv5_addr_t *from, uint64_t now) {
  peer_key_t k;
  ld_discv5_peer_key(&k, p->src_id, from);
  challenge_t *c = ld_hashmap_get(d->challenges, k.b, PEER_KEY_LEN);
  if (c == NULL)
    return LD_ERR_NOT_FOUND;
  /* The challenge is spent whatever the outcome: one expensive check per WHOAREYOU. */
  ld_timerheap_remove(&d->timers, &c->tm.timer);
  ld_hashmap_remove(d->challenges, k.b, PEER_KEY_LEN);
  ld_enr_t enr;
  ld_discv5_msg_t m;
  uint8_t pubkey[LD_SECP256K1_PUBLIC_LEN], ikey[LD_DISCV5_KEY_LEN], rkey[LD_DISCV5_KEY_LEN];
  uint8_t pt[LD_DISCV5_MAX_PACKET];
  bool has_enr = false;
  int rc = check_handshake(d, p, c, &enr, &has_enr, pubkey);
  if (rc == 0)
    rc = ld_discv5_derive_keys(d->key.secret, p->eph_pubkey, LD_DISCV5_EPH_KEY_LEN, p->src_id,
                               d->local_id, c->data, sizeof c->data, ikey, rkey);
  if (rc == 0)
    rc = open_message(d, p, ikey, pt, &m);
  if (rc == 0)
    rc = ld_discv5_session_put(d, p->src_id, from, ikey, rkey);
  free(c);
  if (rc != 0) {
    d->stats.handshakes_failed++;
    LD_DEBUG("discv5", "handshake failed: %s", ld_errname(rc));
  } else {
    d->stats.handshakes_ok++;
    ld_discv5_event_t ev = {
        .type = LD_DISCV5_EV_SESSION, .node_id = p->src_id, .addr = from, .initiator = false};
    ld_discv5_emit(d, &ev);
    if (has_enr)
      learn_from_handshake(d, &enr, from, now);
    handle_message(d, p->src_id, from, &m, now);
  }
  return rc;
}

static int on_whoareyou_packet(ld_discv5_t *d, const ld_discv5_packet_t *p,
                               const ld_discv5_addr_t *from, uint64_t now) {
  request_t *r = ld_hashmap_get(d->by_nonce, p->nonce, LD_DISCV5_NONCE_LEN);
  if (r == NULL || !ld_discv5_addr_equal(&r->addr, from) || r->handshake_sent) {
    d->stats.unsolicited++;
    return 0;
  }
  ld_discv5_request_whoareyou(d, r, p, from, now);
  return 0;
}

int ld_discv5_recv(ld_discv5_t *d, const ld_discv5_addr_t *from, const uint8_t *data, size_t len,
                   uint64_t now) {
  ld_discv5_packet_t p;
  int rc = ld_discv5_packet_decode(&p, d->protocol_id, d->local_id, data, len);
  if (rc != 0) {
    d->stats.dropped_malformed++;
    return rc;
  }
  if (p.flag == LD_DISCV5_FLAG_MESSAGE)
    return on_message_packet(d, &p, from, now);
  if (p.flag == LD_DISCV5_FLAG_WHOAREYOU)
    return on_whoareyou_packet(d, &p, from, now);
  return on_handshake_packet(d, &p, from, now);
}
