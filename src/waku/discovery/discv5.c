#include "waku/discovery/discv5.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "crypto/crypto.h"
#include "waku/discovery/discv5_internal.h"

/* ---- configuration -------------------------------------------------------------------------- */

void ld_discv5_config_default(ld_discv5_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->protocol_id = LD_DISCV5_PROTOCOL_ID_WAKU;
  ld_discv5_table_config_default(&cfg->table);
  cfg->max_sessions = 256;
  cfg->max_challenges = 1024;
  cfg->max_requests = 256;
  cfg->max_lookups = 16;
  cfg->max_rate_entries = 4096;
  cfg->max_verified = 512;
  cfg->request_timeout_ms = 4000;
  cfg->handshake_timeout_ms = 2000;
  cfg->revalidate_max_ms = 10000;
  cfg->ping_back_max_ms = 5000;
  cfg->refresh_interval_ms = 300000;
  cfg->ip_vote_threshold = 10;
  cfg->ip_majority_interval_ms = 300000;
  cfg->whoareyou_rate = 20;
  cfg->whoareyou_burst = 40;
  cfg->findnode_rate = 20;
  cfg->findnode_burst = 40;
}

static bool config_valid(const ld_discv5_config_t *c) {
  return c->protocol_id != NULL && strlen(c->protocol_id) == LD_DISCV5_PROTOCOL_ID_LEN &&
         c->key != NULL && c->key->type == LD_KEY_SECP256K1 && c->enr != NULL &&
         c->max_sessions > 0 && c->max_challenges > 0 && c->max_requests > 0 &&
         c->max_lookups > 0 && c->max_rate_entries > 0 && c->request_timeout_ms > 0 &&
         c->handshake_timeout_ms > 0 && c->revalidate_max_ms > 0 && c->refresh_interval_ms > 0 &&
         c->ip_vote_threshold > 0 && c->whoareyou_burst > 0 && c->findnode_burst > 0 &&
         memcmp(c->enr->pubkey, c->key->pub, LD_SECP256K1_PUBLIC_LEN) == 0;
}

/* ---- randomness (xoshiro256**, seeded through splitmix64) ----------------------------------- */

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

uint64_t ld_discv5_rand(ld_discv5_t *d) {
  uint64_t *s = d->rng;
  uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

int ld_discv5_arm(ld_discv5_t *d, timed_t *tm, uint64_t deadline) {
  return ld_timerheap_add(&d->timers, &tm->timer, deadline);
}

static void arm_revalidation(ld_discv5_t *d, uint64_t now) {
  ld_discv5_arm(d, &d->revalidate_timer, now + ld_discv5_rand(d) % d->cfg.revalidate_max_ms);
}

static bool maps_ok(const ld_discv5_t *d) {
  return d->sessions && d->challenges && d->by_nonce && d->by_response && d->handshakes &&
         d->rates && d->votes && d->verified && d->table;
}

ld_discv5_t *ld_discv5_new(const ld_discv5_config_t *cfg, const ld_discv5_callbacks_t *cb, void *ud,
                           uint64_t now_ms) {
  if (cb == NULL || cb->send == NULL || !config_valid(cfg))
    return NULL;
  ld_discv5_t *d = calloc(1, sizeof *d);
  if (d == NULL)
    return NULL;
  d->cfg = *cfg;
  memcpy(d->protocol_id, cfg->protocol_id, LD_DISCV5_PROTOCOL_ID_LEN);
  d->key = *cfg->key;
  d->enr = *cfg->enr;
  d->cfg.key = &d->key;
  d->cfg.enr = &d->enr;
  d->cfg.protocol_id = d->protocol_id;
  d->cb = *cb;
  d->ud = ud;
  uint64_t seed = cfg->seed;
  for (int i = 0; i < 4; i++)
    d->rng[i] = splitmix64(&seed);
  d->next_handle = 1;
  ld_list_init(&d->sessions_lru);
  ld_list_init(&d->rates_lru);
  ld_list_init(&d->verified_lru);
  ld_timerheap_init(&d->timers);
  d->revalidate_timer.kind = TIMER_REVALIDATE;
  d->refresh_timer.kind = TIMER_REFRESH;
  d->last_lookup_ms = now_ms;
  if (ld_enr_node_id(&d->enr, d->local_id) != 0) {
    free(d);
    return NULL;
  }
  d->table = ld_discv5_table_new(d->local_id, &cfg->table);
  d->sessions = ld_hashmap_new(64);
  d->challenges = ld_hashmap_new(16);
  d->by_nonce = ld_hashmap_new(64);
  d->by_response = ld_hashmap_new(64);
  d->handshakes = ld_hashmap_new(16);
  d->rates = ld_hashmap_new(64);
  d->votes = ld_hashmap_new(16);
  d->verified = ld_hashmap_new(64);
  if (!maps_ok(d) || ld_discv5_arm(d, &d->refresh_timer, now_ms + cfg->refresh_interval_ms) != 0) {
    ld_discv5_free(d);
    return NULL;
  }
  arm_revalidation(d, now_ms);
  return d;
}

static void free_challenge(void *p) {
  free(p);
}

void ld_discv5_free(ld_discv5_t *d) {
  if (d == NULL)
    return;
  ld_discv5_lookup_free_all(d);
  ld_discv5_request_free_all(d);
  /* Pingbacks are only in the timer heap. */
  ld_timer_t *t;
  while ((t = ld_timerheap_peek(&d->timers)) != NULL) {
    ld_timerheap_remove(&d->timers, t);
    if (((timed_t *)t)->kind == TIMER_PINGBACK)
      free(t);
  }
  ld_timerheap_clear(&d->timers);
  ld_hashmap_free(d->sessions, free);
  ld_hashmap_free(d->challenges, free_challenge);
  ld_hashmap_free(d->by_nonce, NULL);
  ld_hashmap_free(d->by_response, NULL);
  ld_hashmap_free(d->handshakes, free);
  ld_hashmap_free(d->rates, free);
  ld_hashmap_free(d->votes, free);
  ld_hashmap_free(d->verified, free);
  ld_discv5_table_free(d->table);
  free(d);
}

/* ---- output --------------------------------------------------------------------------------- */

void ld_discv5_emit(ld_discv5_t *d, ld_discv5_event_t *ev) {
  if (d->cb.event != NULL)
    d->cb.event(d->ud, ev);
}

void ld_discv5_send(ld_discv5_t *d, const ld_discv5_addr_t *to, const uint8_t *data, size_t len) {
  d->stats.packets_out++;
  d->stats.bytes_out += len;
  d->cb.send(d->ud, to, data, len);
}

/* ---- sessions (LRU) ------------------------------------------------------------------------- */

void ld_discv5_peer_key(peer_key_t *k, const uint8_t *id, const ld_discv5_addr_t *a) {
  memset(k, 0, sizeof *k);
  memcpy(k->b, id, LD_DISCV5_NODE_ID_LEN);
  k->b[LD_DISCV5_NODE_ID_LEN] = a->ip_len;
  memcpy(k->b + LD_DISCV5_NODE_ID_LEN + 1, a->ip, a->ip_len);
  k->b[PEER_KEY_LEN - 2] = (uint8_t)(a->port >> 8);
  k->b[PEER_KEY_LEN - 1] = (uint8_t)a->port;
}

session_t *ld_discv5_session_get(ld_discv5_t *d, const uint8_t *id, const ld_discv5_addr_t *a) {
  peer_key_t k;
  ld_discv5_peer_key(&k, id, a);
  session_t *s = ld_hashmap_get(d->sessions, k.b, PEER_KEY_LEN);
  if (s != NULL)
    ld_list_move_front(&d->sessions_lru, &s->lru);
  return s;
}

int ld_discv5_session_put(ld_discv5_t *d, const uint8_t *id, const ld_discv5_addr_t *a,
                          const uint8_t read_key[LD_DISCV5_KEY_LEN],
                          const uint8_t write_key[LD_DISCV5_KEY_LEN]) {
  session_t *s = ld_discv5_session_get(d, id, a);
  if (s == NULL) {
    if (ld_hashmap_size(d->sessions) >= d->cfg.max_sessions) {
      session_t *old = LD_CONTAINER_OF(ld_list_last(&d->sessions_lru), session_t, lru);
      ld_link_remove(&old->lru);
      ld_hashmap_remove(d->sessions, old->key.b, PEER_KEY_LEN);
      free(old);
    }
    s = calloc(1, sizeof *s);
    if (s == NULL)
      return LD_ERR_NOMEM;
    ld_discv5_peer_key(&s->key, id, a);
    if (ld_hashmap_put(d->sessions, s->key.b, PEER_KEY_LEN, s, NULL) != 0) {
      free(s);
      return LD_ERR_NOMEM;
    }
    ld_list_push_front(&d->sessions_lru, &s->lru);
  }
  memcpy(s->read_key, read_key, LD_DISCV5_KEY_LEN);
  memcpy(s->write_key, write_key, LD_DISCV5_KEY_LEN);
  s->counter = 0;
  return 0;
}

/* A 32-bit message counter and 64 random bits (discv5-theory.md "Session Cache"). */
void ld_discv5_session_nonce(session_t *s, uint8_t nonce[LD_DISCV5_NONCE_LEN]) {
  uint32_t c = s->counter++;
  nonce[0] = (uint8_t)(c >> 24);
  nonce[1] = (uint8_t)(c >> 16);
  nonce[2] = (uint8_t)(c >> 8);
  nonce[3] = (uint8_t)c;
  ld_random_bytes(nonce + 4, LD_DISCV5_NONCE_LEN - 4);
}

int ld_discv5_send_message(ld_discv5_t *d, const uint8_t *id, const ld_discv5_addr_t *a,
                           const uint8_t *pt, size_t pt_len) {
  session_t *s = ld_discv5_session_get(d, id, a);
  if (s == NULL)
    return LD_ERR_NOT_FOUND;
  uint8_t iv[LD_DISCV5_IV_LEN], nonce[LD_DISCV5_NONCE_LEN], out[LD_DISCV5_MAX_PACKET];
  size_t len;
  ld_random_bytes(iv, sizeof iv);
  ld_discv5_session_nonce(s, nonce);
  int rc = ld_discv5_packet_encode(out, &len, d->protocol_id, id, iv, LD_DISCV5_FLAG_MESSAGE, nonce,
                                   d->local_id, LD_DISCV5_NODE_ID_LEN, s->write_key, pt, pt_len,
                                   NULL, NULL);
  if (rc == 0)
    ld_discv5_send(d, a, out, len);
  return rc;
}

/* ---- rate limits (token buckets per source IP, LRU-bounded) ---------------------------------- */

static rate_entry_t *rate_entry(ld_discv5_t *d, const uint8_t *key, size_t klen, uint64_t burst,
                                uint64_t now) {
  rate_entry_t *e = ld_hashmap_get(d->rates, key, klen);
  if (e != NULL) {
    ld_list_move_front(&d->rates_lru, &e->lru);
    return e;
  }
  if (ld_hashmap_size(d->rates) >= d->cfg.max_rate_entries) {
    /* the stalest IP starts over with a full bucket */
    e = LD_CONTAINER_OF(ld_list_last(&d->rates_lru), rate_entry_t, lru);
    ld_link_remove(&e->lru);
    ld_hashmap_remove(d->rates, e->key, e->key_len);
  } else if ((e = malloc(sizeof *e)) == NULL) {
    return NULL;
  }
  memcpy(e->key, key, klen);
  e->key_len = (uint8_t)klen;
  e->milli_tokens = burst * 1000;
  e->last_ms = now;
  if (ld_hashmap_put(d->rates, e->key, klen, e, NULL) != 0) {
    free(e);
    return NULL;
  }
  ld_list_push_front(&d->rates_lru, &e->lru);
  return e;
}

bool ld_discv5_rate_allow(ld_discv5_t *d, char kind, const ld_discv5_addr_t *a, uint64_t now) {
  uint8_t key[17];
  uint64_t rate = kind == 'W' ? d->cfg.whoareyou_rate : d->cfg.findnode_rate;
  uint64_t burst = kind == 'W' ? d->cfg.whoareyou_burst : d->cfg.findnode_burst;
  key[0] = (uint8_t)kind;
  memcpy(key + 1, a->ip, a->ip_len);
  rate_entry_t *e = rate_entry(d, key, 1 + (size_t)a->ip_len, burst, now);
  if (e == NULL)
    return false;
  if (now > e->last_ms) {
    /* rate tokens per second = rate milli-tokens per millisecond */
    uint64_t refill = (now - e->last_ms) * rate;
    e->milli_tokens =
        e->milli_tokens + refill > burst * 1000 ? burst * 1000 : e->milli_tokens + refill;
    e->last_ms = now;
  }
  if (e->milli_tokens < 1000)
    return false;
  e->milli_tokens -= 1000;
  return true;
}

/* ---- verified records (LRU) ----------------------------------------------------------------- */

static const ld_discv5_node_t *verified_get(ld_discv5_t *d, const uint8_t *rec, size_t len) {
  verified_t *v = ld_hashmap_get(d->verified, rec, len);
  if (v != NULL)
    ld_list_move_front(&d->verified_lru, &v->lru);
  return v != NULL ? &v->node : NULL;
}

static void verified_put(ld_discv5_t *d, const ld_discv5_node_t *n) {
  verified_t *v;
  if (d->cfg.max_verified == 0)
    return;
  if (ld_hashmap_size(d->verified) >= d->cfg.max_verified) {
    v = LD_CONTAINER_OF(ld_list_last(&d->verified_lru), verified_t, lru);
    ld_link_remove(&v->lru);
    ld_hashmap_remove(d->verified, v->node.enr, v->node.enr_len);
  } else if ((v = malloc(sizeof *v)) == NULL) {
    return;
  }
  v->node = *n;
  v->node.seen = v->node.bootstrap = false;
  if (ld_hashmap_put(d->verified, v->node.enr, v->node.enr_len, v, NULL) != 0) {
    free(v);
    return;
  }
  ld_list_push_front(&d->verified_lru, &v->lru);
}

int ld_discv5_check_record(ld_discv5_t *d, const uint8_t *rec, size_t len, ld_enr_t *enr,
                           ld_discv5_node_t *n) {
  const ld_discv5_node_t *known = ld_discv5_table_find_record(d->table, rec, len);
  if (known == NULL)
    known = verified_get(d, rec, len);
  if (known != NULL) {
    *n = *known;
    return ld_enr_decode_verified(enr, rec, len);
  }
  int rc = ld_enr_decode(enr, rec, len);
  if (rc == 0)
    rc = ld_discv5_node_from_enr(n, enr);
  if (rc == 0)
    verified_put(d, n);
  return rc;
}

/* ---- our record ----------------------------------------------------------------------------- */

static void enr_changed(ld_discv5_t *d) {
  ld_discv5_event_t ev = {.type = LD_DISCV5_EV_ENR_UPDATED, .enr = &d->enr};
  d->stats.enr_updates++;
  ld_discv5_emit(d, &ev);
}

int ld_discv5_set_enr(ld_discv5_t *d, const ld_enr_t *enr) {
  if (memcmp(enr->pubkey, d->key.pub, LD_SECP256K1_PUBLIC_LEN) != 0)
    return LD_ERR_INVALID_ARG;
  if (enr->seq <= d->enr.seq)
    return LD_ERR_STATE;
  d->enr = *enr;
  enr_changed(d);
  return 0;
}

/* Our record re-signed with seq + 1 and the endpoint `a` (`ip`/`udp` or `ip6`/`udp6`), the other
 * pairs unchanged. LD_ERR_UNSUPPORTED when a pair holds a list (the builder sets strings). */
static int resign_with_endpoint(ld_discv5_t *d, const ld_discv5_addr_t *a, ld_enr_t *out) {
  ld_enr_builder_t *b = malloc(sizeof *b);
  if (b == NULL)
    return LD_ERR_NOMEM;
  ld_enr_builder_init(b, d->enr.seq + 1);
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < d->enr.n_pairs; i++) {
    const ld_enr_pair_t *p = &d->enr.pairs[i];
    char key[LD_ENR_KEY_MAX + 1];
    if (p->key_len > LD_ENR_KEY_MAX) {
      rc = LD_ERR_UNSUPPORTED;
      break;
    }
    memcpy(key, d->enr.raw + p->key_off, p->key_len);
    key[p->key_len] = '\0';
    if (strcmp(key, "id") == 0 || strcmp(key, "secp256k1") == 0)
      continue;
    rc = p->is_list ? LD_ERR_UNSUPPORTED
                    : ld_enr_builder_set(b, key, d->enr.raw + p->val_off, p->val_len);
  }
  if (rc == 0)
    rc = a->ip_len == 4 ? ld_enr_builder_set_ip4(b, a->ip) : ld_enr_builder_set_ip6(b, a->ip);
  if (rc == 0)
    rc = ld_enr_builder_set_uint(b, a->ip_len == 4 ? "udp" : "udp6", a->port);
  if (rc == 0)
    rc = ld_enr_builder_sign(b, &d->key, out);
  free(b);
  return rc;
}

/* ---- PONG address votes --------------------------------------------------------------------- */

static void prune_votes(ld_discv5_t *d, uint64_t now, bool make_room) {
  ld_hashmap_iter_t it = {0};
  const void *key;
  void *val;
  const void *oldest_key = NULL;
  uint64_t oldest = UINT64_MAX;
  while (ld_hashmap_next(d->votes, &it, &key, NULL, &val)) {
    vote_t *v = val;
    if (v->expiry <= now) {
      ld_hashmap_remove(d->votes, key, LD_DISCV5_NODE_ID_LEN);
      free(v);
    } else if (v->expiry < oldest) {
      oldest = v->expiry;
      oldest_key = key;
    }
  }
  if (make_room && ld_hashmap_size(d->votes) >= LD_DISCV5_MAX_VOTES && oldest_key != NULL)
    free(ld_hashmap_remove(d->votes, oldest_key, LD_DISCV5_NODE_ID_LEN));
}

/* The address with the most votes, when it has at least the threshold. */
static bool majority(ld_discv5_t *d, ld_discv5_addr_t *out) {
  size_t best = 0;
  ld_hashmap_iter_t it = {0};
  void *val;
  while (ld_hashmap_next(d->votes, &it, NULL, NULL, &val)) {
    const vote_t *v = val;
    size_t n = 0;
    ld_hashmap_iter_t it2 = {0};
    void *val2;
    while (ld_hashmap_next(d->votes, &it2, NULL, NULL, &val2))
      n += ld_discv5_addr_equal(&v->addr, &((const vote_t *)val2)->addr);
    if (n > best) {
      best = n;
      *out = v->addr;
    }
  }
  return best >= d->cfg.ip_vote_threshold;
}

static void check_majority(ld_discv5_t *d, uint64_t now) {
  ld_discv5_addr_t major, current;
  if (now < d->next_majority_check || !majority(d, &major))
    return;
  d->next_majority_check = now + d->cfg.ip_majority_interval_ms;
  if (ld_discv5_addr_from_enr(&d->enr, &current) == 0 && ld_discv5_addr_equal(&current, &major))
    return;
  char text[64];
  if (!d->cfg.enr_auto_update) {
    LD_WARN("discv5", "discovered external address %s but ENR auto update is off",
            ld_discv5_addr_text(&major, text, sizeof text));
    return;
  }
  ld_enr_t *next = malloc(sizeof *next);
  int rc = next != NULL ? resign_with_endpoint(d, &major, next) : LD_ERR_NOMEM;
  if (rc == 0) {
    d->enr = *next;
    LD_INFO("discv5", "ENR updated with the external address %s, seq %llu",
            ld_discv5_addr_text(&major, text, sizeof text), (unsigned long long)d->enr.seq);
    enr_changed(d);
  } else {
    LD_WARN("discv5", "could not update the ENR with %s: %s",
            ld_discv5_addr_text(&major, text, sizeof text), ld_errname(rc));
  }
  free(next);
}

void ld_discv5_vote(ld_discv5_t *d, const uint8_t *node_id, const ld_discv5_addr_t *observed,
                    uint64_t now) {
  vote_t *v = ld_hashmap_get(d->votes, node_id, LD_DISCV5_NODE_ID_LEN);
  if (v == NULL) {
    prune_votes(d, now, true);
    if (ld_hashmap_size(d->votes) >= LD_DISCV5_MAX_VOTES || (v = malloc(sizeof *v)) == NULL)
      return;
    if (ld_hashmap_put(d->votes, node_id, LD_DISCV5_NODE_ID_LEN, v, NULL) != 0) {
      free(v);
      return;
    }
  }
  v->addr = *observed;
  v->expiry = now + LD_DISCV5_VOTE_TTL_MS;
  check_majority(d, now);
}

/* ---- the routing table ---------------------------------------------------------------------- */

void ld_discv5_table_grew(ld_discv5_t *d, uint64_t now) {
  if (!d->populated)
    ld_discv5_arm(d, &d->refresh_timer, now);
}

int ld_discv5_learn(ld_discv5_t *d, const ld_discv5_node_t *n, const ld_enr_t *enr, uint64_t now) {
  int rc = ld_discv5_table_add(d->table, n);
  if (rc == LD_DISCV5_ADDED) {
    ld_discv5_event_t ev = {
        .type = LD_DISCV5_EV_NODE_ADDED, .enr = enr, .node_id = n->id, .addr = &n->addr};
    ld_discv5_emit(d, &ev);
    ld_discv5_table_grew(d, now);
  }
  return rc;
}

int ld_discv5_add_enr(ld_discv5_t *d, const ld_enr_t *enr, bool bootstrap, uint64_t now_ms) {
  ld_discv5_node_t n;
  int rc = ld_discv5_node_from_enr(&n, enr);
  if (rc != 0)
    return rc;
  n.bootstrap = bootstrap;
  return ld_discv5_learn(d, &n, enr, now_ms);
}

/* ---- timers --------------------------------------------------------------------------------- */

void ld_discv5_schedule_pingback(ld_discv5_t *d, const uint8_t *node_id, uint64_t now) {
  if (d->n_pingbacks >= MAX_PINGBACKS)
    return;
  pingback_t *p = calloc(1, sizeof *p);
  if (p == NULL)
    return;
  p->tm.kind = TIMER_PINGBACK;
  memcpy(p->node_id, node_id, LD_DISCV5_NODE_ID_LEN);
  uint64_t delay = d->cfg.ping_back_max_ms ? ld_discv5_rand(d) % d->cfg.ping_back_max_ms : 0;
  if (ld_discv5_arm(d, &p->tm, now + delay) != 0) {
    free(p);
    return;
  }
  d->n_pingbacks++;
}

static void on_pingback(ld_discv5_t *d, pingback_t *p, uint64_t now) {
  d->n_pingbacks--;
  ld_discv5_node_t *n = ld_discv5_table_get(d->table, p->node_id);
  if (n != NULL)
    ld_discv5_ping_node(d, OWNER_PINGBACK, n, now);
  free(p);
}

static void on_revalidate(ld_discv5_t *d, uint64_t now) {
  ld_discv5_node_t *n = ld_discv5_table_revalidation_pick(d->table, ld_discv5_rand(d));
  if (n != NULL)
    ld_discv5_ping_node(d, OWNER_REVALIDATE, n, now);
  arm_revalidation(d, now);
}

static void random_id(ld_discv5_t *d, uint8_t out[LD_DISCV5_NODE_ID_LEN]) {
  for (int i = 0; i < LD_DISCV5_NODE_ID_LEN; i += 8) {
    uint64_t r = ld_discv5_rand(d);
    memcpy(out + i, &r, 8);
  }
}

/* The first time the table has nodes: a self lookup (our neighbours) and a random one. Then a
 * random lookup whenever none ran for refresh_interval_ms. */
static void on_refresh(ld_discv5_t *d, uint64_t now) {
  uint8_t target[LD_DISCV5_NODE_ID_LEN];
  if (!d->populated && ld_discv5_table_size(d->table) > 0) {
    d->populated = true;
    ld_discv5_lookup_start(d, d->local_id, now, NULL);
    random_id(d, target);
    ld_discv5_lookup_start(d, target, now, NULL);
  } else if (now >= d->last_lookup_ms + d->cfg.refresh_interval_ms) {
    random_id(d, target);
    ld_discv5_lookup_start(d, target, now, NULL);
  }
  ld_discv5_arm(d, &d->refresh_timer, now + d->cfg.refresh_interval_ms);
}

uint64_t ld_discv5_next_deadline(const ld_discv5_t *d) {
  return ld_timerheap_next_deadline(&d->timers);
}

void ld_discv5_handle_timeout(ld_discv5_t *d, uint64_t now_ms) {
  ld_timer_t *t;
  while ((t = ld_timerheap_pop_expired(&d->timers, now_ms)) != NULL) {
    timed_t *tm = (timed_t *)t;
    switch (tm->kind) {
    case TIMER_REQUEST:
      ld_discv5_request_expired(d, (request_t *)tm, now_ms);
      break;
    case TIMER_CHALLENGE:
      ld_discv5_challenge_expired(d, (challenge_t *)tm);
      break;
    case TIMER_PINGBACK:
      on_pingback(d, (pingback_t *)tm, now_ms);
      break;
    case TIMER_REVALIDATE:
      on_revalidate(d, now_ms);
      break;
    case TIMER_REFRESH:
      on_refresh(d, now_ms);
      break;
    }
  }
}

/* ---- entry points --------------------------------------------------------------------------- */

int ld_discv5_receive(ld_discv5_t *d, const ld_discv5_addr_t *from, const uint8_t *data, size_t len,
                      uint64_t now_ms) {
  d->stats.packets_in++;
  d->stats.bytes_in += len;
  return ld_discv5_recv(d, from, data, len, now_ms);
}

int ld_discv5_lookup(ld_discv5_t *d, const uint8_t target[LD_DISCV5_NODE_ID_LEN], uint64_t now_ms,
                     uint64_t *handle) {
  uint8_t random[LD_DISCV5_NODE_ID_LEN];
  if (target == NULL) {
    random_id(d, random);
    target = random;
  }
  return ld_discv5_lookup_start(d, target, now_ms, handle);
}

const ld_enr_t *ld_discv5_local_enr(const ld_discv5_t *d) {
  return &d->enr;
}

const uint8_t *ld_discv5_local_id(const ld_discv5_t *d) {
  return d->local_id;
}

ld_discv5_table_t *ld_discv5_table(ld_discv5_t *d) {
  return d->table;
}

void ld_discv5_get_stats(const ld_discv5_t *d, ld_discv5_stats_t *out) {
  *out = d->stats;
}

size_t ld_discv5_sessions(const ld_discv5_t *d) {
  return ld_hashmap_size(d->sessions);
}

size_t ld_discv5_challenges(const ld_discv5_t *d) {
  return ld_hashmap_size(d->challenges);
}

size_t ld_discv5_requests(const ld_discv5_t *d) {
  return d->n_requests;
}

size_t ld_discv5_lookups(const ld_discv5_t *d) {
  return d->n_lookups;
}
