#include "node/broker.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

typedef struct listener {
  int64_t handle;
  int kind; /* 0 once removed */
  ld_broker_listener_fn fn;
  void *user_data;
} listener_t;

typedef struct provider {
  char name[LD_BROKER_MAX_NAME + 1];
  ld_broker_provider_fn fn;
  void *user_data;
} provider_t;

struct ld_broker {
  listener_t *listeners;
  size_t n_listeners, cap_listeners;
  size_t n_removed; /* removed entries waiting for compaction */
  provider_t *providers;
  size_t n_providers, cap_providers;
  int64_t next_handle;
  int depth;
};

ld_broker_t *ld_broker_new(void) {
  ld_broker_t *b = calloc(1, sizeof *b);
  if (b != NULL)
    b->next_handle = 1;
  return b;
}

void ld_broker_free(ld_broker_t *b) {
  if (b == NULL)
    return;
  free(b->listeners);
  free(b->providers);
  free(b);
}

static int grow(void **items, size_t *cap, size_t need, size_t size) {
  if (need <= *cap)
    return 0;
  size_t ncap = *cap == 0 ? 8 : *cap * 2;
  void *p = realloc(*items, ncap * size);
  if (p == NULL)
    return LD_ERR_NOMEM;
  *items = p;
  *cap = ncap;
  return 0;
}

/* Drops removed listeners once no dispatch is walking the array. */
static void compact(ld_broker_t *b) {
  if (b->depth > 0 || b->n_removed == 0)
    return;
  size_t k = 0;
  for (size_t i = 0; i < b->n_listeners; i++)
    if (b->listeners[i].kind != 0)
      b->listeners[k++] = b->listeners[i];
  b->n_listeners = k;
  b->n_removed = 0;
}

int64_t ld_broker_subscribe(ld_broker_t *b, int kind, ld_broker_listener_fn fn, void *user_data) {
  if (kind <= 0 || fn == NULL)
    return LD_ERR_INVALID_ARG;
  if (b->n_listeners - b->n_removed >= LD_BROKER_MAX_LISTENERS)
    return LD_ERR_LIMIT;
  if (grow((void **)&b->listeners, &b->cap_listeners, b->n_listeners + 1, sizeof(listener_t)))
    return LD_ERR_NOMEM;
  listener_t *l = &b->listeners[b->n_listeners++];
  l->handle = b->next_handle++;
  l->kind = kind;
  l->fn = fn;
  l->user_data = user_data;
  return l->handle;
}

int ld_broker_unsubscribe(ld_broker_t *b, int64_t handle) {
  for (size_t i = 0; i < b->n_listeners; i++) {
    listener_t *l = &b->listeners[i];
    if (l->handle == handle && l->kind != 0) {
      l->kind = 0;
      b->n_removed++;
      compact(b);
      return 0;
    }
  }
  return LD_ERR_NOT_FOUND;
}

int ld_broker_publish(ld_broker_t *b, int kind, const void *payload) {
  if (b->depth >= LD_BROKER_MAX_DEPTH)
    return LD_ERR_LIMIT;
  b->depth++;
  /* Listeners added during the dispatch sit beyond `n` and wait for the next publish. */
  size_t n = b->n_listeners;
  int called = 0;
  for (size_t i = 0; i < n; i++) {
    listener_t l = b->listeners[i];
    if (l.kind != kind)
      continue;
    l.fn(kind, payload, l.user_data);
    called++;
  }
  b->depth--;
  compact(b);
  return called;
}

size_t ld_broker_listener_count(const ld_broker_t *b, int kind) {
  size_t n = 0;
  for (size_t i = 0; i < b->n_listeners; i++)
    n += b->listeners[i].kind == kind && kind != 0;
  return n;
}

static provider_t *find_provider(const ld_broker_t *b, const char *name) {
  for (size_t i = 0; i < b->n_providers; i++)
    if (strcmp(b->providers[i].name, name) == 0)
      return &b->providers[i];
  return NULL;
}

int ld_broker_set_provider(ld_broker_t *b, const char *name, ld_broker_provider_fn fn,
                           void *user_data) {
  size_t len = name != NULL ? strlen(name) : 0;
  if (fn == NULL || len == 0 || len > LD_BROKER_MAX_NAME)
    return LD_ERR_INVALID_ARG;
  if (find_provider(b, name) != NULL)
    return LD_ERR_EXISTS;
  if (b->n_providers >= LD_BROKER_MAX_PROVIDERS)
    return LD_ERR_LIMIT;
  if (grow((void **)&b->providers, &b->cap_providers, b->n_providers + 1, sizeof(provider_t)))
    return LD_ERR_NOMEM;
  provider_t *p = &b->providers[b->n_providers++];
  memcpy(p->name, name, len + 1);
  p->fn = fn;
  p->user_data = user_data;
  return 0;
}

int ld_broker_remove_provider(ld_broker_t *b, const char *name) {
  provider_t *p = find_provider(b, name);
  if (p == NULL)
    return LD_ERR_NOT_FOUND;
  *p = b->providers[--b->n_providers];
  return 0;
}

int ld_broker_request(ld_broker_t *b, const char *name, const void *request, void *response) {
  const provider_t *p = find_provider(b, name);
  if (p == NULL)
    return LD_ERR_NOT_FOUND;
  if (b->depth >= LD_BROKER_MAX_DEPTH)
    return LD_ERR_LIMIT;
  provider_t copy = *p; /* the provider may remove itself while answering */
  b->depth++;
  int rc = copy.fn(request, response, copy.user_data);
  b->depth--;
  compact(b);
  return rc;
}
