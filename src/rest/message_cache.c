#include "rest/message_cache.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

typedef struct topic {
  char *text;
  size_t len;
} topic_t;

typedef struct topic_set {
  topic_t *items;
  size_t n;
} topic_set_t;

typedef struct entry {
  char *topics[2]; /* pubsub, content (NUL-terminated copies) */
  size_t lens[2];
  ld_waku_message_t msg;
} entry_t;

struct ld_rest_cache {
  topic_set_t sets[2];
  entry_t *entries; /* arrival order */
  size_t n, capacity;
};

ld_rest_cache_t *ld_rest_cache_new(size_t capacity) {
  ld_rest_cache_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->capacity = capacity > 0 ? capacity : LD_REST_CACHE_DEFAULT_CAPACITY;
  c->entries = calloc(c->capacity, sizeof *c->entries);
  if (c->entries == NULL) {
    free(c);
    return NULL;
  }
  return c;
}

static void entry_clear(entry_t *e) {
  free(e->topics[0]);
  free(e->topics[1]);
  ld_waku_message_clear(&e->msg);
}

void ld_rest_cache_free(ld_rest_cache_t *c) {
  if (c == NULL)
    return;
  for (size_t i = 0; i < c->n; i++)
    entry_clear(&c->entries[i]);
  for (size_t k = 0; k < 2; k++) {
    for (size_t i = 0; i < c->sets[k].n; i++)
      free(c->sets[k].items[i].text);
    free(c->sets[k].items);
  }
  free(c->entries);
  free(c);
}

static bool same(const char *a, size_t alen, const char *b, size_t blen) {
  return alen == blen && memcmp(a, b, alen) == 0;
}

static long set_find(const topic_set_t *s, const char *topic, size_t len) {
  for (size_t i = 0; i < s->n; i++)
    if (same(s->items[i].text, s->items[i].len, topic, len))
      return (long)i;
  return -1;
}

bool ld_rest_cache_cached(const ld_rest_cache_t *c, ld_rest_topic_kind_t kind, const char *topic,
                          size_t len) {
  return set_find(&c->sets[kind], topic, len) >= 0;
}

static char *copy_text(const char *s, size_t len) {
  char *t = malloc(len + 1);
  if (t != NULL) {
    memcpy(t, s, len);
    t[len] = '\0';
  }
  return t;
}

int ld_rest_cache_subscribe(ld_rest_cache_t *c, ld_rest_topic_kind_t kind, const char *topic,
                            size_t len) {
  topic_set_t *s = &c->sets[kind];
  if (set_find(s, topic, len) >= 0)
    return 0;
  if (s->n >= LD_REST_CACHE_MAX_TOPICS || len > LD_REST_CACHE_MAX_TOPIC_LEN)
    return LD_ERR_LIMIT;
  topic_t *grown = realloc(s->items, (s->n + 1) * sizeof *grown);
  if (grown == NULL)
    return LD_ERR_NOMEM;
  s->items = grown;
  char *text = copy_text(topic, len);
  if (text == NULL)
    return LD_ERR_NOMEM;
  s->items[s->n++] = (topic_t){.text = text, .len = len};
  return 0;
}

static void remove_entry(ld_rest_cache_t *c, size_t i) {
  entry_clear(&c->entries[i]);
  memmove(&c->entries[i], &c->entries[i + 1], (c->n - i - 1) * sizeof *c->entries);
  c->n--;
}

static bool entry_cached(const ld_rest_cache_t *c, const entry_t *e) {
  return set_find(&c->sets[0], e->topics[0], e->lens[0]) >= 0 ||
         set_find(&c->sets[1], e->topics[1], e->lens[1]) >= 0;
}

void ld_rest_cache_unsubscribe(ld_rest_cache_t *c, ld_rest_topic_kind_t kind, const char *topic,
                               size_t len) {
  topic_set_t *s = &c->sets[kind];
  long idx = set_find(s, topic, len);
  if (idx < 0)
    return;
  free(s->items[idx].text);
  memmove(&s->items[idx], &s->items[idx + 1], (s->n - (size_t)idx - 1) * sizeof *s->items);
  s->n--;
  for (size_t i = c->n; i-- > 0;)
    if (!entry_cached(c, &c->entries[i]))
      remove_entry(c, i);
}

static size_t oldest(const ld_rest_cache_t *c) {
  size_t best = 0;
  for (size_t i = 1; i < c->n; i++)
    if (c->entries[i].msg.timestamp < c->entries[best].msg.timestamp)
      best = i;
  return best;
}

static bool is_duplicate(const ld_rest_cache_t *c, const ld_waku_message_t *msg) {
  for (size_t i = 0; i < c->n; i++)
    if (ld_waku_message_equal(&c->entries[i].msg, msg))
      return true;
  return false;
}

static int entry_fill(entry_t *e, const char *pubsub, const ld_waku_message_t *msg) {
  ld_waku_message_init(&e->msg);
  e->lens[0] = strlen(pubsub);
  e->lens[1] = msg->content_topic_len;
  e->topics[0] = copy_text(pubsub, e->lens[0]);
  e->topics[1] = copy_text(msg->content_topic != NULL ? msg->content_topic : "", e->lens[1]);
  if (e->topics[0] == NULL || e->topics[1] == NULL || ld_waku_message_copy(&e->msg, msg) != 0) {
    entry_clear(e);
    return LD_ERR_NOMEM;
  }
  return 0;
}

int ld_rest_cache_add(ld_rest_cache_t *c, const char *pubsub_topic, const ld_waku_message_t *msg) {
  size_t plen = strlen(pubsub_topic);
  const char *ct = msg->content_topic != NULL ? msg->content_topic : "";
  bool have_p = set_find(&c->sets[0], pubsub_topic, plen) >= 0;
  bool have_c = set_find(&c->sets[1], ct, msg->content_topic_len) >= 0;
  if ((!have_p && !have_c) || is_duplicate(c, msg))
    return 0;
  if (plen > LD_REST_CACHE_MAX_TOPIC_LEN || msg->content_topic_len > LD_REST_CACHE_MAX_TOPIC_LEN)
    return 0;
  entry_t e;
  int rc = entry_fill(&e, pubsub_topic, msg);
  if (rc != 0)
    return rc;
  /* nwaku indexes the message under both topics: the missing one becomes cached. */
  if (!have_p)
    ld_rest_cache_subscribe(c, LD_REST_PUBSUB_TOPIC, pubsub_topic, plen);
  if (!have_c)
    ld_rest_cache_subscribe(c, LD_REST_CONTENT_TOPIC, ct, msg->content_topic_len);
  if (c->n == c->capacity)
    remove_entry(c, oldest(c));
  c->entries[c->n++] = e;
  return 1;
}

int ld_rest_cache_take(ld_rest_cache_t *c, ld_rest_topic_kind_t kind, const char *topic, size_t len,
                       ld_waku_message_t **out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (set_find(&c->sets[kind], topic, len) < 0)
    return LD_ERR_NOT_FOUND;
  size_t count = 0;
  for (size_t i = 0; i < c->n; i++)
    count += same(c->entries[i].topics[kind], c->entries[i].lens[kind], topic, len);
  if (count == 0)
    return 0;
  ld_waku_message_t *msgs = calloc(count, sizeof *msgs);
  if (msgs == NULL)
    return LD_ERR_NOMEM;
  size_t k = 0;
  for (size_t i = 0; i < c->n;) {
    entry_t *e = &c->entries[i];
    if (!same(e->topics[kind], e->lens[kind], topic, len)) {
      i++;
      continue;
    }
    msgs[k++] = e->msg; /* ownership moves to the caller */
    ld_waku_message_init(&e->msg);
    remove_entry(c, i);
  }
  *out = msgs;
  *n = k;
  return 0;
}

size_t ld_rest_cache_count(const ld_rest_cache_t *c) {
  return c->n;
}
