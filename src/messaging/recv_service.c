#include "messaging/recv_service.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"
#include "waku/core/sharding.h"

typedef struct shard {
  struct shard *prev, *next;
  char pubsub[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  size_t n_topics;
} shard_t;

typedef struct topic {
  struct topic *prev, *next;
  shard_t *shard;
  size_t len;
  char name[]; /* NUL-terminated */
} topic_t;

typedef struct seen {
  struct seen *prev, *next;
  uint64_t rx_ms;
  uint8_t hash[LD_WAKU_HASH_LEN];
} seen_t;

struct ld_recv {
  ld_recv_config_t cfg;
  ld_hashmap_t *topics; /* name → topic_t */
  topic_t *t_head, *t_tail;
  shard_t *s_head, *s_tail;
  ld_hashmap_t *seen;            /* hash → seen_t */
  seen_t *seen_head, *seen_tail; /* remembering order */
  uint64_t next_prune_ms;
  /* recovery */
  bool online;
  bool due;
  bool offline_during; /* went Disconnected while a recovery was in flight */
  uint64_t offline_at_ms;
  uint64_t start_ms;
  uint64_t retry_at_ms;
  ld_recv_recovery_t *inflight;
};

/* Unlinks `e` from a doubly linked list given by its head and tail pointers. */
#define LIST_UNLINK(head, tail, e)                                                                 \
  do {                                                                                             \
    if ((e)->prev != NULL)                                                                         \
      (e)->prev->next = (e)->next;                                                                 \
    else                                                                                           \
      (head) = (e)->next;                                                                          \
    if ((e)->next != NULL)                                                                         \
      (e)->next->prev = (e)->prev;                                                                 \
    else                                                                                           \
      (tail) = (e)->prev;                                                                          \
  } while (0)

#define LIST_APPEND(head, tail, e)                                                                 \
  do {                                                                                             \
    (e)->next = NULL;                                                                              \
    (e)->prev = (tail);                                                                            \
    if ((tail) != NULL)                                                                            \
      (tail)->next = (e);                                                                          \
    else                                                                                           \
      (head) = (e);                                                                                \
    (tail) = (e);                                                                                  \
  } while (0)

void ld_recv_config_default(ld_recv_config_t *cfg) {
  *cfg = (ld_recv_config_t){.cluster_id = LD_WAKU_DEFAULT_CLUSTER_ID,
                            .num_shards = LD_WAKU_DEFAULT_NUM_SHARDS,
                            .static_shard = 0,
                            .dedup_window_ms = LD_MESSAGING_DEFAULT_DEDUP_WINDOW_MS,
                            .max_seen = LD_RECV_DEFAULT_MAX_SEEN,
                            .max_topics = LD_MESSAGING_MAX_CONTENT_TOPICS};
}

ld_recv_t *ld_recv_new(const ld_recv_config_t *cfg, uint64_t now_ms) {
  ld_recv_config_t c;
  ld_recv_config_default(&c);
  if (cfg != NULL) {
    c.cluster_id = cfg->cluster_id;
    c.num_shards = cfg->num_shards;
    c.static_shard = cfg->static_shard;
    c.dedup_window_ms = cfg->dedup_window_ms > 0 ? cfg->dedup_window_ms : c.dedup_window_ms;
    c.max_seen = cfg->max_seen > 0 ? cfg->max_seen : c.max_seen;
    c.max_topics = cfg->max_topics > 0 ? cfg->max_topics : c.max_topics;
  }
  if (c.num_shards > LD_WAKU_MAX_SHARDS_PER_CLUSTER)
    return NULL;
  ld_recv_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return NULL;
  r->cfg = c;
  r->topics = ld_hashmap_new(16);
  r->seen = ld_hashmap_new(1024);
  if (r->topics == NULL || r->seen == NULL) {
    ld_recv_free(r);
    return NULL;
  }
  r->next_prune_ms = now_ms + LD_RECV_PRUNE_INTERVAL_MS;
  r->due = true;
  r->start_ms = now_ms;
  return r;
}

void ld_recv_free(ld_recv_t *r) {
  if (r == NULL)
    return;
  ld_hashmap_free(r->topics, free);
  ld_hashmap_free(r->seen, free);
  while (r->s_head != NULL) {
    shard_t *s = r->s_head;
    r->s_head = s->next;
    free(s);
  }
  free(r->inflight);
  free(r);
}

/* ---- subscriptions -------------------------------------------------------------------------- */

int ld_recv_shard_of(const ld_recv_t *r, const char *content_topic, char *out,
                     ld_topic_error_t *why) {
  if (r == NULL || content_topic == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  size_t len = strnlen(content_topic, LD_RECV_CONTENT_TOPIC_MAX + 1);
  if (len > LD_RECV_CONTENT_TOPIC_MAX)
    return LD_ERR_BAD_CONTENT_TOPIC;
  const size_t cap = LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1;
  int rc;
  if (r->cfg.num_shards > 0) {
    rc = ld_autoshard_pubsub_topic(content_topic, len, r->cfg.num_shards, r->cfg.cluster_id, out,
                                   cap, why);
  } else {
    ld_content_topic_t parsed;
    rc = ld_content_topic_parse(content_topic, len, &parsed, why);
    if (rc == 0)
      rc = ld_pubsub_topic_format((ld_relay_shard_t){r->cfg.cluster_id, r->cfg.static_shard}, out,
                                  cap);
  }
  return rc < 0 ? rc : 0;
}

static shard_t *find_shard(const ld_recv_t *r, const char *pubsub) {
  for (shard_t *s = r->s_head; s != NULL; s = s->next)
    if (strcmp(s->pubsub, pubsub) == 0)
      return s;
  return NULL;
}

static void fill_change(ld_recv_change_t *change, const char *pubsub, bool changed, bool edge) {
  if (change == NULL)
    return;
  memcpy(change->pubsub_topic, pubsub, strlen(pubsub) + 1);
  change->changed = changed;
  change->shard_edge = edge;
}

static shard_t *add_shard(ld_recv_t *r, const char *pubsub) {
  shard_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return NULL;
  memcpy(s->pubsub, pubsub, strlen(pubsub) + 1);
  LIST_APPEND(r->s_head, r->s_tail, s);
  return s;
}

static topic_t *new_topic(const char *name, size_t len, shard_t *s) {
  topic_t *t = calloc(1, sizeof *t + len + 1);
  if (t == NULL)
    return NULL;
  t->shard = s;
  t->len = len;
  memcpy(t->name, name, len + 1);
  return t;
}

int ld_recv_subscribe(ld_recv_t *r, const char *content_topic, ld_recv_change_t *change) {
  char pubsub[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  int rc = ld_recv_shard_of(r, content_topic, pubsub, NULL);
  if (rc != 0)
    return rc;
  size_t len = strlen(content_topic);
  if (ld_hashmap_contains(r->topics, content_topic, len)) {
    fill_change(change, pubsub, false, false);
    return 0;
  }
  if (ld_hashmap_size(r->topics) >= r->cfg.max_topics)
    return LD_ERR_LIMIT;
  shard_t *s = find_shard(r, pubsub);
  bool edge = s == NULL;
  if (s == NULL && (s = add_shard(r, pubsub)) == NULL)
    return LD_ERR_NOMEM;
  topic_t *t = new_topic(content_topic, len, s);
  if (t == NULL || ld_hashmap_put(r->topics, t->name, len, t, NULL) != 0) {
    free(t);
    if (edge) {
      LIST_UNLINK(r->s_head, r->s_tail, s);
      free(s);
    }
    return LD_ERR_NOMEM;
  }
  LIST_APPEND(r->t_head, r->t_tail, t);
  s->n_topics++;
  fill_change(change, pubsub, true, edge);
  return 0;
}

int ld_recv_unsubscribe(ld_recv_t *r, const char *content_topic, ld_recv_change_t *change) {
  if (r == NULL || content_topic == NULL)
    return LD_ERR_INVALID_ARG;
  topic_t *t = ld_hashmap_remove(r->topics, content_topic, strlen(content_topic));
  if (t == NULL)
    return LD_ERR_NOT_FOUND;
  LIST_UNLINK(r->t_head, r->t_tail, t);
  shard_t *s = t->shard;
  bool edge = --s->n_topics == 0;
  fill_change(change, s->pubsub, true, edge);
  if (edge) {
    LIST_UNLINK(r->s_head, r->s_tail, s);
    free(s);
  }
  free(t);
  return 0;
}

bool ld_recv_subscribed(const ld_recv_t *r, const char *content_topic) {
  return r != NULL && content_topic != NULL &&
         ld_hashmap_contains(r->topics, content_topic, strlen(content_topic));
}

size_t ld_recv_topic_count(const ld_recv_t *r) {
  return r != NULL ? ld_hashmap_size(r->topics) : 0;
}

size_t ld_recv_shards(const ld_recv_t *r, const char **out, size_t max) {
  size_t n = 0;
  for (const shard_t *s = r->s_head; s != NULL; s = s->next, n++)
    if (out != NULL && n < max)
      out[n] = s->pubsub;
  return n;
}

size_t ld_recv_shard_topics(const ld_recv_t *r, const char *pubsub_topic, const char **out,
                            size_t max) {
  size_t n = 0;
  for (const topic_t *t = r->t_head; t != NULL; t = t->next) {
    if (strcmp(t->shard->pubsub, pubsub_topic) != 0)
      continue;
    if (out != NULL && n < max)
      out[n] = t->name;
    n++;
  }
  return n;
}

/* ---- delivery ------------------------------------------------------------------------------- */

static void forget(ld_recv_t *r, seen_t *e) {
  ld_hashmap_remove(r->seen, e->hash, LD_WAKU_HASH_LEN);
  LIST_UNLINK(r->seen_head, r->seen_tail, e);
  free(e);
}

static size_t prune(ld_recv_t *r, uint64_t now_ms) {
  uint64_t cutoff = now_ms > r->cfg.dedup_window_ms ? now_ms - r->cfg.dedup_window_ms : 0;
  size_t removed = 0;
  seen_t *e = r->seen_head;
  while (e != NULL) {
    seen_t *next = e->next;
    if (e->rx_ms < cutoff) {
      forget(r, e);
      removed++;
    }
    e = next;
  }
  return removed;
}

size_t ld_recv_tick(ld_recv_t *r, uint64_t now_ms) {
  if (r == NULL || now_ms < r->next_prune_ms)
    return 0;
  r->next_prune_ms = now_ms + LD_RECV_PRUNE_INTERVAL_MS;
  return prune(r, now_ms);
}

static uint64_t rx_time(const ld_waku_message_t *msg, uint64_t now_ms) {
  return msg->timestamp > 0 ? (uint64_t)msg->timestamp / 1000000u : now_ms;
}

static void remember(ld_recv_t *r, const uint8_t hash[LD_WAKU_HASH_LEN], uint64_t rx_ms) {
  while (ld_hashmap_size(r->seen) >= r->cfg.max_seen && r->seen_head != NULL)
    forget(r, r->seen_head);
  seen_t *e = calloc(1, sizeof *e);
  if (e == NULL)
    return;
  memcpy(e->hash, hash, LD_WAKU_HASH_LEN);
  e->rx_ms = rx_ms;
  if (ld_hashmap_put(r->seen, e->hash, LD_WAKU_HASH_LEN, e, NULL) != 0) {
    free(e);
    return;
  }
  LIST_APPEND(r->seen_head, r->seen_tail, e);
}

static bool topic_on_shard(const ld_recv_t *r, const char *pubsub_topic,
                           const ld_waku_message_t *msg) {
  if (msg->content_topic_len == 0 && msg->content_topic == NULL)
    return false;
  const topic_t *t = ld_hashmap_get(r->topics, msg->content_topic, msg->content_topic_len);
  return t != NULL && strcmp(t->shard->pubsub, pubsub_topic) == 0;
}

ld_recv_verdict_t ld_recv_seen(ld_recv_t *r, const char *pubsub_topic, const ld_waku_message_t *msg,
                               const uint8_t hash[LD_WAKU_HASH_LEN], uint64_t now_ms) {
  if (r == NULL || pubsub_topic == NULL || msg == NULL || hash == NULL)
    return LD_RECV_NOT_SUBSCRIBED;
  ld_recv_tick(r, now_ms);
  if (!topic_on_shard(r, pubsub_topic, msg))
    return LD_RECV_NOT_SUBSCRIBED;
  if (ld_hashmap_contains(r->seen, hash, LD_WAKU_HASH_LEN))
    return LD_RECV_DUPLICATE;
  remember(r, hash, rx_time(msg, now_ms));
  return LD_RECV_DELIVER;
}

bool ld_recv_known(const ld_recv_t *r, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  return r != NULL && hash != NULL && ld_hashmap_contains(r->seen, hash, LD_WAKU_HASH_LEN);
}

size_t ld_recv_seen_count(const ld_recv_t *r) {
  return r != NULL ? ld_hashmap_size(r->seen) : 0;
}

/* ---- recovery ------------------------------------------------------------------------------- */

bool ld_recv_set_status(ld_recv_t *r, ld_connection_status_t status, uint64_t now_ms) {
  bool online = status != LD_CONNECTION_DISCONNECTED;
  if (r == NULL || online == r->online)
    return false;
  r->online = online;
  if (!online) {
    if (r->inflight != NULL && !r->offline_during) {
      r->offline_during = true;
      r->offline_at_ms = now_ms;
    } else if (r->inflight == NULL && !r->due) {
      r->start_ms = now_ms;
      r->due = true;
    }
    return false;
  }
  if (r->inflight != NULL || !r->due)
    return false;
  r->retry_at_ms = now_ms;
  return true;
}

static size_t groups(size_t n_topics) {
  return (n_topics + LD_RECV_RANGE_MAX_TOPICS - 1) / LD_RECV_RANGE_MAX_TOPICS;
}

/* One block: the recovery, its ranges, the topic pointers, then the strings. */
static ld_recv_recovery_t *alloc_recovery(const ld_recv_t *r, size_t *n_ranges) {
  size_t ranges = 0, bytes = 0;
  for (const shard_t *s = r->s_head; s != NULL; s = s->next) {
    ranges += groups(s->n_topics);
    bytes += strlen(s->pubsub) + 1;
  }
  for (const topic_t *t = r->t_head; t != NULL; t = t->next)
    bytes += t->len + 1;
  size_t n_topics = ld_hashmap_size(r->topics);
  *n_ranges = ranges;
  return calloc(1, sizeof(ld_recv_recovery_t) + ranges * sizeof(ld_recv_range_t) +
                       n_topics * sizeof(char *) + bytes);
}

static char *put_string(char **cursor, const char *s) {
  char *at = *cursor;
  size_t len = strlen(s) + 1;
  memcpy(at, s, len);
  *cursor += len;
  return at;
}

/* Fills the ranges of shard `s`; returns the next free range. */
static ld_recv_range_t *shard_ranges(const ld_recv_t *r, const shard_t *s, ld_recv_range_t *range,
                                     const char **ptrs, size_t *n_ptrs, char **cursor,
                                     const ld_recv_recovery_t *rec) {
  const char *pubsub = put_string(cursor, s->pubsub);
  for (const topic_t *t = r->t_head; t != NULL; t = t->next) {
    if (t->shard != s)
      continue;
    if (range->n_content_topics == 0) {
      *range = (ld_recv_range_t){pubsub, &ptrs[*n_ptrs], 0, rec->start_ms, rec->end_ms};
    }
    ptrs[(*n_ptrs)++] = put_string(cursor, t->name);
    if (++range->n_content_topics == LD_RECV_RANGE_MAX_TOPICS)
      range++;
  }
  return range->n_content_topics > 0 ? range + 1 : range;
}

static ld_recv_recovery_t *build_recovery(const ld_recv_t *r, uint64_t now_ms) {
  size_t n_ranges;
  ld_recv_recovery_t *rec = alloc_recovery(r, &n_ranges);
  if (rec == NULL)
    return NULL;
  ld_recv_range_t *ranges = (ld_recv_range_t *)(rec + 1);
  const char **ptrs = (const char **)(ranges + n_ranges);
  char *cursor = (char *)(ptrs + ld_hashmap_size(r->topics));
  size_t n_ptrs = 0;
  rec->ranges = ranges;
  rec->n_ranges = n_ranges;
  rec->start_ms =
      r->start_ms > LD_RECV_RECOVERY_MARGIN_MS ? r->start_ms - LD_RECV_RECOVERY_MARGIN_MS : 0;
  rec->end_ms = now_ms + LD_RECV_RECOVERY_MARGIN_MS;
  rec->storage_ = rec;
  ld_recv_range_t *next = ranges;
  for (const shard_t *s = r->s_head; s != NULL; s = s->next)
    next = shard_ranges(r, s, next, ptrs, &n_ptrs, &cursor, rec);
  return rec;
}

const ld_recv_recovery_t *ld_recv_recovery_poll(ld_recv_t *r, uint64_t now_ms) {
  if (r == NULL || !r->online || !r->due || r->inflight != NULL || now_ms < r->retry_at_ms)
    return NULL;
  if (r->t_head == NULL) {
    r->start_ms = now_ms;
    r->due = false;
    return NULL;
  }
  ld_recv_recovery_t *rec = build_recovery(r, now_ms);
  if (rec == NULL)
    return NULL;
  r->inflight = rec;
  r->due = false;
  r->offline_during = false;
  return rec;
}

void ld_recv_recovery_done(ld_recv_t *r, const ld_recv_recovery_t *rec, bool ok, uint64_t now_ms) {
  if (r == NULL || rec == NULL || rec != r->inflight)
    return;
  uint64_t end = rec->end_ms;
  free(r->inflight);
  r->inflight = NULL;
  if (!ok) {
    r->due = true;
    r->retry_at_ms = now_ms + LD_RECV_RECOVERY_RETRY_MS;
  } else if (r->offline_during) {
    r->start_ms = r->offline_at_ms;
    r->due = true;
    r->retry_at_ms = now_ms;
  } else {
    r->start_ms = end;
  }
  r->offline_during = false;
}

bool ld_recv_recovery_in_flight(const ld_recv_t *r) {
  return r != NULL && r->inflight != NULL;
}

uint64_t ld_recv_recovery_start(const ld_recv_t *r) {
  return r != NULL ? r->start_ms : 0;
}
