/* The store-sync reconciliation payload (see codec.h). */
#include "waku/sync/codec.h"

#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "base/varint.h"

void ld_sync_limits_default(ld_sync_limits_t *l) {
  l->max_payload = LD_SYNC_DEFAULT_MAX_PAYLOAD;
  l->max_ranges = LD_SYNC_DEFAULT_MAX_RANGES;
  l->max_items = LD_SYNC_DEFAULT_MAX_PAYLOAD / LD_SYNC_MIN_ITEM_WIRE_LEN;
  l->max_topics = LD_SYNC_DEFAULT_MAX_TOPICS;
  l->max_topic_len = LD_SYNC_DEFAULT_MAX_TOPIC_LEN;
}

/* ---- building -------------------------------------------------------------------------------- */

void ld_sync_payload_init(ld_sync_payload_t *p) {
  memset(p, 0, sizeof *p);
}

static void topics_free(ld_sync_topic_t *t, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(t[i].data);
  free(t);
}

void ld_sync_payload_reset(ld_sync_payload_t *p, const ld_sync_id_t *start) {
  topics_free(p->pubsub_topics, p->n_pubsub_topics);
  topics_free(p->content_topics, p->n_content_topics);
  p->pubsub_topics = p->content_topics = NULL;
  p->n_pubsub_topics = p->n_content_topics = 0;
  p->n_ranges = 0;
  p->n_items = 0;
  p->start = *start;
}

void ld_sync_payload_clear(ld_sync_payload_t *p) {
  ld_sync_id_t zero = ld_sync_id_bound(0);
  ld_sync_payload_reset(p, &zero);
  free(p->ranges);
  free(p->items);
  ld_sync_payload_init(p);
}

int ld_sync_payload_add_topic(ld_sync_payload_t *p, bool content, const char *topic, size_t len) {
  ld_sync_topic_t **list = content ? &p->content_topics : &p->pubsub_topics;
  size_t *n = content ? &p->n_content_topics : &p->n_pubsub_topics;
  ld_sync_topic_t *grown = realloc(*list, (*n + 1) * sizeof **list);
  if (grown == NULL)
    return LD_ERR_NOMEM;
  *list = grown;
  char *copy = malloc(len + 1);
  if (copy == NULL)
    return LD_ERR_NOMEM;
  if (len > 0)
    memcpy(copy, topic, len);
  copy[len] = '\0';
  grown[*n].data = copy;
  grown[*n].len = len;
  (*n)++;
  return 0;
}

static int grow(void **v, size_t *cap, size_t need, size_t size) {
  if (need <= *cap)
    return 0;
  size_t c = *cap ? *cap : 16;
  while (c < need)
    c *= 2;
  void *g = realloc(*v, c * size);
  if (g == NULL)
    return LD_ERR_NOMEM;
  *v = g;
  *cap = c;
  return 0;
}

static ld_sync_range_t *new_range(ld_sync_payload_t *p, const ld_sync_id_t *upper, uint8_t type) {
  if (grow((void **)&p->ranges, &p->ranges_cap, p->n_ranges + 1, sizeof p->ranges[0]) != 0)
    return NULL;
  ld_sync_range_t *r = &p->ranges[p->n_ranges++];
  memset(r, 0, sizeof *r);
  r->upper = *upper;
  r->type = type;
  return r;
}

int ld_sync_payload_add_skip(ld_sync_payload_t *p, const ld_sync_id_t *upper) {
  return new_range(p, upper, LD_SYNC_RANGE_SKIP) == NULL ? LD_ERR_NOMEM : 0;
}

int ld_sync_payload_add_fingerprint(ld_sync_payload_t *p, const ld_sync_id_t *upper,
                                    const ld_sync_fp_t *fp) {
  ld_sync_range_t *r = new_range(p, upper, LD_SYNC_RANGE_FINGERPRINT);
  if (r == NULL)
    return LD_ERR_NOMEM;
  ld_sync_fp_store(fp, r->fingerprint);
  return 0;
}

int ld_sync_payload_add_item_set(ld_sync_payload_t *p, const ld_sync_id_t *upper,
                                 const ld_sync_id_t *items, size_t n, bool reconciled) {
  if (grow((void **)&p->items, &p->items_cap, p->n_items + n, sizeof p->items[0]) != 0)
    return LD_ERR_NOMEM;
  ld_sync_range_t *r = new_range(p, upper, LD_SYNC_RANGE_ITEM_SET);
  if (r == NULL)
    return LD_ERR_NOMEM;
  r->reconciled = reconciled;
  r->first_item = p->n_items;
  r->n_items = n;
  if (n > 0)
    memcpy(&p->items[p->n_items], items, n * sizeof items[0]);
  p->n_items += n;
  return 0;
}

ld_sync_id_t ld_sync_payload_lower(const ld_sync_payload_t *p, size_t i) {
  return i == 0 ? ld_sync_id_bound(p->start.time) : ld_sync_id_bound(p->ranges[i - 1].upper.time);
}

bool ld_sync_payload_all_skip(const ld_sync_payload_t *p) {
  for (size_t i = 0; i < p->n_ranges; i++)
    if (p->ranges[i].type != LD_SYNC_RANGE_SKIP)
      return false;
  return true;
}

/* ---- encoding -------------------------------------------------------------------------------- */

/* Bytes of the upper-bound hash that travel when dt == 0: up to and including the first byte
 * that differs from the reference, 32 when none does. */
static size_t prefix_len(const uint8_t *ref, const uint8_t *hash) {
  for (size_t i = 0; i < LD_SYNC_HASH_LEN; i++)
    if (ref[i] != hash[i])
      return i + 1;
  return LD_SYNC_HASH_LEN;
}

static size_t topics_len(const ld_sync_topic_t *t, size_t n) {
  size_t len = ld_varint_len(n);
  for (size_t i = 0; i < n; i++)
    len += ld_varint_len(t[i].len) + t[i].len;
  return len;
}

static size_t items_len(const ld_sync_id_t *items, size_t n) {
  size_t len = ld_varint_len(n) + 1;
  uint64_t prev = 0;
  for (size_t i = 0; i < n; i++) {
    len += ld_varint_len((uint64_t)items[i].time - prev) + LD_SYNC_HASH_LEN;
    prev = (uint64_t)items[i].time;
  }
  return len;
}

size_t ld_sync_payload_encoded_len(const ld_sync_payload_t *p) {
  if (p->n_ranges == 0)
    return 1;
  size_t len = topics_len(p->pubsub_topics, p->n_pubsub_topics) +
               topics_len(p->content_topics, p->n_content_topics) +
               ld_varint_len((uint64_t)p->start.time);
  uint64_t last = (uint64_t)p->start.time;
  for (size_t i = 0; i < p->n_ranges; i++) {
    const ld_sync_range_t *r = &p->ranges[i];
    uint64_t dt = (uint64_t)r->upper.time - last;
    last = (uint64_t)r->upper.time;
    len += ld_varint_len(dt) + 1;
    if (dt == 0)
      len += 1 + prefix_len(p->start.hash, r->upper.hash);
    if (r->type == LD_SYNC_RANGE_FINGERPRINT)
      len += LD_SYNC_FP_LEN;
    else if (r->type == LD_SYNC_RANGE_ITEM_SET)
      len += items_len(ld_sync_range_items(p, r), r->n_items);
  }
  return len;
}

static void put_varint(uint8_t **w, uint64_t v) {
  *w += ld_varint_encode(v, *w);
}

static void put_bytes(uint8_t **w, const void *data, size_t n) {
  if (n > 0)
    memcpy(*w, data, n);
  *w += n;
}

static void put_topics(uint8_t **w, const ld_sync_topic_t *t, size_t n) {
  put_varint(w, n);
  for (size_t i = 0; i < n; i++) {
    put_varint(w, t[i].len);
    put_bytes(w, t[i].data, t[i].len);
  }
}

static void put_items(uint8_t **w, const ld_sync_id_t *items, size_t n, bool reconciled) {
  put_varint(w, n);
  uint64_t prev = 0;
  for (size_t i = 0; i < n; i++) {
    put_varint(w, (uint64_t)items[i].time - prev);
    prev = (uint64_t)items[i].time;
    put_bytes(w, items[i].hash, LD_SYNC_HASH_LEN);
  }
  *(*w)++ = reconciled ? 1 : 0;
}

static void put_range(uint8_t **w, const ld_sync_payload_t *p, const ld_sync_range_t *r,
                      uint64_t *last) {
  uint64_t dt = (uint64_t)r->upper.time - *last;
  *last = (uint64_t)r->upper.time;
  put_varint(w, dt);
  if (dt == 0) {
    size_t k = prefix_len(p->start.hash, r->upper.hash);
    *(*w)++ = (uint8_t)k;
    put_bytes(w, r->upper.hash, k);
  }
  *(*w)++ = r->type;
  if (r->type == LD_SYNC_RANGE_FINGERPRINT)
    put_bytes(w, r->fingerprint, LD_SYNC_FP_LEN);
  else if (r->type == LD_SYNC_RANGE_ITEM_SET)
    put_items(w, ld_sync_range_items(p, r), r->n_items, r->reconciled);
}

int ld_sync_payload_encode(const ld_sync_payload_t *p, ld_buf_t *out) {
  size_t len = ld_sync_payload_encoded_len(p);
  int rc = ld_buf_reserve(out, len);
  if (rc != 0)
    return rc;
  uint8_t *w = out->data + out->len;
  if (p->n_ranges == 0) {
    *w = 0;
  } else {
    put_topics(&w, p->pubsub_topics, p->n_pubsub_topics);
    put_topics(&w, p->content_topics, p->n_content_topics);
    put_varint(&w, (uint64_t)p->start.time);
    uint64_t last = (uint64_t)p->start.time;
    for (size_t i = 0; i < p->n_ranges; i++)
      put_range(&w, p, &p->ranges[i], &last);
  }
  out->len += len;
  return 0;
}

/* ---- decoding -------------------------------------------------------------------------------- */

typedef struct reader {
  ld_cursor_t c;
  const ld_sync_limits_t *lim;
  ld_sync_payload_t *p;
  char *why;
  size_t cap;
} reader_t;

static int fail(reader_t *r, int code, const char *what) {
  return ld_error_fmt(r->why, r->cap, code, "%s", what);
}

static int read_varint(reader_t *r, uint64_t *v, const char *what) {
  int rc = ld_cursor_pbvarint(&r->c, v);
  return rc == 0 ? 0 : fail(r, rc, what);
}

static int read_u8(reader_t *r, uint8_t *v, const char *what) {
  return ld_cursor_u8(&r->c, v) == 0 ? 0 : fail(r, LD_ERR_TRUNCATED, what);
}

static int read_topics(reader_t *r, bool content) {
  const char *which = content ? "content topics" : "pubsub topics";
  uint64_t n, len;
  int rc = read_varint(r, &n, which);
  if (rc != 0)
    return rc;
  if (n > r->lim->max_topics)
    return fail(r, LD_ERR_TOO_LARGE, which);
  for (uint64_t i = 0; i < n; i++) {
    const uint8_t *s;
    if ((rc = read_varint(r, &len, which)) != 0)
      return rc;
    if (len > r->lim->max_topic_len)
      return fail(r, LD_ERR_TOO_LARGE, "topic length");
    if (ld_cursor_bytes(&r->c, (size_t)len, &s) != 0)
      return fail(r, LD_ERR_TRUNCATED, which);
    if ((rc = ld_sync_payload_add_topic(r->p, content, (const char *)s, (size_t)len)) != 0)
      return fail(r, rc, which);
  }
  return 0;
}

/* The items of one item set: ascending, inside [lower, upper] by time. */
static int read_items(reader_t *r, ld_sync_range_t *range, int64_t lower, int64_t upper) {
  uint64_t n;
  int rc = read_varint(r, &n, "item-set count");
  if (rc != 0)
    return rc;
  if (n > r->lim->max_items - r->p->n_items)
    return fail(r, LD_ERR_TOO_LARGE, "item-set count");
  if (n > ld_cursor_remaining(&r->c) / LD_SYNC_MIN_ITEM_WIRE_LEN)
    return fail(r, LD_ERR_TRUNCATED, "item set");
  if (grow((void **)&r->p->items, &r->p->items_cap, r->p->n_items + n, sizeof r->p->items[0]))
    return fail(r, LD_ERR_NOMEM, "item set");
  range->first_item = r->p->n_items;
  uint64_t prev = 0;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t d;
    ld_sync_id_t *it = &r->p->items[r->p->n_items];
    if ((rc = read_varint(r, &d, "item time")) != 0)
      return rc;
    prev += d;
    it->time = (int64_t)prev;
    if (ld_cursor_copy(&r->c, it->hash, LD_SYNC_HASH_LEN) != 0)
      return fail(r, LD_ERR_TRUNCATED, "item hash");
    if (it->time < lower || it->time > upper)
      return fail(r, LD_ERR_MALFORMED, "item outside its range");
    if (i > 0 && ld_sync_id_cmp(it - 1, it) >= 0)
      return fail(r, LD_ERR_MALFORMED, "item set out of order");
    r->p->n_items++;
    range->n_items++;
  }
  uint8_t reconciled;
  if ((rc = read_u8(r, &reconciled, "reconciled")) != 0)
    return rc;
  if (reconciled > 1)
    return fail(r, LD_ERR_MALFORMED, "reconciled flag");
  range->reconciled = reconciled == 1;
  return 0;
}

static int read_upper(reader_t *r, int64_t last, ld_sync_id_t *upper) {
  uint64_t dt;
  int rc = read_varint(r, &dt, "range bound");
  if (rc != 0)
    return rc;
  *upper = ld_sync_id_bound((int64_t)((uint64_t)last + dt));
  if (upper->time < last)
    return fail(r, LD_ERR_MALFORMED, "range runs backwards");
  if (dt == 0) {
    uint8_t k;
    if ((rc = read_u8(r, &k, "bound hash")) != 0)
      return rc;
    if (k > LD_SYNC_HASH_LEN)
      return fail(r, LD_ERR_MALFORMED, "bound hash prefix over 32 bytes");
    if (ld_cursor_copy(&r->c, upper->hash, k) != 0)
      return fail(r, LD_ERR_TRUNCATED, "bound hash");
  }
  return 0;
}

static int read_range(reader_t *r, int64_t *last) {
  if (r->p->n_ranges >= r->lim->max_ranges)
    return fail(r, LD_ERR_TOO_LARGE, "ranges");
  ld_sync_id_t upper;
  uint8_t type;
  int rc = read_upper(r, *last, &upper);
  if (rc == 0)
    rc = read_u8(r, &type, "range type");
  if (rc != 0)
    return rc;
  if (type > LD_SYNC_RANGE_ITEM_SET)
    return fail(r, LD_ERR_MALFORMED, "range type");
  ld_sync_range_t *range = new_range(r->p, &upper, type);
  if (range == NULL)
    return fail(r, LD_ERR_NOMEM, "ranges");
  if (type == LD_SYNC_RANGE_FINGERPRINT &&
      ld_cursor_copy(&r->c, range->fingerprint, LD_SYNC_FP_LEN) != 0)
    return fail(r, LD_ERR_TRUNCATED, "fingerprint");
  if (type == LD_SYNC_RANGE_ITEM_SET && (rc = read_items(r, range, *last, upper.time)) != 0)
    return rc;
  *last = upper.time;
  return 0;
}

static int read_payload(reader_t *r) {
  uint64_t t0;
  int rc = read_topics(r, false);
  if (rc == 0)
    rc = read_topics(r, true);
  if (rc == 0)
    rc = read_varint(r, &t0, "first bound");
  if (rc != 0)
    return rc;
  r->p->start = ld_sync_id_bound((int64_t)t0);
  int64_t last = r->p->start.time;
  /* nwaku reads ranges while more than one byte remains */
  while (rc == 0 && ld_cursor_remaining(&r->c) > 1)
    rc = read_range(r, &last);
  return rc;
}

int ld_sync_payload_decode(const uint8_t *data, size_t len, const ld_sync_limits_t *lim,
                           ld_sync_payload_t *out, char *why, size_t cap) {
  ld_sync_limits_t defaults;
  if (lim == NULL) {
    ld_sync_limits_default(&defaults);
    lim = &defaults;
  }
  ld_sync_id_t zero = ld_sync_id_bound(0);
  ld_sync_payload_reset(out, &zero);
  if (len > lim->max_payload)
    return ld_error_fmt(why, cap, LD_ERR_TOO_LARGE, "payload of %zu bytes", len);
  if (len <= 1)
    return 0;
  reader_t r = {.lim = lim, .p = out, .why = why, .cap = cap};
  ld_cursor_init(&r.c, data, len);
  int rc = read_payload(&r);
  if (rc != 0)
    ld_sync_payload_reset(out, &zero);
  return rc;
}
