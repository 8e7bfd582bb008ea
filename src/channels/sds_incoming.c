/* Receiving: classification and filtering, causal delivery with the incoming buffer, missing
 * dependencies (repair requests, fetches) and lost ones. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "channels/sds_internal.h"

/* ---- dependencies --------------------------------------------------------------------------- */

bool sds_is_lost(const ld_sds_t *s, const char *id, size_t id_len) {
  return ld_hashmap_contains(s->lost, id, id_len);
}

/* Met: logged, or declared lost (it no longer blocks anything). */
static bool dep_met(const ld_sds_t *s, const char *id, size_t id_len) {
  return sds_log_find(&s->log, id, id_len) != NULL || sds_is_lost(s, id, id_len);
}

static int lost_add(ld_sds_t *s, const char *id, size_t id_len) {
  char *copy = sds_strndup(id, id_len);
  if (copy == NULL || ld_hashmap_put(s->lost, id, id_len, NULL, NULL) != 0) {
    free(copy);
    return LD_ERR_NOMEM;
  }
  size_t max = s->cfg.max_lost;
  if (s->lost_len == max) {
    char *old = s->lost_ring[s->lost_head];
    ld_hashmap_remove(s->lost, old, strlen(old));
    free(old);
    s->lost_head = (s->lost_head + 1) % max;
    s->lost_len--;
  }
  s->lost_ring[(s->lost_head + s->lost_len) % max] = copy;
  s->lost_len++;
  return 0;
}

/* ---- waiters: buffered messages by the dependency they wait for ------------------------------ */

static int waiting_add(ld_sds_t *s, const char *dep, size_t dep_len, in_entry_t *e) {
  waiters_t *w = ld_hashmap_get(s->waiting, dep, dep_len);
  if (w == NULL) {
    if ((w = calloc(1, sizeof *w)) == NULL)
      return LD_ERR_NOMEM;
    if (ld_hashmap_put(s->waiting, dep, dep_len, w, NULL) != 0) {
      free(w);
      return LD_ERR_NOMEM;
    }
  }
  if (w->len == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 4;
    in_entry_t **items = realloc(w->items, cap * sizeof *items);
    if (items == NULL)
      return LD_ERR_NOMEM;
    w->items = items;
    w->cap = cap;
  }
  w->items[w->len++] = e;
  return 0;
}

static void waiters_free(waiters_t *w) {
  free(w->items);
  free(w);
}

/* Removes one occurrence (or all, `all`) of `e` from the waiters of `dep`; the number removed. */
static size_t waiting_remove(ld_sds_t *s, const char *dep, size_t dep_len, const in_entry_t *e,
                             bool all) {
  waiters_t *w = ld_hashmap_get(s->waiting, dep, dep_len);
  if (w == NULL)
    return 0;
  size_t removed = 0;
  for (size_t i = 0; i < w->len;) {
    if (w->items[i] != e) {
      i++;
      continue;
    }
    w->items[i] = w->items[--w->len];
    removed++;
    if (!all)
      break;
  }
  if (w->len == 0) {
    ld_hashmap_remove(s->waiting, dep, dep_len);
    waiters_free(w);
  }
  return removed;
}

/* ---- the incoming buffer -------------------------------------------------------------------- */

static void in_free(in_entry_t *e) {
  ld_sds_message_clear(&e->msg);
  free(e->copy);
  free(e->hint);
  free(e);
}

/* Takes `e` out of the buffer (not out of waiter lists). */
static void in_detach(ld_sds_t *s, in_entry_t *e) {
  sds_disarm(s, &e->timer);
  ld_hashmap_remove(s->incoming, e->msg.message_id, e->msg.message_id_len);
  if (e->prev != NULL)
    e->prev->next = e->next;
  else
    s->in_head = e->next;
  if (e->next != NULL)
    e->next->prev = e->prev;
  else
    s->in_tail = e->prev;
  s->incoming_bytes -= e->cost;
}

static void in_forget(ld_sds_t *s, in_entry_t *e) {
  for (size_t i = 0; i < e->msg.causal_history_len; i++) {
    const ld_sds_history_entry_t *d = &e->msg.causal_history[i];
    waiting_remove(s, d->message_id, d->message_id_len, e, true);
  }
  in_detach(s, e);
  in_free(e);
}

void sds_incoming_free_all(ld_sds_t *s) {
  while (s->in_head != NULL)
    in_forget(s, s->in_head);
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(s->missing, &it, NULL, NULL, &v)) {
    sds_entry_clear(&((missing_t *)v)->entry);
    free(v);
  }
}

static int emit_dropped(ld_sds_t *s, const ld_sds_message_t *m) {
  ld_sds_event_t ev = {.type = LD_SDS_EV_DROPPED, .error = LD_ERR_LIMIT};
  ev.message_id = sds_strndup(m->message_id, m->message_id_len);
  ev.sender_id = sds_strndup(m->sender_id, m->sender_id_len);
  s->stats.dropped++;
  if (ev.message_id == NULL || ev.sender_id == NULL) {
    ld_sds_event_clear(&ev);
    return LD_ERR_NOMEM;
  }
  return sds_emit(s, &ev);
}

/* Drops the oldest buffered messages until `cost` more bytes and one more message fit. */
static int make_room(ld_sds_t *s, size_t cost) {
  int rc = 0;
  while (rc == 0 && s->in_head != NULL &&
         (ld_hashmap_size(s->incoming) >= s->cfg.max_incoming ||
          s->incoming_bytes + cost > s->cfg.max_incoming_bytes)) {
    in_entry_t *old = s->in_head;
    rc = emit_dropped(s, &old->msg);
    in_forget(s, old);
  }
  return rc;
}

/* ---- missing dependencies ------------------------------------------------------------------- */

static uint64_t missing_deadline(const ld_sds_t *s, const missing_t *m) {
  uint64_t d = m->lost_at < m->next_fetch ? m->lost_at : m->next_fetch;
  if (m->t_req > s->now && m->t_req < d)
    d = m->t_req;
  return d;
}

static void missing_free(ld_sds_t *s, missing_t *m) {
  sds_disarm(s, &m->timer);
  ld_hashmap_remove(s->missing, m->entry.id, m->entry.id_len);
  sds_entry_clear(&m->entry);
  free(m);
}

static void missing_remove(ld_sds_t *s, const char *id, size_t id_len) {
  missing_t *m = ld_hashmap_get(s->missing, id, id_len);
  if (m != NULL)
    missing_free(s, m);
}

/* Arms the sync that carries due repair requests, keeping repair_sync_gap_ms between two. */
static int schedule_repair_sync(ld_sds_t *s) {
  uint64_t at = s->last_repair_sync + s->cfg.repair_sync_gap_ms;
  if (s->last_repair_sync == 0 || at < s->now)
    at = s->now;
  if (ld_timer_armed(&s->repair_sync_timer.t) && s->repair_sync_timer.t.deadline <= at)
    return 0;
  return sds_arm(s, &s->repair_sync_timer, at);
}

static missing_t *missing_new(ld_sds_t *s, const ld_sds_history_entry_t *dep) {
  missing_t *m = calloc(1, sizeof *m);
  if (m == NULL || sds_entry_copy(&m->entry, dep) != 0) {
    free(m);
    return NULL;
  }
  const ld_sds_config_t *c = &s->cfg;
  m->timer.kind = TK_MISSING;
  m->lost_at = c->lost_timeout_ms > 0 ? s->now + c->lost_timeout_ms : UINT64_MAX;
  m->t_req = c->repair ? sds_repair_t_req(s, dep->message_id, dep->message_id_len) : UINT64_MAX;
  m->next_fetch = UINT64_MAX;
  if (c->max_fetches > 0 && dep->has_retrieval_hint && dep->retrieval_hint_len > 0)
    m->next_fetch = s->now + (c->repair ? c->fetch_delay_ms : 0);
  return m;
}

/* Tracks a dependency neither logged, lost nor buffered (MISSING event the first time). */
static int missing_add(ld_sds_t *s, const ld_sds_history_entry_t *dep) {
  if (ld_hashmap_contains(s->missing, dep->message_id, dep->message_id_len))
    return 0;
  if (ld_hashmap_size(s->missing) >= s->cfg.max_missing) {
    s->stats.missing_untracked++; /* the messages waiting for it still expire */
    return 0;
  }
  missing_t *m = missing_new(s, dep);
  if (m == NULL)
    return LD_ERR_NOMEM;
  if (ld_hashmap_put(s->missing, m->entry.id, m->entry.id_len, m, NULL) != 0 ||
      sds_arm(s, &m->timer, missing_deadline(s, m)) != 0) {
    missing_free(s, m);
    return LD_ERR_NOMEM;
  }
  s->stats.missing++;
  int rc = m->t_req <= s->now ? schedule_repair_sync(s) : 0; /* T_min 0: due at once */
  return rc != 0 ? rc : sds_emit_entry(s, LD_SDS_EV_MISSING, &m->entry);
}

int sds_missing_postpone(ld_sds_t *s, const char *id, size_t id_len) {
  missing_t *m = ld_hashmap_get(s->missing, id, id_len);
  if (m == NULL || m->t_req == UINT64_MAX)
    return 0;
  uint64_t later = s->now + s->cfg.repair_t_max_ms;
  if (m->t_req < later)
    m->t_req = later;
  return sds_arm(s, &m->timer, missing_deadline(s, m));
}

/* Lowest T_req first: a small selection over the table (at most max_missing entries). */
size_t sds_peek_repair_requests(ld_sds_t *s, size_t max, ld_sds_history_entry_t *out,
                                missing_t **from) {
  size_t n = 0;
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(s->missing, &it, NULL, NULL, &v)) {
    missing_t *m = v;
    if (m->t_req > s->now)
      continue;
    size_t at = n < max ? n++ : max;
    while (at > 0 && from[at - 1]->t_req > m->t_req) {
      if (at < max)
        from[at] = from[at - 1];
      at--;
    }
    if (at < max)
      from[at] = m;
  }
  for (size_t i = 0; i < n; i++)
    sds_entry_view(&from[i]->entry, &out[i]);
  return n;
}

void sds_commit_repair_requests(ld_sds_t *s, missing_t **from, size_t n) {
  for (size_t i = 0; i < n; i++) {
    missing_t *m = from[i];
    m->requests++;
    m->t_req =
        m->requests < s->cfg.repair_max_requests ? s->now + s->cfg.repair_t_max_ms : UINT64_MAX;
    s->stats.repair_requests_sent++;
    if (sds_arm(s, &m->timer, missing_deadline(s, m)) != 0)
      s->stats.refused++; /* out of memory: it stays due and rides on a later message */
  }
}

bool sds_repair_request_due(const ld_sds_t *s) {
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(s->missing, &it, NULL, NULL, &v))
    if (((missing_t *)v)->t_req <= s->now)
      return true;
  return false;
}

/* ---- delivery ------------------------------------------------------------------------------- */

typedef struct ready {
  in_entry_t **items;
  size_t len, cap;
} ready_t;

static int ready_push(ready_t *r, in_entry_t *e) {
  if (r->len == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 8;
    in_entry_t **items = realloc(r->items, cap * sizeof *items);
    if (items == NULL)
      return LD_ERR_NOMEM;
    r->items = items;
    r->cap = cap;
  }
  r->items[r->len++] = e;
  return 0;
}

/* The buffered messages waiting for `id` get one dependency fewer; complete ones are queued. */
static int release_waiters(ld_sds_t *s, const char *id, size_t id_len, ready_t *r) {
  waiters_t *w = ld_hashmap_remove(s->waiting, id, id_len);
  if (w == NULL)
    return 0;
  int rc = 0;
  for (size_t i = 0; i < w->len; i++) {
    in_entry_t *e = w->items[i];
    if (--e->unmet > 0)
      continue;
    if (ready_push(r, e) != 0) {
      e->unmet++; /* stays buffered; its expiry resolves it */
      rc = LD_ERR_NOMEM;
    }
  }
  waiters_free(w);
  return rc;
}

/* Logs a content message and emits DELIVERED. `copy` (NULL: made here) is taken over. */
static int deliver_one(ld_sds_t *s, const ld_sds_message_t *m, const uint8_t *hint, size_t hint_len,
                       uint8_t *copy, size_t copy_len) {
  int rc = copy != NULL ? 0 : sds_encode_repair_copy(m, &copy, &copy_len);
  if (rc == 0)
    rc = sds_log_insert(s, m->lamport, m->message_id, m->message_id_len, m->sender_id,
                        m->sender_id_len, hint, hint_len, copy, copy_len);
  if (rc != 0)
    return rc;
  if (m->lamport > s->lamport)
    s->lamport = m->lamport;
  s->stats.delivered++;
  ld_sds_event_t ev = {.type = LD_SDS_EV_DELIVERED, .lamport = m->lamport};
  ev.message_id = sds_strndup(m->message_id, m->message_id_len);
  ev.sender_id = sds_strndup(m->sender_id, m->sender_id_len);
  ev.data = sds_memdup(m->content, m->content_len);
  ev.len = m->content_len;
  if (hint_len > 0) {
    ev.hint = sds_memdup(hint, hint_len);
    ev.hint_len = hint_len;
  }
  if (ev.message_id == NULL || ev.sender_id == NULL || ev.data == NULL ||
      (hint_len > 0 && ev.hint == NULL)) {
    ld_sds_event_clear(&ev);
    return LD_ERR_NOMEM;
  }
  return sds_emit(s, &ev);
}

/* Delivers every queued buffered message and, in turn, those they complete. */
static int cascade(ld_sds_t *s, ready_t *r) {
  int rc = 0;
  for (size_t i = 0; i < r->len; i++) {
    in_entry_t *e = r->items[i];
    in_detach(s, e);
    int rc2 = deliver_one(s, &e->msg, e->hint, e->hint_len, e->copy, e->copy_len);
    e->copy = NULL; /* taken over by the log */
    if (rc2 == 0)
      rc2 = release_waiters(s, e->msg.message_id, e->msg.message_id_len, r);
    if (rc == 0)
      rc = rc2;
    in_free(e);
  }
  free(r->items);
  memset(r, 0, sizeof *r);
  return rc;
}

static int deliver(ld_sds_t *s, const ld_sds_message_t *m, const uint8_t *hint, size_t hint_len) {
  ready_t r = {0};
  int rc = deliver_one(s, m, hint, hint_len, NULL, 0);
  if (rc == 0)
    rc = release_waiters(s, m->message_id, m->message_id_len, &r);
  int rc2 = cascade(s, &r);
  return rc != 0 ? rc : rc2;
}

/* ---- lost dependencies ---------------------------------------------------------------------- */

/* Declares `dep` irretrievably lost (LOST event): it stops blocking its waiters. Nothing
 * happens for a dependency that is logged, buffered or already lost. */
static int declare_lost(ld_sds_t *s, const sds_entry_t *dep) {
  if (dep_met(s, dep->id, dep->id_len) || ld_hashmap_contains(s->incoming, dep->id, dep->id_len)) {
    missing_remove(s, dep->id, dep->id_len);
    return 0;
  }
  missing_t *m = ld_hashmap_get(s->missing, dep->id, dep->id_len);
  int rc = sds_emit_entry(s, LD_SDS_EV_LOST, m != NULL ? &m->entry : dep);
  if (m != NULL)
    missing_free(s, m);
  s->stats.lost++;
  if (rc == 0)
    rc = lost_add(s, dep->id, dep->id_len);
  ready_t r = {0};
  if (rc == 0)
    rc = release_waiters(s, dep->id, dep->id_len, &r);
  int rc2 = cascade(s, &r);
  return rc != 0 ? rc : rc2;
}

int sds_missing_on_timer(ld_sds_t *s, missing_t *m) {
  if (s->now >= m->lost_at) {
    sds_entry_t dep = {0}; /* declare_lost frees m: it gets the ID by value */
    dep.id = sds_strndup(m->entry.id, m->entry.id_len);
    dep.id_len = m->entry.id_len;
    int rc = dep.id != NULL ? declare_lost(s, &dep) : LD_ERR_NOMEM;
    sds_entry_clear(&dep);
    return rc;
  }
  int rc = 0;
  if (m->next_fetch <= s->now) {
    m->fetches++;
    s->stats.fetches++;
    m->next_fetch =
        m->fetches < s->cfg.max_fetches ? s->now + s->cfg.fetch_interval_ms : UINT64_MAX;
    rc = sds_emit_entry(s, LD_SDS_EV_FETCH, &m->entry);
  }
  if (rc == 0 && m->t_req <= s->now)
    rc = schedule_repair_sync(s);
  int rc2 = sds_arm(s, &m->timer, missing_deadline(s, m));
  return rc != 0 ? rc : rc2;
}

/* ---- expiry of a buffered message ----------------------------------------------------------- */

/* What the walk over a buffered message's dependencies found. */
typedef struct resolution {
  sds_entry_t *lost; /* dependencies outside log and buffer: declared lost */
  size_t n_lost, cap_lost;
  struct edge {
    in_entry_t *from;
    const ld_sds_history_entry_t *dep;
  } * cycles; /* dependencies that close a cycle inside the buffer: ignored */
  size_t n_cycles, cap_cycles;
  in_entry_t **stack;
} resolution_t;

static int push_lost(resolution_t *r, const ld_sds_history_entry_t *dep) {
  if (r->n_lost == r->cap_lost) {
    size_t cap = r->cap_lost ? 2 * r->cap_lost : 8;
    sds_entry_t *items = realloc(r->lost, cap * sizeof *items);
    if (items == NULL)
      return LD_ERR_NOMEM;
    r->lost = items;
    r->cap_lost = cap;
  }
  int rc = sds_entry_copy(&r->lost[r->n_lost], dep);
  if (rc == 0)
    r->n_lost++;
  return rc;
}

static int push_cycle(resolution_t *r, in_entry_t *from, const ld_sds_history_entry_t *dep) {
  if (r->n_cycles == r->cap_cycles) {
    size_t cap = r->cap_cycles ? 2 * r->cap_cycles : 4;
    struct edge *items = realloc(r->cycles, cap * sizeof *items);
    if (items == NULL)
      return LD_ERR_NOMEM;
    r->cycles = items;
    r->cap_cycles = cap;
  }
  r->cycles[r->n_cycles].from = from;
  r->cycles[r->n_cycles++].dep = dep;
  return 0;
}

/* Depth-first walk from `root` over its buffered dependencies, collecting the dependencies to
 * declare lost and the ones that close a cycle; changes nothing but the walk marks. `next[i]` is
 * the next dependency to look at of the entry at stack depth i. */
static int walk(ld_sds_t *s, in_entry_t *root, resolution_t *r) {
  size_t n = ld_hashmap_size(s->incoming) + 1;
  size_t *next = calloc(n, sizeof *next);
  r->stack = calloc(n, sizeof *r->stack);
  if (next == NULL || r->stack == NULL) {
    free(next);
    return LD_ERR_NOMEM;
  }
  uint64_t walk_id = ++s->walk;
  size_t depth = 0;
  int rc = 0;
  root->mark = walk_id;
  root->on_stack = true;
  r->stack[depth++] = root;
  while (depth > 0 && rc == 0) {
    in_entry_t *e = r->stack[depth - 1];
    if (next[depth - 1] == e->msg.causal_history_len) {
      e->on_stack = false;
      next[--depth] = 0;
      continue;
    }
    const ld_sds_history_entry_t *d = &e->msg.causal_history[next[depth - 1]++];
    if (dep_met(s, d->message_id, d->message_id_len))
      continue;
    in_entry_t *b = ld_hashmap_get(s->incoming, d->message_id, d->message_id_len);
    if (b == NULL)
      rc = push_lost(r, d);
    else if (b->on_stack)
      rc = push_cycle(r, e, d);
    else if (b->mark != walk_id) {
      b->mark = walk_id;
      b->on_stack = true;
      r->stack[depth++] = b;
    }
  }
  for (size_t i = 0; i < depth; i++)
    r->stack[i]->on_stack = false;
  free(next);
  return rc;
}

static void resolution_clear(resolution_t *r) {
  for (size_t i = 0; i < r->n_lost; i++)
    sds_entry_clear(&r->lost[i]);
  free(r->lost);
  free(r->cycles);
  free(r->stack);
}

/* A buffered message waited lost_timeout_ms: the dependencies it (and the buffered messages it
 * depends on) still miss are declared lost, dependency cycles inside the buffer are cut, and the
 * whole group is delivered in causal order. */
int sds_incoming_on_timer(ld_sds_t *s, in_entry_t *root) {
  resolution_t r = {0};
  int rc = walk(s, root, &r);
  ready_t ready = {0};
  for (size_t i = 0; rc == 0 && i < r.n_cycles; i++) {
    in_entry_t *e = r.cycles[i].from;
    const ld_sds_history_entry_t *d = r.cycles[i].dep;
    /* `unmet` counts the waiter entries: an edge the message never waited on (its dependency
     * was logged or lost when it arrived, and forgotten since) is not one */
    if (waiting_remove(s, d->message_id, d->message_id_len, e, false) == 1 && --e->unmet == 0)
      rc = ready_push(&ready, e);
  }
  char *id = sds_strndup(root->msg.message_id, root->msg.message_id_len);
  size_t id_len = root->msg.message_id_len;
  int rc2 = cascade(s, &ready);
  if (rc == 0)
    rc = rc2;
  for (size_t i = 0; rc == 0 && i < r.n_lost; i++)
    rc = declare_lost(s, &r.lost[i]);
  resolution_clear(&r);
  /* still waiting (out of memory on the way): try again later rather than never */
  in_entry_t *left = id != NULL ? ld_hashmap_get(s->incoming, id, id_len) : NULL;
  if (left != NULL && rc2 == 0)
    rc2 = sds_arm(s, &left->timer, s->now + s->cfg.lost_timeout_ms);
  free(id);
  return rc != 0 ? rc : rc2;
}

/* ---- receiving ------------------------------------------------------------------------------ */

static bool same_text(const char *a, size_t alen, const char *b, size_t blen) {
  return alen == blen && memcmp(a, b, alen) == 0;
}

static int emit_ephemeral(ld_sds_t *s, const ld_sds_message_t *m) {
  ld_sds_event_t ev = {.type = LD_SDS_EV_EPHEMERAL};
  ev.message_id = sds_strndup(m->message_id, m->message_id_len);
  ev.sender_id = sds_strndup(m->sender_id, m->sender_id_len);
  ev.data = sds_memdup(m->content, m->content_len);
  ev.len = m->content_len;
  s->stats.ephemeral++;
  if (ev.message_id == NULL || ev.sender_id == NULL || ev.data == NULL) {
    ld_sds_event_clear(&ev);
    return LD_ERR_NOMEM;
  }
  return sds_emit(s, &ev);
}

/* Counts the unmet dependencies and tracks the missing ones. */
static int check_dependencies(ld_sds_t *s, const ld_sds_message_t *m, size_t *unmet) {
  *unmet = 0;
  for (size_t i = 0; i < m->causal_history_len; i++) {
    const ld_sds_history_entry_t *d = &m->causal_history[i];
    if (dep_met(s, d->message_id, d->message_id_len))
      continue;
    (*unmet)++;
    if (ld_hashmap_contains(s->incoming, d->message_id, d->message_id_len) ||
        same_text(d->message_id, d->message_id_len, m->message_id, m->message_id_len))
      continue;
    int rc = missing_add(s, d);
    if (rc != 0)
      return rc;
  }
  return 0;
}

static in_entry_t *in_new(const ld_sds_message_t *m, const uint8_t *hint, size_t hint_len) {
  in_entry_t *e = calloc(1, sizeof *e);
  if (e == NULL)
    return NULL;
  e->timer.kind = TK_INCOMING;
  ld_sds_message_init(&e->msg);
  if (sds_encode_repair_copy(m, &e->copy, &e->copy_len) != 0 ||
      ld_sds_message_decode(e->copy, e->copy_len, &e->msg, NULL, 0) != 0 ||
      (hint_len > 0 && (e->hint = sds_memdup(hint, hint_len)) == NULL)) {
    in_free(e);
    return NULL;
  }
  e->hint_len = hint_len;
  return e;
}

static int in_link(ld_sds_t *s, in_entry_t *e) {
  if (ld_hashmap_put(s->incoming, e->msg.message_id, e->msg.message_id_len, e, NULL) != 0)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < e->msg.causal_history_len; i++) {
    const ld_sds_history_entry_t *d = &e->msg.causal_history[i];
    if (!dep_met(s, d->message_id, d->message_id_len) &&
        waiting_add(s, d->message_id, d->message_id_len, e) != 0)
      return LD_ERR_NOMEM;
  }
  e->prev = s->in_tail;
  if (s->in_tail != NULL)
    s->in_tail->next = e;
  else
    s->in_head = e;
  s->in_tail = e;
  s->incoming_bytes += e->cost;
  if (s->cfg.lost_timeout_ms > 0)
    return sds_arm(s, &e->timer, s->now + s->cfg.lost_timeout_ms);
  return 0;
}

static int buffer(ld_sds_t *s, const ld_sds_message_t *m, size_t unmet, const uint8_t *hint,
                  size_t hint_len) {
  in_entry_t *e = in_new(m, hint, hint_len);
  if (e == NULL)
    return LD_ERR_NOMEM;
  e->unmet = unmet;
  e->cost = sizeof *e + e->copy_len + hint_len + unmet * SDS_DEP_COST;
  s->stats.buffered++;
  if (e->cost > s->cfg.max_incoming_bytes) {
    int rc = emit_dropped(s, m);
    in_free(e);
    return rc;
  }
  int rc = make_room(s, e->cost);
  if (rc == 0 && (rc = in_link(s, e)) != 0)
    in_forget(s, e);
  return rc;
}

/* Refuses what cannot be processed: LD_ERR_MALFORMED, LD_ERR_OVERFLOW. */
static int admissible(ld_sds_t *s, const ld_sds_message_t *m, ld_sds_class_t cls) {
  if (cls == LD_SDS_CLASS_INVALID) {
    s->stats.refused++;
    return LD_ERR_MALFORMED;
  }
  uint64_t ahead = s->cfg.max_lamport_ahead_ms;
  if (cls != LD_SDS_CLASS_EPHEMERAL && ahead > 0 && m->lamport > s->now &&
      m->lamport - s->now > ahead) {
    s->stats.refused++;
    return LD_ERR_OVERFLOW;
  }
  return 0;
}

/* Duplicates, own and ephemeral messages; *done when nothing more is to be done. */
static int filter(ld_sds_t *s, const ld_sds_message_t *m, ld_sds_class_t cls, ld_sds_rx_t *out,
                  bool *done) {
  *done = true;
  if (cls == LD_SDS_CLASS_CONTENT) {
    /* whoever sent it, it is no longer missing, and a repair answer is no longer needed */
    missing_remove(s, m->message_id, m->message_id_len);
    sds_repair_forget(s, m->message_id, m->message_id_len);
    if (sds_log_find(&s->log, m->message_id, m->message_id_len) != NULL ||
        ld_hashmap_contains(s->incoming, m->message_id, m->message_id_len)) {
      s->stats.duplicates++;
      *out = LD_SDS_RX_DUPLICATE;
      return 0;
    }
  }
  if (same_text(m->sender_id, m->sender_id_len, s->self, s->self_len)) {
    s->stats.own++;
    *out = LD_SDS_RX_OWN;
    return 0;
  }
  if (cls == LD_SDS_CLASS_EPHEMERAL) {
    *out = LD_SDS_RX_EPHEMERAL;
    return emit_ephemeral(s, m);
  }
  *done = false;
  return 0;
}

int sds_incoming_receive(ld_sds_t *s, const ld_sds_message_t *m, const uint8_t *hint,
                         size_t hint_len, ld_sds_rx_t *out) {
  if (!same_text(m->channel_id, m->channel_id_len, s->channel_id, s->channel_id_len)) {
    s->stats.foreign++;
    *out = LD_SDS_RX_FOREIGN;
    return 0;
  }
  ld_sds_class_t cls = ld_sds_message_class(m);
  bool done;
  int rc = admissible(s, m, cls);
  if (rc == 0)
    rc = filter(s, m, cls, out, &done);
  if (rc != 0 || done)
    return rc;
  if (s->cfg.repair && (rc = sds_repair_process_requests(s, m)) != 0)
    return rc;
  if ((rc = sds_review_acks(s, m)) != 0)
    return rc;
  if (cls == LD_SDS_CLASS_CONTENT)
    sds_bloom_insert(s, m->message_id, m->message_id_len);
  size_t unmet;
  if ((rc = check_dependencies(s, m, &unmet)) != 0)
    return rc;
  if (cls == LD_SDS_CLASS_SYNC) {
    s->stats.syncs_received++;
    sds_restart_sync(s, 2);
    *out = LD_SDS_RX_SYNC;
    return 0;
  }
  sds_restart_sync(s, 1);
  sds_ack_sync_on_content(s);
  *out = unmet == 0 ? LD_SDS_RX_DELIVERED : LD_SDS_RX_BUFFERED;
  rc = unmet == 0 ? deliver(s, m, hint, hint_len) : buffer(s, m, unmet, hint, hint_len);
  return rc != 0 ? rc : sds_ack_sync_if_due(s);
}
