#include "rest/messaging_events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"

typedef struct entry {
  ld_rest_send_status_t st;
  struct entry *prev, *next; /* request order, oldest first */
} entry_t;

struct ld_rest_msg_events {
  size_t max_received;
  size_t max_requests;
  ld_hashmap_t *by_id; /* request ID → entry_t */
  entry_t *oldest, *newest;
  ld_rest_received_t *ring; /* max_received slots */
  size_t ring_start, ring_n;
};

static const char *const KIND_NAMES[] = {"propagated", "sent", "error"};

const char *ld_rest_send_kind_name(ld_rest_send_kind_t kind) {
  return (unsigned)kind < sizeof KIND_NAMES / sizeof KIND_NAMES[0] ? KIND_NAMES[kind] : "unknown";
}

ld_rest_msg_events_t *ld_rest_msg_events_new(size_t max_received, size_t max_requests) {
  ld_rest_msg_events_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->max_received = max_received > 0 ? max_received : LD_REST_MSG_EVENTS_DEFAULT_RECEIVED;
  c->max_requests = max_requests > 0 ? max_requests : LD_REST_MSG_EVENTS_DEFAULT_REQUESTS;
  c->by_id = ld_hashmap_new(0);
  c->ring = calloc(c->max_received, sizeof *c->ring);
  if (c->by_id == NULL || c->ring == NULL) {
    ld_rest_msg_events_free(c);
    return NULL;
  }
  return c;
}

void ld_rest_send_status_clear(ld_rest_send_status_t *s) {
  for (size_t i = 0; i < s->n_events; i++)
    free(s->events[i].error);
  free(s->events);
  s->events = NULL;
  s->n_events = 0;
}

void ld_rest_send_statuses_free(ld_rest_send_status_t *s, size_t n) {
  for (size_t i = 0; s != NULL && i < n; i++)
    ld_rest_send_status_clear(&s[i]);
  free(s);
}

void ld_rest_received_free(ld_rest_received_t *r, size_t n) {
  for (size_t i = 0; r != NULL && i < n; i++)
    ld_waku_message_clear(&r[i].msg);
  free(r);
}

static void entry_free(void *p) {
  entry_t *e = p;
  ld_rest_send_status_clear(&e->st);
  free(e);
}

static void clear_received(ld_rest_msg_events_t *c) {
  for (size_t i = 0; i < c->ring_n; i++)
    ld_waku_message_clear(&c->ring[(c->ring_start + i) % c->max_received].msg);
  c->ring_start = c->ring_n = 0;
}

void ld_rest_msg_events_free(ld_rest_msg_events_t *c) {
  if (c == NULL)
    return;
  ld_hashmap_free(c->by_id, entry_free);
  if (c->ring != NULL)
    clear_received(c);
  free(c->ring);
  free(c);
}

/* ---- send timelines -------------------------------------------------------------------------- */

static void unlink_entry(ld_rest_msg_events_t *c, entry_t *e) {
  if (e->prev != NULL)
    e->prev->next = e->next;
  else
    c->oldest = e->next;
  if (e->next != NULL)
    e->next->prev = e->prev;
  else
    c->newest = e->prev;
  e->prev = e->next = NULL;
}

static void drop_oldest(ld_rest_msg_events_t *c) {
  entry_t *e = c->oldest;
  unlink_entry(c, e);
  ld_hashmap_remove(c->by_id, e->st.request_id, strlen(e->st.request_id));
  entry_free(e);
}

static entry_t *timeline(ld_rest_msg_events_t *c, const char *request_id, size_t len) {
  entry_t *e = ld_hashmap_get(c->by_id, request_id, len);
  if (e != NULL)
    return e;
  if ((e = calloc(1, sizeof *e)) == NULL)
    return NULL;
  memcpy(e->st.request_id, request_id, len);
  if (ld_hashmap_put(c->by_id, request_id, len, e, NULL) != 0) {
    free(e);
    return NULL;
  }
  e->prev = c->newest;
  if (c->newest != NULL)
    c->newest->next = e;
  else
    c->oldest = e;
  c->newest = e;
  while (ld_hashmap_size(c->by_id) > c->max_requests)
    drop_oldest(c);
  return e;
}

static char *copy_error(const char *error) {
  const char *text = error != NULL ? error : "";
  size_t len = strnlen(text, LD_REST_MSG_EVENTS_MAX_ERROR);
  char *out = malloc(len + 1);
  if (out != NULL) {
    memcpy(out, text, len);
    out[len] = '\0';
  }
  return out;
}

static int append_event(entry_t *e, ld_rest_send_kind_t kind, const uint8_t *hash,
                        const char *error, int64_t now_ns) {
  if (e->st.n_events == LD_REST_MSG_EVENTS_MAX_PER_REQUEST)
    return LD_ERR_LIMIT;
  ld_rest_send_event_t ev = {.kind = kind, .has_hash = hash != NULL, .timestamp = now_ns};
  if (hash != NULL)
    memcpy(ev.hash, hash, LD_WAKU_HASH_LEN);
  if (kind == LD_REST_SEND_ERROR && (ev.error = copy_error(error)) == NULL)
    return LD_ERR_NOMEM;
  ld_rest_send_event_t *grown = realloc(e->st.events, (e->st.n_events + 1) * sizeof *grown);
  if (grown == NULL) {
    free(ev.error);
    return LD_ERR_NOMEM;
  }
  e->st.events = grown;
  e->st.events[e->st.n_events++] = ev;
  return 0;
}

int ld_rest_msg_events_add_send(ld_rest_msg_events_t *c, const char *request_id,
                                ld_rest_send_kind_t kind, const uint8_t *hash, const char *error,
                                int64_t now_ns) {
  size_t len = request_id != NULL ? strnlen(request_id, LD_REST_MSG_EVENTS_MAX_REQUEST_ID + 1) : 0;
  if (len == 0 || len > LD_REST_MSG_EVENTS_MAX_REQUEST_ID || (unsigned)kind > LD_REST_SEND_ERROR)
    return LD_ERR_INVALID_ARG;
  entry_t *e = timeline(c, request_id, len);
  if (e == NULL)
    return LD_ERR_NOMEM;
  return append_event(e, kind, hash, error, now_ns);
}

int ld_rest_msg_events_poll_sends(ld_rest_msg_events_t *c, ld_rest_send_status_t **out, size_t *n) {
  size_t count = ld_hashmap_size(c->by_id);
  *out = NULL;
  *n = 0;
  if (count == 0)
    return 0;
  ld_rest_send_status_t *list = calloc(count, sizeof *list);
  if (list == NULL)
    return LD_ERR_NOMEM;
  size_t i = 0;
  while (c->oldest != NULL) {
    entry_t *e = c->oldest;
    unlink_entry(c, e);
    list[i++] = e->st;
    free(e);
  }
  ld_hashmap_clear(c->by_id, NULL);
  *out = list;
  *n = i;
  return 0;
}

int ld_rest_msg_events_poll_send(ld_rest_msg_events_t *c, const char *request_id,
                                 ld_rest_send_status_t *out) {
  entry_t *e = ld_hashmap_remove(c->by_id, request_id, strlen(request_id));
  if (e == NULL)
    return LD_ERR_NOT_FOUND;
  unlink_entry(c, e);
  *out = e->st;
  free(e);
  return 0;
}

size_t ld_rest_msg_events_send_count(const ld_rest_msg_events_t *c) {
  return ld_hashmap_size(c->by_id);
}

/* ---- received messages ----------------------------------------------------------------------- */

int ld_rest_msg_events_add_received(ld_rest_msg_events_t *c, const uint8_t hash[LD_WAKU_HASH_LEN],
                                    const ld_waku_message_t *msg) {
  ld_waku_message_t copy;
  ld_waku_message_init(&copy);
  if (ld_waku_message_copy(&copy, msg) != 0)
    return LD_ERR_NOMEM;
  if (c->ring_n == c->max_received) {
    ld_waku_message_clear(&c->ring[c->ring_start].msg);
    c->ring_start = (c->ring_start + 1) % c->max_received;
    c->ring_n--;
  }
  ld_rest_received_t *slot = &c->ring[(c->ring_start + c->ring_n) % c->max_received];
  memcpy(slot->hash, hash, LD_WAKU_HASH_LEN);
  slot->msg = copy;
  c->ring_n++;
  return 0;
}

int ld_rest_msg_events_poll_received(ld_rest_msg_events_t *c, ld_rest_received_t **out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (c->ring_n == 0)
    return 0;
  ld_rest_received_t *list = calloc(c->ring_n, sizeof *list);
  if (list == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < c->ring_n; i++) {
    ld_rest_received_t *slot = &c->ring[(c->ring_start + i) % c->max_received];
    list[i] = *slot;
    ld_waku_message_init(&slot->msg);
  }
  *out = list;
  *n = c->ring_n;
  c->ring_start = c->ring_n = 0;
  return 0;
}

size_t ld_rest_msg_events_received_count(const ld_rest_msg_events_t *c) {
  return c->ring_n;
}
