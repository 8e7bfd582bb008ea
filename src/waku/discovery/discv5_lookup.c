/* Lookups (discv5-theory.md "Lookup"): the 16 closest nodes to a target, asked three at a time
 * for the distances around the target, until all of them have been asked. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "waku/discovery/discv5_internal.h"

size_t ld_discv5_lookup_distances(const uint8_t *target, const uint8_t *dest, uint16_t out[3]) {
  int td = ld_discv5_log_distance(target, dest);
  size_t n = 0;
  out[n++] = (uint16_t)td;
  for (int i = 1; n < LD_DISCV5_LOOKUP_DISTANCES; i++) {
    if (td + i <= LD_DISCV5_MAX_DISTANCE)
      out[n++] = (uint16_t)(td + i);
    if (n < LD_DISCV5_LOOKUP_DISTANCES && td - i > 0)
      out[n++] = (uint16_t)(td - i);
  }
  return n;
}

static bool seen_add(lookup_t *l, const uint8_t *id) {
  if (ld_hashmap_contains(l->seen, id, LD_DISCV5_NODE_ID_LEN) ||
      ld_hashmap_size(l->seen) >= LD_DISCV5_LOOKUP_MAX_SEEN)
    return false;
  return ld_hashmap_put(l->seen, id, LD_DISCV5_NODE_ID_LEN, NULL, NULL) == 0;
}

/* Inserts a candidate in distance order; beyond the 16 closest it is not kept. */
static void add_candidate(lookup_t *l, const ld_discv5_node_t *n) {
  size_t i = l->n_cands;
  while (i > 0 && ld_discv5_distance_cmp(l->target, n->id, l->cands[i - 1].node.id) < 0)
    i--;
  if (i >= LD_DISCV5_LOOKUP_K)
    return;
  size_t last = l->n_cands < LD_DISCV5_LOOKUP_K ? l->n_cands : LD_DISCV5_LOOKUP_K - 1;
  memmove(&l->cands[i + 1], &l->cands[i], (last - i) * sizeof l->cands[0]);
  l->cands[i].node = *n;
  l->cands[i].state = CAND_NEW;
  if (l->n_cands < LD_DISCV5_LOOKUP_K)
    l->n_cands++;
}

static void finish(ld_discv5_t *d, lookup_t *l, uint64_t now) {
  lookup_t **pp = &d->lookups;
  while (*pp != l)
    pp = &(*pp)->next;
  *pp = l->next;
  d->n_lookups--;
  d->last_lookup_ms = now;
  d->stats.lookups_done++;
  ld_discv5_event_t ev = {.type = LD_DISCV5_EV_LOOKUP_DONE,
                          .request = l->handle,
                          .count = l->reported,
                          .asked = l->asked};
  ld_hashmap_free(l->seen, NULL);
  free(l);
  ld_discv5_emit(d, &ev);
}

static bool ask(ld_discv5_t *d, lookup_t *l, lookup_cand_t *c, uint64_t now) {
  ld_discv5_msg_t m;
  request_t *r;
  ld_discv5_msg_init(&m, LD_DISCV5_FINDNODE);
  m.n_distances = ld_discv5_lookup_distances(l->target, c->node.id, m.distances);
  l->asked++;
  if (ld_discv5_request_new(d, OWNER_LOOKUP, &c->node, &m, now, &r) != 0) {
    c->state = CAND_FAILED;
    return false;
  }
  r->lookup = l;
  c->state = CAND_ASKED;
  l->pending++;
  return true;
}

/* Keeps alpha requests in flight to the closest candidates not yet asked; ends the lookup when
 * none is in flight and none is left to ask. */
static void step(ld_discv5_t *d, lookup_t *l, uint64_t now) {
  for (size_t i = 0; i < l->n_cands && l->pending < LD_DISCV5_ALPHA; i++) {
    if (l->asked >= LD_DISCV5_LOOKUP_MAX_ASKED)
      break;
    if (l->cands[i].state == CAND_NEW)
      ask(d, l, &l->cands[i], now);
  }
  if (l->pending == 0)
    finish(d, l, now);
}

int ld_discv5_lookup_start(ld_discv5_t *d, const uint8_t *target, uint64_t now, uint64_t *handle) {
  if (d->n_lookups >= d->cfg.max_lookups)
    return LD_ERR_LIMIT;
  lookup_t *l = calloc(1, sizeof *l);
  if (l == NULL || (l->seen = ld_hashmap_new(64)) == NULL) {
    free(l);
    return LD_ERR_NOMEM;
  }
  l->handle = d->next_handle++;
  memcpy(l->target, target, LD_DISCV5_NODE_ID_LEN);
  seen_add(l, d->local_id);
  ld_discv5_node_t *closest[LD_DISCV5_LOOKUP_K];
  size_t n = ld_discv5_table_neighbours(d->table, target, LD_DISCV5_LOOKUP_K, false, closest);
  for (size_t i = 0; i < n; i++) {
    seen_add(l, closest[i]->id);
    l->cands[i].node = *closest[i];
    l->cands[i].state = CAND_NEW;
  }
  l->n_cands = n;
  l->next = d->lookups;
  d->lookups = l;
  d->n_lookups++;
  if (handle != NULL)
    *handle = l->handle;
  step(d, l, now);
  return 0;
}

void ld_discv5_lookup_nodes(ld_discv5_t *d, lookup_t *l, const ld_enr_t *enr,
                            const ld_discv5_node_t *n, uint64_t now) {
  ld_discv5_learn(d, n, enr, now);
  if (!seen_add(l, n->id))
    return;
  l->reported++;
  ld_discv5_event_t ev = {.type = LD_DISCV5_EV_DISCOVERED,
                          .request = l->handle,
                          .enr = enr,
                          .node_id = n->id,
                          .addr = &n->addr};
  add_candidate(l, n);
  ld_discv5_emit(d, &ev);
}

void ld_discv5_lookup_answered(ld_discv5_t *d, lookup_t *l, const uint8_t *node_id, bool ok,
                               uint64_t now) {
  for (size_t i = 0; i < l->n_cands; i++) {
    if (l->cands[i].state == CAND_ASKED &&
        memcmp(l->cands[i].node.id, node_id, LD_DISCV5_NODE_ID_LEN) == 0) {
      l->cands[i].state = ok ? CAND_DONE : CAND_FAILED;
      break;
    }
  }
  l->pending--;
  step(d, l, now);
}

void ld_discv5_lookup_free_all(ld_discv5_t *d) {
  while (d->lookups != NULL) {
    lookup_t *l = d->lookups;
    d->lookups = l->next;
    ld_hashmap_free(l->seen, NULL);
    free(l);
  }
  d->n_lookups = 0;
}
