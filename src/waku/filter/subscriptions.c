#include "waku/filter/subscriptions.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"
#include "base/varint.h"

#define CAUSE_MISSING "pubsubTopic and contentTopics must be specified"
#define CAUSE_NO_SUBS "peer has no subscriptions"
#define CAUSE_MAX_CRITERIA "peer has reached maximum number of filter criteria"
#define CAUSE_NOMEM "out of memory"

/* Criterion key: uvarint(pubsub length) ‖ pubsub ‖ content. */
#define KEY_MAX (LD_PBVARINT_MAX_LEN + 2 * LD_FILTER_MAX_TOPIC_LEN)

typedef struct member member_t;

typedef struct crit {
  ld_filter_str_t pubsub, content; /* point into `bytes` */
  member_t **members;
  size_t n, cap;
  char bytes[]; /* pubsub ‖ content */
} crit_t;

typedef struct speer {
  ld_peerid_t id;
  uint64_t last_seen;
  member_t **members;
  size_t n, cap;
  void *data;
} speer_t;

struct member {
  speer_t *peer;
  crit_t *crit;
  size_t pi, ci; /* positions in peer->members and crit->members */
};

struct ld_filter_subs {
  ld_filter_subs_config_t cfg;
  ld_hashmap_t *peers; /* peer ID bytes → speer_t */
  ld_hashmap_t *crits; /* key → crit_t */
  ld_filter_subs_removed_fn on_removed;
  void *removed_ud;
};

/* ---- setup ---------------------------------------------------------------------------------- */

void ld_filter_subs_config_default(ld_filter_subs_config_t *cfg) {
  cfg->max_peers = LD_FILTER_DEFAULT_MAX_PEERS;
  cfg->max_criteria_per_peer = LD_FILTER_DEFAULT_MAX_CRITERIA;
  cfg->ttl_ms = LD_FILTER_DEFAULT_TTL_MS;
}

ld_filter_subs_t *ld_filter_subs_new(const ld_filter_subs_config_t *cfg) {
  ld_filter_subs_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return NULL;
  ld_filter_subs_config_default(&s->cfg);
  if (cfg != NULL && cfg->max_peers > 0)
    s->cfg.max_peers = cfg->max_peers;
  if (cfg != NULL && cfg->max_criteria_per_peer > 0)
    s->cfg.max_criteria_per_peer = cfg->max_criteria_per_peer;
  if (cfg != NULL && cfg->ttl_ms > 0)
    s->cfg.ttl_ms = cfg->ttl_ms;
  s->peers = ld_hashmap_new(64);
  s->crits = ld_hashmap_new(64);
  if (s->peers == NULL || s->crits == NULL) {
    ld_hashmap_free(s->peers, NULL);
    ld_hashmap_free(s->crits, NULL);
    free(s);
    return NULL;
  }
  return s;
}

void ld_filter_subs_set_on_removed(ld_filter_subs_t *s, ld_filter_subs_removed_fn fn,
                                   void *user_data) {
  s->on_removed = fn;
  s->removed_ud = user_data;
}

void ld_filter_subs_set_ttl(ld_filter_subs_t *s, uint64_t ttl_ms) {
  s->cfg.ttl_ms = ttl_ms;
}

/* ---- membership ----------------------------------------------------------------------------- */

static int grow(member_t ***arr, size_t n, size_t *cap) {
  if (n < *cap)
    return 0;
  size_t ncap = *cap == 0 ? 4 : *cap * 2;
  member_t **p = realloc(*arr, ncap * sizeof *p);
  if (p == NULL)
    return LD_ERR_NOMEM;
  *arr = p;
  *cap = ncap;
  return 0;
}

static size_t make_key(const ld_filter_str_t *pubsub, const ld_filter_str_t *content,
                       uint8_t key[KEY_MAX]) {
  size_t n = ld_varint_encode(pubsub->len, key);
  memcpy(key + n, pubsub->data, pubsub->len);
  memcpy(key + n + pubsub->len, content->data, content->len);
  return n + pubsub->len + content->len;
}

static crit_t *crit_find(const ld_filter_subs_t *s, const ld_filter_str_t *pubsub,
                         const ld_filter_str_t *content) {
  uint8_t key[KEY_MAX];
  size_t klen = make_key(pubsub, content, key);
  return ld_hashmap_get(s->crits, key, klen);
}

static crit_t *crit_get_or_add(ld_filter_subs_t *s, const ld_filter_str_t *pubsub,
                               const ld_filter_str_t *content) {
  uint8_t key[KEY_MAX];
  size_t klen = make_key(pubsub, content, key);
  crit_t *c = ld_hashmap_get(s->crits, key, klen);
  if (c != NULL)
    return c;
  c = calloc(1, sizeof *c + pubsub->len + content->len + 1);
  if (c == NULL)
    return NULL;
  memcpy(c->bytes, pubsub->data, pubsub->len);
  memcpy(c->bytes + pubsub->len, content->data, content->len);
  c->pubsub = (ld_filter_str_t){c->bytes, pubsub->len};
  c->content = (ld_filter_str_t){c->bytes + pubsub->len, content->len};
  if (ld_hashmap_put(s->crits, key, klen, c, NULL) != 0) {
    free(c);
    return NULL;
  }
  return c;
}

static void crit_drop(ld_filter_subs_t *s, crit_t *c) {
  uint8_t key[KEY_MAX];
  size_t klen = make_key(&c->pubsub, &c->content, key);
  ld_hashmap_remove(s->crits, key, klen);
  free(c->members);
  free(c);
}

static member_t *member_find(const speer_t *p, const crit_t *c) {
  if (c == NULL)
    return NULL;
  if (p->n <= c->n) {
    for (size_t i = 0; i < p->n; i++)
      if (p->members[i]->crit == c)
        return p->members[i];
  } else {
    for (size_t i = 0; i < c->n; i++)
      if (c->members[i]->peer == p)
        return c->members[i];
  }
  return NULL;
}

static int member_add(speer_t *p, crit_t *c) {
  member_t *m = malloc(sizeof *m);
  if (m == NULL || grow(&p->members, p->n, &p->cap) != 0 || grow(&c->members, c->n, &c->cap) != 0) {
    free(m);
    return LD_ERR_NOMEM;
  }
  *m = (member_t){p, c, p->n, c->n};
  p->members[p->n++] = m;
  c->members[c->n++] = m;
  return 0;
}

/* Swap-removes `m` from both arrays; drops the criterion once nobody wants it. */
static void member_remove(ld_filter_subs_t *s, member_t *m) {
  speer_t *p = m->peer;
  crit_t *c = m->crit;
  p->members[m->pi] = p->members[--p->n];
  p->members[m->pi]->pi = m->pi;
  c->members[m->ci] = c->members[--c->n];
  c->members[m->ci]->ci = m->ci;
  free(m);
  if (c->n == 0)
    crit_drop(s, c);
}

/* ---- peers ---------------------------------------------------------------------------------- */

static speer_t *peer_find(const ld_filter_subs_t *s, const ld_peerid_t *id) {
  return ld_hashmap_get(s->peers, id->bytes, id->len);
}

static bool live(const ld_filter_subs_t *s, const speer_t *p, uint64_t now) {
  return now < p->last_seen || now - p->last_seen <= s->cfg.ttl_ms;
}

static speer_t *peer_add(ld_filter_subs_t *s, const ld_peerid_t *id, uint64_t now) {
  speer_t *p = calloc(1, sizeof *p);
  if (p == NULL)
    return NULL;
  p->id = *id;
  p->last_seen = now;
  if (ld_hashmap_put(s->peers, id->bytes, id->len, p, NULL) != 0) {
    free(p);
    return NULL;
  }
  return p;
}

/* Frees `p` (already out of the map) and tells the owner. */
static void peer_release(ld_filter_subs_t *s, speer_t *p) {
  while (p->n > 0)
    member_remove(s, p->members[p->n - 1]);
  if (s->on_removed != NULL)
    s->on_removed(&p->id, p->data, s->removed_ud);
  free(p->members);
  free(p);
}

static void peer_drop(ld_filter_subs_t *s, speer_t *p) {
  ld_hashmap_remove(s->peers, p->id.bytes, p->id.len);
  peer_release(s, p);
}

/* The peer's live entry; an expired one is purged on the spot. */
static speer_t *live_peer(ld_filter_subs_t *s, const ld_peerid_t *id, uint64_t now) {
  speer_t *p = peer_find(s, id);
  if (p != NULL && !live(s, p, now)) {
    peer_drop(s, p);
    p = NULL;
  }
  return p;
}

int ld_filter_subs_remove_peer(ld_filter_subs_t *s, const ld_peerid_t *peer) {
  speer_t *p = peer_find(s, peer);
  if (p == NULL)
    return LD_ERR_NOT_FOUND;
  peer_drop(s, p);
  return 0;
}

size_t ld_filter_subs_expire(ld_filter_subs_t *s, uint64_t now) {
  size_t n = 0;
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(s->peers, &it, NULL, NULL, &v)) {
    speer_t *p = v;
    if (live(s, p, now))
      continue;
    ld_hashmap_remove(s->peers, p->id.bytes, p->id.len); /* safe: the entry just returned */
    peer_release(s, p);
    n++;
  }
  return n;
}

void ld_filter_subs_free(ld_filter_subs_t *s) {
  if (s == NULL)
    return;
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(s->peers, &it, NULL, NULL, &v)) {
    speer_t *p = v;
    ld_hashmap_remove(s->peers, p->id.bytes, p->id.len);
    peer_release(s, p);
  }
  ld_hashmap_free(s->peers, NULL);
  ld_hashmap_free(s->crits, NULL);
  free(s);
}

/* ---- requests ------------------------------------------------------------------------------- */

static uint32_t answer(ld_filter_status_t *st, uint32_t code, const char *cause) {
  if (st != NULL)
    ld_filter_status_set(st, code, cause != NULL ? "%s" : NULL, cause);
  return code;
}

/* The 400 checks shared by SUBSCRIBE and UNSUBSCRIBE; 0 when the request is well-formed. */
static uint32_t check_topics(const ld_filter_str_t *pubsub, const ld_filter_str_t *topics, size_t n,
                             ld_filter_status_t *st) {
  if (pubsub == NULL || n == 0)
    return answer(st, LD_FILTER_STATUS_BAD_REQUEST, CAUSE_MISSING);
  if (n > LD_FILTER_MAX_CONTENT_TOPICS) {
    if (st != NULL)
      ld_filter_status_set(st, LD_FILTER_STATUS_BAD_REQUEST, "exceeds maximum content topics: %d",
                           LD_FILTER_MAX_CONTENT_TOPICS);
    return LD_FILTER_STATUS_BAD_REQUEST;
  }
  bool too_long = pubsub->len > LD_FILTER_MAX_TOPIC_LEN;
  for (size_t i = 0; i < n && !too_long; i++)
    too_long = topics[i].len > LD_FILTER_MAX_TOPIC_LEN;
  if (too_long) {
    if (st != NULL)
      ld_filter_status_set(st, LD_FILTER_STATUS_BAD_REQUEST, "topic exceeds maximum length: %d",
                           LD_FILTER_MAX_TOPIC_LEN);
    return LD_FILTER_STATUS_BAD_REQUEST;
  }
  return 0;
}

static bool same(const ld_filter_str_t *a, const ld_filter_str_t *b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* True when topics[i] already appeared earlier in the request. */
static bool repeated(const ld_filter_str_t *topics, size_t i) {
  for (size_t j = 0; j < i; j++)
    if (same(&topics[j], &topics[i]))
      return true;
  return false;
}

/* Distinct criteria of the request that `p` (may be NULL) does not have yet. */
static size_t count_new(const ld_filter_subs_t *s, const speer_t *p, const ld_filter_str_t *pubsub,
                        const ld_filter_str_t *topics, size_t n) {
  size_t fresh = 0;
  for (size_t i = 0; i < n; i++)
    if (!repeated(topics, i) &&
        (p == NULL || member_find(p, crit_find(s, pubsub, &topics[i])) == NULL))
      fresh++;
  return fresh;
}

/* 0 when a new peer may join, else the 503 answer. */
static uint32_t admit_peer(ld_filter_subs_t *s, uint64_t now, ld_filter_status_t *st) {
  if (ld_hashmap_size(s->peers) >= s->cfg.max_peers)
    ld_filter_subs_expire(s, now);
  if (ld_hashmap_size(s->peers) < s->cfg.max_peers)
    return 0;
  if (st != NULL)
    ld_filter_status_set(st, LD_FILTER_STATUS_SERVICE_UNAVAILABLE,
                         "node has reached maximum number of subscriptions: %zu", s->cfg.max_peers);
  return LD_FILTER_STATUS_SERVICE_UNAVAILABLE;
}

static int add_criteria(ld_filter_subs_t *s, speer_t *p, const ld_filter_str_t *pubsub,
                        const ld_filter_str_t *topics, size_t n) {
  for (size_t i = 0; i < n; i++) {
    crit_t *c = crit_get_or_add(s, pubsub, &topics[i]);
    if (c == NULL)
      return LD_ERR_NOMEM;
    if (member_find(p, c) != NULL)
      continue;
    if (member_add(p, c) != 0) {
      if (c->n == 0)
        crit_drop(s, c);
      return LD_ERR_NOMEM;
    }
  }
  return 0;
}

uint32_t ld_filter_subs_subscribe(ld_filter_subs_t *s, const ld_peerid_t *peer,
                                  const ld_filter_str_t *pubsub_topic,
                                  const ld_filter_str_t *topics, size_t n, uint64_t now,
                                  ld_filter_status_t *st) {
  uint32_t code = check_topics(pubsub_topic, topics, n, st);
  if (code != 0)
    return code;
  speer_t *p = live_peer(s, peer, now);
  if (p == NULL && (code = admit_peer(s, now, st)) != 0)
    return code;
  size_t have = p != NULL ? p->n : 0;
  if (have + count_new(s, p, pubsub_topic, topics, n) > s->cfg.max_criteria_per_peer)
    return answer(st, LD_FILTER_STATUS_SERVICE_UNAVAILABLE, CAUSE_MAX_CRITERIA);
  if (p == NULL && (p = peer_add(s, peer, now)) == NULL)
    return answer(st, LD_FILTER_STATUS_SERVICE_UNAVAILABLE, CAUSE_NOMEM);
  p->last_seen = now;
  if (add_criteria(s, p, pubsub_topic, topics, n) != 0) {
    if (p->n == 0)
      peer_drop(s, p);
    return answer(st, LD_FILTER_STATUS_SERVICE_UNAVAILABLE, CAUSE_NOMEM);
  }
  return answer(st, LD_FILTER_STATUS_OK, NULL);
}

uint32_t ld_filter_subs_unsubscribe(ld_filter_subs_t *s, const ld_peerid_t *peer,
                                    const ld_filter_str_t *pubsub_topic,
                                    const ld_filter_str_t *topics, size_t n, uint64_t now,
                                    ld_filter_status_t *st) {
  uint32_t code = check_topics(pubsub_topic, topics, n, st);
  if (code != 0)
    return code;
  speer_t *p = live_peer(s, peer, now);
  if (p == NULL)
    return answer(st, LD_FILTER_STATUS_NOT_FOUND, CAUSE_NO_SUBS);
  p->last_seen = now;
  code = LD_FILTER_STATUS_OK;
  for (size_t i = 0; i < n && code == LD_FILTER_STATUS_OK; i++) {
    if (repeated(topics, i))
      continue;
    member_t *m = member_find(p, crit_find(s, pubsub_topic, &topics[i]));
    if (m == NULL)
      code = LD_FILTER_STATUS_NOT_FOUND;
    else
      member_remove(s, m);
  }
  if (p->n == 0)
    peer_drop(s, p);
  return answer(st, code, code == LD_FILTER_STATUS_OK ? NULL : CAUSE_NO_SUBS);
}

uint32_t ld_filter_subs_unsubscribe_all(ld_filter_subs_t *s, const ld_peerid_t *peer, uint64_t now,
                                        ld_filter_status_t *st) {
  speer_t *p = live_peer(s, peer, now);
  if (p == NULL)
    return answer(st, LD_FILTER_STATUS_NOT_FOUND, CAUSE_NO_SUBS);
  peer_drop(s, p);
  return answer(st, LD_FILTER_STATUS_OK, NULL);
}

uint32_t ld_filter_subs_ping(ld_filter_subs_t *s, const ld_peerid_t *peer, uint64_t now,
                             ld_filter_status_t *st) {
  speer_t *p = live_peer(s, peer, now);
  if (p == NULL)
    return answer(st, LD_FILTER_STATUS_NOT_FOUND, CAUSE_NO_SUBS);
  p->last_seen = now;
  return answer(st, LD_FILTER_STATUS_OK, NULL);
}

uint32_t ld_filter_subs_handle(ld_filter_subs_t *s, const ld_peerid_t *peer,
                               const ld_filter_request_t *req, uint64_t now,
                               ld_filter_status_t *st) {
  const ld_filter_str_t *pubsub = req->has_pubsub_topic ? &req->pubsub_topic : NULL;
  switch (req->type) {
  case LD_FILTER_SUBSCRIBE:
    return ld_filter_subs_subscribe(s, peer, pubsub, req->content_topics, req->n_content_topics,
                                    now, st);
  case LD_FILTER_UNSUBSCRIBE:
    return ld_filter_subs_unsubscribe(s, peer, pubsub, req->content_topics, req->n_content_topics,
                                      now, st);
  case LD_FILTER_UNSUBSCRIBE_ALL:
    return ld_filter_subs_unsubscribe_all(s, peer, now, st);
  default:
    return ld_filter_subs_ping(s, peer, now, st);
  }
}

/* ---- matching and queries ------------------------------------------------------------------- */

size_t ld_filter_subs_match(const ld_filter_subs_t *s, const char *pubsub_topic, size_t pubsub_len,
                            const char *content_topic, size_t content_len, uint64_t now,
                            ld_filter_subs_match_fn fn, void *user_data) {
  if (pubsub_len > LD_FILTER_MAX_TOPIC_LEN || content_len > LD_FILTER_MAX_TOPIC_LEN)
    return 0;
  ld_filter_str_t ps = {pubsub_topic, pubsub_len}, ct = {content_topic, content_len};
  const crit_t *c = crit_find(s, &ps, &ct);
  size_t found = 0;
  for (size_t i = 0; c != NULL && i < c->n; i++) {
    speer_t *p = c->members[i]->peer;
    if (!live(s, p, now))
      continue;
    found++;
    if (fn != NULL)
      fn(&p->id, p->data, user_data);
  }
  return found;
}

uint64_t ld_filter_subs_next_expiry(const ld_filter_subs_t *s) {
  uint64_t next = UINT64_MAX;
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(s->peers, &it, NULL, NULL, &v)) {
    const speer_t *p = v;
    uint64_t t = p->last_seen + s->cfg.ttl_ms + 1;
    if (t < next)
      next = t;
  }
  return next;
}

bool ld_filter_subs_is_subscribed(const ld_filter_subs_t *s, const ld_peerid_t *peer,
                                  uint64_t now) {
  const speer_t *p = peer_find(s, peer);
  return p != NULL && live(s, p, now);
}

bool ld_filter_subs_has_peer(const ld_filter_subs_t *s, const ld_peerid_t *peer) {
  return peer_find(s, peer) != NULL;
}

void *ld_filter_subs_peer_data(const ld_filter_subs_t *s, const ld_peerid_t *peer) {
  const speer_t *p = peer_find(s, peer);
  return p != NULL ? p->data : NULL;
}

int ld_filter_subs_set_peer_data(ld_filter_subs_t *s, const ld_peerid_t *peer, void *data) {
  speer_t *p = peer_find(s, peer);
  if (p == NULL)
    return LD_ERR_NOT_FOUND;
  p->data = data;
  return 0;
}

size_t ld_filter_subs_peer_count(const ld_filter_subs_t *s) {
  return ld_hashmap_size(s->peers);
}

size_t ld_filter_subs_criteria_count(const ld_filter_subs_t *s) {
  return ld_hashmap_size(s->crits);
}

size_t ld_filter_subs_peer_criteria_count(const ld_filter_subs_t *s, const ld_peerid_t *peer) {
  const speer_t *p = peer_find(s, peer);
  return p != NULL ? p->n : 0;
}

size_t ld_filter_subs_foreach_peer(const ld_filter_subs_t *s,
                                   void (*fn)(const ld_filter_subs_peer_info_t *info, void *ud),
                                   void *user_data) {
  size_t n = 0;
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(s->peers, &it, NULL, NULL, &v)) {
    const speer_t *p = v;
    ld_filter_subs_peer_info_t info = {&p->id, p->last_seen, p->n, p->data};
    if (fn != NULL)
      fn(&info, user_data);
    n++;
  }
  return n;
}

size_t ld_filter_subs_peer_criteria(const ld_filter_subs_t *s, const ld_peerid_t *peer,
                                    void (*fn)(const ld_filter_str_t *pubsub_topic,
                                               const ld_filter_str_t *content_topic, void *ud),
                                    void *user_data) {
  const speer_t *p = peer_find(s, peer);
  if (p == NULL)
    return 0;
  for (size_t i = 0; fn != NULL && i < p->n; i++)
    fn(&p->members[i]->crit->pubsub, &p->members[i]->crit->content, user_data);
  return p->n;
}
