#include "messaging/records.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"

typedef struct entry {
  ld_message_record_t rec; /* first: a record pointer is an entry pointer */
  struct entry *prev, *next;
  char *pubsub_topic;
  char *error;
} entry_t;

struct ld_records {
  size_t max;
  size_t count;
  entry_t *head, *tail; /* oldest first */
  ld_hashmap_t *by_hash;
  ld_hashmap_t *by_request;
};

ld_records_t *ld_records_new(size_t max_records) {
  ld_records_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return NULL;
  r->max = max_records == 0 ? LD_MESSAGING_DEFAULT_MAX_RECORDS : max_records;
  r->by_hash = ld_hashmap_new(64);
  r->by_request = ld_hashmap_new(64);
  if (r->by_hash == NULL || r->by_request == NULL) {
    ld_records_free(r);
    return NULL;
  }
  return r;
}

static void entry_free(entry_t *e) {
  ld_waku_message_clear(&e->rec.msg);
  free(e->pubsub_topic);
  free(e->error);
  free(e);
}

/* Unlinks `e` from the list and the indexes (only where they point at it) and frees it. */
static void entry_remove(ld_records_t *r, entry_t *e) {
  if (e->prev != NULL)
    e->prev->next = e->next;
  else
    r->head = e->next;
  if (e->next != NULL)
    e->next->prev = e->prev;
  else
    r->tail = e->prev;
  if (e->rec.has_hash && ld_hashmap_get(r->by_hash, e->rec.hash, LD_WAKU_HASH_LEN) == (void *)e)
    ld_hashmap_remove(r->by_hash, e->rec.hash, LD_WAKU_HASH_LEN);
  if (e->rec.has_request_id) {
    size_t len = strlen(e->rec.request_id);
    if (ld_hashmap_get(r->by_request, e->rec.request_id, len) == (void *)e)
      ld_hashmap_remove(r->by_request, e->rec.request_id, len);
  }
  r->count--;
  entry_free(e);
}

void ld_records_free(ld_records_t *r) {
  if (r == NULL)
    return;
  while (r->head != NULL)
    entry_remove(r, r->head);
  ld_hashmap_free(r->by_hash, NULL);
  ld_hashmap_free(r->by_request, NULL);
  free(r);
}

size_t ld_records_count(const ld_records_t *r) {
  return r->count;
}

static entry_t *entry_new(const char *pubsub_topic, const ld_waku_message_t *msg) {
  entry_t *e = calloc(1, sizeof *e);
  if (e == NULL)
    return NULL;
  ld_waku_message_init(&e->rec.msg);
  e->pubsub_topic = strdup(pubsub_topic);
  if (e->pubsub_topic == NULL || ld_waku_message_copy(&e->rec.msg, msg) != 0) {
    entry_free(e);
    return NULL;
  }
  e->rec.pubsub_topic = e->pubsub_topic;
  return e;
}

/* Appends `e` (indexed by hash when it has one), dropping the oldest beyond the bound. */
static int entry_append(ld_records_t *r, entry_t *e) {
  if (e->rec.has_hash && ld_hashmap_put(r->by_hash, e->rec.hash, LD_WAKU_HASH_LEN, e, NULL) != 0)
    return LD_ERR_NOMEM;
  e->prev = r->tail;
  if (r->tail != NULL)
    r->tail->next = e;
  else
    r->head = e;
  r->tail = e;
  r->count++;
  while (r->count > r->max)
    entry_remove(r, r->head);
  return 0;
}

static int set_request_id(ld_records_t *r, entry_t *e, const char *request_id, size_t len) {
  if (ld_hashmap_put(r->by_request, request_id, len, e, NULL) != 0)
    return LD_ERR_NOMEM;
  memcpy(e->rec.request_id, request_id, len + 1);
  e->rec.has_request_id = true;
  e->rec.sending = true;
  return 0;
}

int ld_records_add_send(ld_records_t *r, const char *request_id, const char *pubsub_topic,
                        const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (r == NULL || request_id == NULL || pubsub_topic == NULL || msg == NULL)
    return LD_ERR_INVALID_ARG;
  size_t len = strlen(request_id);
  if (len == 0 || len > LD_MESSAGING_REQUEST_ID_LEN)
    return LD_ERR_INVALID_ARG;
  if (ld_hashmap_contains(r->by_request, request_id, len))
    return LD_ERR_EXISTS;
  entry_t *e = hash != NULL ? ld_hashmap_get(r->by_hash, hash, LD_WAKU_HASH_LEN) : NULL;
  if (e != NULL && !e->rec.has_request_id)
    return set_request_id(r, e, request_id, len);
  e = entry_new(pubsub_topic, msg);
  if (e == NULL)
    return LD_ERR_NOMEM;
  if (hash != NULL) {
    memcpy(e->rec.hash, hash, LD_WAKU_HASH_LEN);
    e->rec.has_hash = true;
  }
  int rc = set_request_id(r, e, request_id, len);
  if (rc != 0) {
    entry_free(e);
    return rc;
  }
  rc = entry_append(r, e);
  if (rc != 0) {
    ld_hashmap_remove(r->by_request, request_id, len);
    entry_free(e);
  }
  return rc;
}

int ld_records_add_received(ld_records_t *r, const char *pubsub_topic,
                            const uint8_t hash[LD_WAKU_HASH_LEN], const ld_waku_message_t *msg) {
  if (r == NULL || pubsub_topic == NULL || hash == NULL || msg == NULL)
    return LD_ERR_INVALID_ARG;
  entry_t *e = ld_hashmap_get(r->by_hash, hash, LD_WAKU_HASH_LEN);
  if (e != NULL) {
    e->rec.received = true;
    return 0;
  }
  e = entry_new(pubsub_topic, msg);
  if (e == NULL)
    return LD_ERR_NOMEM;
  memcpy(e->rec.hash, hash, LD_WAKU_HASH_LEN);
  e->rec.has_hash = true;
  e->rec.received = true;
  int rc = entry_append(r, e);
  if (rc != 0)
    entry_free(e);
  return rc;
}

static entry_t *find_request(const ld_records_t *r, const char *request_id) {
  if (r == NULL || request_id == NULL)
    return NULL;
  return ld_hashmap_get(r->by_request, request_id, strlen(request_id));
}

bool ld_records_mark_propagated(ld_records_t *r, const char *request_id, bool final) {
  entry_t *e = find_request(r, request_id);
  if (e == NULL)
    return false;
  if (final) {
    e->rec.sending = false;
    e->rec.sent = true;
    free(e->error);
    e->error = NULL;
    e->rec.error = NULL;
  }
  return true;
}

bool ld_records_mark_sent(ld_records_t *r, const char *request_id) {
  entry_t *e = find_request(r, request_id);
  if (e == NULL)
    return false;
  e->rec.sending = false;
  e->rec.sent = true;
  e->rec.stored = true;
  free(e->error);
  e->error = NULL;
  e->rec.error = NULL;
  return true;
}

bool ld_records_mark_error(ld_records_t *r, const char *request_id, const char *error) {
  entry_t *e = find_request(r, request_id);
  if (e == NULL)
    return false;
  e->rec.sending = false;
  char *copy = strdup(error != NULL ? error : "");
  if (copy != NULL) {
    free(e->error);
    e->error = copy;
    e->rec.error = copy;
  }
  return true;
}

bool ld_records_mark_given_up(ld_records_t *r, const char *request_id) {
  entry_t *e = find_request(r, request_id);
  if (e == NULL)
    return false;
  e->rec.sending = false;
  return true;
}

bool ld_records_set_published(ld_records_t *r, const char *request_id,
                              const uint8_t hash[LD_WAKU_HASH_LEN], int64_t timestamp) {
  entry_t *e = find_request(r, request_id);
  if (e == NULL || hash == NULL)
    return false;
  if (e->rec.has_hash && memcmp(e->rec.hash, hash, LD_WAKU_HASH_LEN) == 0)
    return true;
  if (ld_hashmap_put(r->by_hash, hash, LD_WAKU_HASH_LEN, e, NULL) != 0)
    return false;
  if (e->rec.has_hash && ld_hashmap_get(r->by_hash, e->rec.hash, LD_WAKU_HASH_LEN) == (void *)e)
    ld_hashmap_remove(r->by_hash, e->rec.hash, LD_WAKU_HASH_LEN);
  memcpy(e->rec.hash, hash, LD_WAKU_HASH_LEN);
  e->rec.has_hash = true;
  e->rec.msg.timestamp = timestamp;
  return true;
}

const ld_message_record_t *ld_records_by_request(const ld_records_t *r, const char *request_id) {
  entry_t *e = find_request(r, request_id);
  return e != NULL ? &e->rec : NULL;
}

const ld_message_record_t *ld_records_by_hash(const ld_records_t *r,
                                              const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (r == NULL || hash == NULL)
    return NULL;
  entry_t *e = ld_hashmap_get(r->by_hash, hash, LD_WAKU_HASH_LEN);
  return e != NULL ? &e->rec : NULL;
}

static bool topic_is(const ld_waku_message_t *msg, const char *topic, size_t len) {
  return msg->content_topic_len == len && memcmp(msg->content_topic, topic, len) == 0;
}

size_t ld_records_by_topic(const ld_records_t *r, const char *content_topic, size_t skip,
                           size_t take, const ld_message_record_t **out, size_t max) {
  if (r == NULL || content_topic == NULL || (out == NULL && max > 0))
    return 0;
  size_t limit = take < max ? take : max;
  size_t len = strlen(content_topic), n = 0;
  for (const entry_t *e = r->head; e != NULL && n < limit; e = e->next) {
    if (!topic_is(&e->rec.msg, content_topic, len))
      continue;
    if (skip > 0) {
      skip--;
      continue;
    }
    out[n++] = &e->rec;
  }
  return n;
}
