#include "p2p/gossipsub/rpc.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/varint.h"

#define ID_LEN LD_GS_RPC_ID_LEN

int ld_gs_rpc_decode(const uint8_t *buf, size_t len, ld_gs_rpc_t **out) {
  if (out == NULL || (buf == NULL && len > 0)) {
    return LD_ERR_INVALID_ARG;
  }
  static const uint8_t empty = 0;
  ld_gs_rpc_t *rpc = ld__gossipsub__rpc__unpack(NULL, len, buf ? buf : &empty);
  if (rpc == NULL) {
    return LD_ERR_BAD_PROTOBUF;
  }
  *out = rpc;
  return 0;
}

void ld_gs_rpc_free(ld_gs_rpc_t *rpc) {
  if (rpc != NULL) {
    ld__gossipsub__rpc__free_unpacked(rpc, NULL);
  }
}

/* A length-delimited field with a one-byte tag (all our field numbers are < 16). */
static inline size_t fld(size_t n) {
  return 1 + ld_varint_len(n) + n;
}

size_t ld_gs_rpc_msg_size(size_t topic_len, size_t data_len) {
  return fld(fld(data_len) + fld(topic_len));
}

/* ---- outbox: queueing --------------------------------------------------------------------- */

void ld_gs_out_init(ld_gs_out_t *o) {
  memset(o, 0, sizeof *o);
}

void ld_gs_out_clear(ld_gs_out_t *o) {
  free(o->items);
  free(o->ids);
  ld_gs_out_init(o);
}

void ld_gs_out_reset(ld_gs_out_t *o) {
  o->n_items = 0;
  o->n_ids = 0;
}

static ld_gs_out_item_t *new_item(ld_gs_out_t *o, ld_gs_out_kind_t kind, const char *topic) {
  if (o->n_items == o->cap_items) {
    size_t ncap = o->cap_items ? o->cap_items * 2 : 8;
    ld_gs_out_item_t *items = realloc(o->items, ncap * sizeof *items);
    if (items == NULL) {
      return NULL;
    }
    o->items = items;
    o->cap_items = ncap;
  }
  ld_gs_out_item_t *it = &o->items[o->n_items];
  memset(it, 0, sizeof *it);
  it->kind = (uint8_t)kind;
  it->topic = topic;
  it->topic_len = topic ? strlen(topic) : 0;
  return it;
}

static int reserve_ids(ld_gs_out_t *o, size_t n) {
  if (o->n_ids + n <= o->cap_ids) {
    return 0;
  }
  size_t ncap = o->cap_ids ? o->cap_ids : 16;
  while (ncap < o->n_ids + n) {
    ncap *= 2;
  }
  uint8_t *ids = realloc(o->ids, ncap * ID_LEN);
  if (ids == NULL) {
    return LD_ERR_NOMEM;
  }
  o->ids = ids;
  o->cap_ids = ncap;
  return 0;
}

static int add_ids(ld_gs_out_t *o, ld_gs_out_kind_t kind, const char *topic, const uint8_t *ids,
                   size_t n) {
  if (n == 0) {
    return 0;
  }
  if (reserve_ids(o, n) != 0) {
    return LD_ERR_NOMEM;
  }
  ld_gs_out_item_t *it = new_item(o, kind, topic);
  if (it == NULL) {
    return LD_ERR_NOMEM;
  }
  memcpy(o->ids + o->n_ids * ID_LEN, ids, n * ID_LEN);
  it->ids_off = o->n_ids;
  it->n_ids = n;
  o->n_ids += n;
  o->n_items++;
  return 0;
}

int ld_gs_out_sub(ld_gs_out_t *o, const char *topic, bool subscribe) {
  ld_gs_out_item_t *it = new_item(o, LD_GS_OUT_SUB, topic);
  if (it == NULL) {
    return LD_ERR_NOMEM;
  }
  it->flag = subscribe;
  o->n_items++;
  return 0;
}

int ld_gs_out_msg(ld_gs_out_t *o, const char *topic, const uint8_t *data, size_t len) {
  ld_gs_out_item_t *it = new_item(o, LD_GS_OUT_MSG, topic);
  if (it == NULL) {
    return LD_ERR_NOMEM;
  }
  it->data = data;
  it->len = len;
  o->n_items++;
  return 0;
}

int ld_gs_out_ihave(ld_gs_out_t *o, const char *topic, const uint8_t *ids, size_t n) {
  return add_ids(o, LD_GS_OUT_IHAVE, topic, ids, n);
}

int ld_gs_out_iwant(ld_gs_out_t *o, const uint8_t *ids, size_t n) {
  return add_ids(o, LD_GS_OUT_IWANT, NULL, ids, n);
}

int ld_gs_out_idontwant(ld_gs_out_t *o, const uint8_t *ids, size_t n) {
  return add_ids(o, LD_GS_OUT_IDONTWANT, NULL, ids, n);
}

int ld_gs_out_graft(ld_gs_out_t *o, const char *topic) {
  if (new_item(o, LD_GS_OUT_GRAFT, topic) == NULL) {
    return LD_ERR_NOMEM;
  }
  o->n_items++;
  return 0;
}

int ld_gs_out_prune(ld_gs_out_t *o, const char *topic, bool with_backoff, uint64_t backoff_s) {
  ld_gs_out_item_t *it = new_item(o, LD_GS_OUT_PRUNE, topic);
  if (it == NULL) {
    return LD_ERR_NOMEM;
  }
  it->flag = with_backoff;
  it->backoff = backoff_s;
  o->n_items++;
  return 0;
}

/* ---- outbox: sizing ----------------------------------------------------------------------- */

typedef struct piece {
  size_t item;
  size_t ids_start; /* absolute index into the id buffer */
  size_t n;
} piece_t;

/* The RPC being assembled: its pieces and the byte counts that give its exact size. */
typedef struct builder {
  size_t subs, msgs, ctrl_other, iwant_body, idw_body;
  size_t n_ctrl, n_iwant_ids, n_idw_ids, n_ihave_ids;
  size_t count[LD_GS_OUT_IDONTWANT + 1];
  piece_t *pieces;
  size_t n, cap;
} builder_t;

static size_t ctrl_size(size_t other, size_t iwant, bool has_iwant, size_t idw, bool has_idw) {
  return other + (has_iwant ? fld(iwant) : 0) + (has_idw ? fld(idw) : 0);
}

static size_t rpc_size(const builder_t *b) {
  size_t c =
      ctrl_size(b->ctrl_other, b->iwant_body, b->n_iwant_ids > 0, b->idw_body, b->n_idw_ids > 0);
  return b->subs + b->msgs + (b->n_ctrl > 0 ? fld(c) : 0);
}

/* Size of the RPC if `k` ids (or the whole item when it carries none) were added. */
static size_t size_with(const builder_t *b, const ld_gs_out_item_t *it, size_t k) {
  builder_t t = *b;
  size_t idf = k * fld(ID_LEN);
  switch ((ld_gs_out_kind_t)it->kind) {
  case LD_GS_OUT_SUB:
    t.subs += fld(2 + fld(it->topic_len));
    return rpc_size(&t);
  case LD_GS_OUT_MSG:
    t.msgs += fld(fld(it->len) + fld(it->topic_len));
    return rpc_size(&t);
  case LD_GS_OUT_IHAVE:
    t.ctrl_other += fld(fld(it->topic_len) + idf);
    break;
  case LD_GS_OUT_GRAFT:
    t.ctrl_other += fld(fld(it->topic_len));
    break;
  case LD_GS_OUT_PRUNE:
    t.ctrl_other += fld(fld(it->topic_len) + (it->flag ? 1 + ld_varint_len(it->backoff) : 0));
    break;
  case LD_GS_OUT_IWANT:
    t.iwant_body += idf;
    t.n_iwant_ids += k;
    break;
  case LD_GS_OUT_IDONTWANT:
    t.idw_body += idf;
    t.n_idw_ids += k;
    break;
  }
  t.n_ctrl++;
  return rpc_size(&t);
}

static bool has_ids(const ld_gs_out_item_t *it) {
  return it->kind == LD_GS_OUT_IHAVE || it->kind == LD_GS_OUT_IWANT ||
         it->kind == LD_GS_OUT_IDONTWANT;
}

/* How many of the item's remaining `left` ids fit (binary search; size grows with k). For items
 * without ids: 1 if it fits, else 0. */
static size_t fit(const builder_t *b, const ld_gs_out_item_t *it, size_t left, size_t max) {
  if (!has_ids(it)) {
    return size_with(b, it, 0) <= max ? 1 : 0;
  }
  size_t lo = 0, hi = left;
  while (lo < hi) {
    size_t mid = lo + (hi - lo + 1) / 2;
    if (size_with(b, it, mid) <= max) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

static int add_piece(builder_t *b, const ld_gs_out_item_t *it, size_t item, size_t start,
                     size_t k) {
  if (b->n == b->cap) {
    size_t ncap = b->cap ? b->cap * 2 : 16;
    piece_t *p = realloc(b->pieces, ncap * sizeof *p);
    if (p == NULL) {
      return LD_ERR_NOMEM;
    }
    b->pieces = p;
    b->cap = ncap;
  }
  size_t idf = k * fld(ID_LEN);
  switch ((ld_gs_out_kind_t)it->kind) {
  case LD_GS_OUT_SUB:
    b->subs += fld(2 + fld(it->topic_len));
    break;
  case LD_GS_OUT_MSG:
    b->msgs += fld(fld(it->len) + fld(it->topic_len));
    break;
  case LD_GS_OUT_IHAVE:
    b->ctrl_other += fld(fld(it->topic_len) + idf);
    b->n_ihave_ids += k;
    break;
  case LD_GS_OUT_GRAFT:
    b->ctrl_other += fld(fld(it->topic_len));
    break;
  case LD_GS_OUT_PRUNE:
    b->ctrl_other += fld(fld(it->topic_len) + (it->flag ? 1 + ld_varint_len(it->backoff) : 0));
    break;
  case LD_GS_OUT_IWANT:
    b->iwant_body += idf;
    b->n_iwant_ids += k;
    break;
  case LD_GS_OUT_IDONTWANT:
    b->idw_body += idf;
    b->n_idw_ids += k;
    break;
  }
  if (it->kind != LD_GS_OUT_SUB && it->kind != LD_GS_OUT_MSG) {
    b->n_ctrl++;
  }
  b->count[it->kind]++;
  b->pieces[b->n++] = (piece_t){item, start, k};
  return 0;
}

static void builder_reset(builder_t *b) {
  piece_t *p = b->pieces;
  size_t cap = b->cap;
  memset(b, 0, sizeof *b);
  b->pieces = p;
  b->cap = cap;
}

/* ---- outbox: packing ---------------------------------------------------------------------- */

typedef struct arena {
  void *block; /* one allocation carved into the arrays below */
  Ld__Gossipsub__RPC__SubOpts *subs;
  Ld__Gossipsub__RPC__SubOpts **subs_p;
  Ld__Gossipsub__Message *msgs;
  Ld__Gossipsub__Message **msgs_p;
  Ld__Gossipsub__ControlIHave *ihave;
  Ld__Gossipsub__ControlIHave **ihave_p;
  Ld__Gossipsub__ControlGraft *graft;
  Ld__Gossipsub__ControlGraft **graft_p;
  Ld__Gossipsub__ControlPrune *prune;
  Ld__Gossipsub__ControlPrune **prune_p;
  ProtobufCBinaryData *ids;
} arena_t;

static void arena_free(arena_t *a) {
  free(a->block);
}

#define ALIGN16(n) (((n) + 15) & ~(size_t)15)

/* Carves `n` elements of `size` bytes from the block at *off (or just counts when base is NULL). */
static void *carve(uint8_t *base, size_t *off, size_t n, size_t size) {
  void *p = base ? base + *off : NULL;
  *off += ALIGN16(n * size);
  return p;
}

static size_t arena_layout(arena_t *a, uint8_t *base, const builder_t *b) {
  size_t off = 0, ns = b->count[LD_GS_OUT_SUB], nm = b->count[LD_GS_OUT_MSG];
  size_t nh = b->count[LD_GS_OUT_IHAVE], ng = b->count[LD_GS_OUT_GRAFT];
  size_t np = b->count[LD_GS_OUT_PRUNE];
  size_t nids = b->n_ihave_ids + b->n_iwant_ids + b->n_idw_ids;
  a->subs = carve(base, &off, ns, sizeof *a->subs);
  a->subs_p = carve(base, &off, ns, sizeof *a->subs_p);
  a->msgs = carve(base, &off, nm, sizeof *a->msgs);
  a->msgs_p = carve(base, &off, nm, sizeof *a->msgs_p);
  a->ihave = carve(base, &off, nh, sizeof *a->ihave);
  a->ihave_p = carve(base, &off, nh, sizeof *a->ihave_p);
  a->graft = carve(base, &off, ng, sizeof *a->graft);
  a->graft_p = carve(base, &off, ng, sizeof *a->graft_p);
  a->prune = carve(base, &off, np, sizeof *a->prune);
  a->prune_p = carve(base, &off, np, sizeof *a->prune_p);
  a->ids = carve(base, &off, nids, sizeof *a->ids);
  return off;
}

static int arena_alloc(arena_t *a, const builder_t *b) {
  memset(a, 0, sizeof *a);
  size_t total = arena_layout(a, NULL, b);
  a->block = malloc(total ? total : 1);
  if (a->block == NULL) {
    return LD_ERR_NOMEM;
  }
  arena_layout(a, a->block, b);
  return 0;
}

static ProtobufCBinaryData bin(const void *p, size_t n) {
  ProtobufCBinaryData d = {n, (uint8_t *)(uintptr_t)p};
  return d;
}

typedef struct pack_state {
  const ld_gs_out_t *o;
  arena_t a;
  Ld__Gossipsub__RPC rpc;
  Ld__Gossipsub__ControlMessage ctrl;
  Ld__Gossipsub__ControlIWant iwant, *iwant_p;
  Ld__Gossipsub__ControlIDontWant idw, *idw_p;
  size_t n_ids; /* ids used in the arena */
} pack_state_t;

static ProtobufCBinaryData *put_ids(pack_state_t *st, const piece_t *pc) {
  ProtobufCBinaryData *first = &st->a.ids[st->n_ids];
  for (size_t i = 0; i < pc->n; i++) {
    st->a.ids[st->n_ids++] = bin(st->o->ids + (pc->ids_start + i) * ID_LEN, ID_LEN);
  }
  return first;
}

static void pack_sub(pack_state_t *st, const ld_gs_out_item_t *it) {
  static const Ld__Gossipsub__RPC__SubOpts init = LD__GOSSIPSUB__RPC__SUB_OPTS__INIT;
  Ld__Gossipsub__RPC__SubOpts *s = &st->a.subs[st->rpc.n_subscriptions];
  *s = init;
  s->has_subscribe = 1;
  s->subscribe = it->flag;
  s->has_topicid = 1;
  s->topicid = bin(it->topic, it->topic_len);
  st->a.subs_p[st->rpc.n_subscriptions++] = s;
}

static void pack_msg(pack_state_t *st, const ld_gs_out_item_t *it) {
  static const Ld__Gossipsub__Message init = LD__GOSSIPSUB__MESSAGE__INIT;
  Ld__Gossipsub__Message *m = &st->a.msgs[st->rpc.n_publish];
  *m = init;
  m->has_data = 1;
  m->data = bin(it->data, it->len);
  m->has_topic = 1;
  m->topic = bin(it->topic, it->topic_len);
  st->a.msgs_p[st->rpc.n_publish++] = m;
}

static void pack_ihave(pack_state_t *st, const ld_gs_out_item_t *it, const piece_t *pc) {
  static const Ld__Gossipsub__ControlIHave init = LD__GOSSIPSUB__CONTROL_IHAVE__INIT;
  Ld__Gossipsub__ControlIHave *h = &st->a.ihave[st->ctrl.n_ihave];
  *h = init;
  h->has_topicid = 1;
  h->topicid = bin(it->topic, it->topic_len);
  h->messageids = put_ids(st, pc);
  h->n_messageids = pc->n;
  st->a.ihave_p[st->ctrl.n_ihave++] = h;
}

static void pack_graft(pack_state_t *st, const ld_gs_out_item_t *it) {
  static const Ld__Gossipsub__ControlGraft init = LD__GOSSIPSUB__CONTROL_GRAFT__INIT;
  Ld__Gossipsub__ControlGraft *g = &st->a.graft[st->ctrl.n_graft];
  *g = init;
  g->has_topicid = 1;
  g->topicid = bin(it->topic, it->topic_len);
  st->a.graft_p[st->ctrl.n_graft++] = g;
}

static void pack_prune(pack_state_t *st, const ld_gs_out_item_t *it) {
  static const Ld__Gossipsub__ControlPrune init = LD__GOSSIPSUB__CONTROL_PRUNE__INIT;
  Ld__Gossipsub__ControlPrune *p = &st->a.prune[st->ctrl.n_prune];
  *p = init;
  p->has_topicid = 1;
  p->topicid = bin(it->topic, it->topic_len);
  p->has_backoff = it->flag;
  p->backoff = it->backoff;
  st->a.prune_p[st->ctrl.n_prune++] = p;
}

/* IWANT (or IDONTWANT) pieces of one RPC are merged into a single entry. */
static void pack_merged(pack_state_t *st, const piece_t *pc, bool iwant) {
  ProtobufCBinaryData *first = put_ids(st, pc);
  size_t *n = iwant ? &st->iwant.n_messageids : &st->idw.n_messageids;
  ProtobufCBinaryData **ids = iwant ? &st->iwant.messageids : &st->idw.messageids;
  if (*n == 0) {
    *ids = first;
  }
  *n += pc->n;
}

static void pack_piece(pack_state_t *st, const piece_t *pc) {
  const ld_gs_out_item_t *it = &st->o->items[pc->item];
  switch ((ld_gs_out_kind_t)it->kind) {
  case LD_GS_OUT_SUB:
    pack_sub(st, it);
    break;
  case LD_GS_OUT_MSG:
    pack_msg(st, it);
    break;
  case LD_GS_OUT_IHAVE:
    pack_ihave(st, it, pc);
    break;
  case LD_GS_OUT_GRAFT:
    pack_graft(st, it);
    break;
  case LD_GS_OUT_PRUNE:
    pack_prune(st, it);
    break;
  case LD_GS_OUT_IWANT:
    pack_merged(st, pc, true);
    break;
  case LD_GS_OUT_IDONTWANT:
    pack_merged(st, pc, false);
    break;
  }
}

static void wire_rpc(pack_state_t *st, const builder_t *b) {
  st->rpc.subscriptions = st->a.subs_p;
  st->rpc.publish = st->a.msgs_p;
  st->ctrl.ihave = st->a.ihave_p;
  st->ctrl.graft = st->a.graft_p;
  st->ctrl.prune = st->a.prune_p;
  if (st->iwant.n_messageids > 0) {
    st->iwant_p = &st->iwant;
    st->ctrl.iwant = &st->iwant_p;
    st->ctrl.n_iwant = 1;
  }
  if (st->idw.n_messageids > 0) {
    st->idw_p = &st->idw;
    st->ctrl.idontwant = &st->idw_p;
    st->ctrl.n_idontwant = 1;
  }
  if (b->n_ctrl > 0) {
    st->rpc.control = &st->ctrl;
  }
}

static int emit_rpc(const ld_gs_out_t *o, const builder_t *b, uint8_t *scratch, size_t max,
                    ld_gs_out_emit_fn emit, void *ctx) {
  static const Ld__Gossipsub__RPC rinit = LD__GOSSIPSUB__RPC__INIT;
  static const Ld__Gossipsub__ControlMessage cinit = LD__GOSSIPSUB__CONTROL_MESSAGE__INIT;
  static const Ld__Gossipsub__ControlIWant wi = LD__GOSSIPSUB__CONTROL_IWANT__INIT;
  static const Ld__Gossipsub__ControlIDontWant di = LD__GOSSIPSUB__CONTROL_IDONT_WANT__INIT;
  pack_state_t st = {.o = o, .rpc = rinit, .ctrl = cinit, .iwant = wi, .idw = di};
  if (arena_alloc(&st.a, b) != 0) {
    return LD_ERR_NOMEM;
  }
  for (size_t i = 0; i < b->n; i++) {
    pack_piece(&st, &b->pieces[i]);
  }
  wire_rpc(&st, b);
  size_t need = ld__gossipsub__rpc__get_packed_size(&st.rpc);
  int rc = LD_ERR_INTERNAL;
  if (need <= max && need == rpc_size(b)) {
    size_t n = ld__gossipsub__rpc__pack(&st.rpc, scratch);
    emit(ctx, scratch, n);
    rc = 0;
  }
  arena_free(&st.a);
  return rc;
}

/* Feeds one item into the builder, emitting full RPCs as needed. */
static int flush_item(const ld_gs_out_t *o, size_t idx, builder_t *b, uint8_t *scratch, size_t max,
                      ld_gs_out_emit_fn emit, void *ctx, size_t *dropped, int *emitted) {
  const ld_gs_out_item_t *it = &o->items[idx];
  size_t total = has_ids(it) ? it->n_ids : 1, done = 0;
  while (done < total) {
    size_t k = fit(b, it, total - done, max);
    if (k > 0) {
      int rc = add_piece(b, it, idx, it->ids_off + done, has_ids(it) ? k : 0);
      if (rc != 0) {
        return rc;
      }
      done += k;
      continue;
    }
    builder_t empty;
    memset(&empty, 0, sizeof empty);
    if (b->n == 0 || fit(&empty, it, total - done, max) == 0) {
      (*dropped)++; /* cannot fit even alone */
      return 0;
    }
    int rc = emit_rpc(o, b, scratch, max, emit, ctx);
    builder_reset(b);
    if (rc != 0) {
      return rc;
    }
    (*emitted)++;
  }
  return 0;
}

int ld_gs_out_flush(ld_gs_out_t *o, uint8_t *scratch, size_t max, ld_gs_out_emit_fn emit, void *ctx,
                    size_t *dropped) {
  size_t drop = 0;
  int emitted = 0, rc = 0;
  builder_t b;
  memset(&b, 0, sizeof b);
  for (size_t i = 0; i < o->n_items && rc == 0; i++) {
    rc = flush_item(o, i, &b, scratch, max, emit, ctx, &drop, &emitted);
  }
  if (rc == 0 && b.n > 0) {
    rc = emit_rpc(o, &b, scratch, max, emit, ctx);
    if (rc == 0) {
      emitted++;
    }
  }
  free(b.pieces);
  ld_gs_out_reset(o);
  if (dropped != NULL) {
    *dropped = drop;
  }
  return rc != 0 ? rc : emitted;
}
