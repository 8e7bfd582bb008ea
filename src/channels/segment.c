/* LIP-243 segments and their reassembly (channels/segment.h). */
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "channels/leopard_rs.h"
#include "channels/segment.h"
#include "crypto/keccak.h"

/* ---- wire ----------------------------------------------------------------------------------- */

static int put_tag(ld_buf_t *out, unsigned field, unsigned wire) {
  return ld_buf_varint(out, (uint64_t)field << 3 | wire);
}

static int put_varint_field(ld_buf_t *out, unsigned field, uint64_t v) {
  if (v == 0) /* proto3: a zero is not written */
    return 0;
  return put_tag(out, field, 0) != 0 ? LD_ERR_NOMEM : ld_buf_varint(out, v);
}

static int put_bytes_field(ld_buf_t *out, unsigned field, const uint8_t *p, size_t n) {
  return put_tag(out, field, 2) != 0 ? LD_ERR_NOMEM : ld_buf_lp(out, p, n);
}

/* The rules of the header comment on a segment's fields. */
static bool segment_valid(const ld_segment_t *s) {
  if (s->hash == NULL || s->payload == NULL || s->len == 0 || s->count < 2 ||
      s->count > LD_SEGMENT_MAX_SEGMENTS || s->parity_count > s->count ||
      s->count + s->parity_count > LD_SEGMENT_MAX_SEGMENTS)
    return false;
  if (s->is_parity)
    return s->index == 0 && s->parity_count > 0 && s->parity_index < s->parity_count;
  return s->parity_index == 0 && s->index < s->count;
}

int ld_segment_encode_full(const ld_segment_t *seg, ld_buf_t *out) {
  if (!segment_valid(seg))
    return LD_ERR_INVALID_ARG;
  size_t before = out->len;
  int rc = put_bytes_field(out, 1, seg->hash, LD_SEGMENT_HASH_LEN);
  if (rc == 0)
    rc = put_varint_field(out, 2, seg->index);
  if (rc == 0)
    rc = put_varint_field(out, 3, seg->count);
  if (rc == 0)
    rc = put_bytes_field(out, 4, seg->payload, seg->len);
  if (rc == 0)
    rc = put_varint_field(out, 5, seg->parity_index);
  if (rc == 0)
    rc = put_varint_field(out, 6, seg->parity_count);
  if (rc == 0)
    rc = put_varint_field(out, 7, seg->is_parity ? 1 : 0);
  if (rc == 0)
    rc = put_varint_field(out, 8, seg->total_len);
  if (rc != 0)
    out->len = before;
  return rc;
}

int ld_segment_encode(const uint8_t hash[LD_SEGMENT_HASH_LEN], uint32_t index, uint32_t count,
                      const uint8_t *payload, size_t len, ld_buf_t *out) {
  ld_segment_t seg = {.hash = hash, .index = index, .count = count, .payload = payload, .len = len};
  return ld_segment_encode_full(&seg, out);
}

/* Reads the value of varint `field` (2, 3, 5–8) into the segment. */
static int take_varint(ld_segment_t *out, uint64_t field, uint64_t v) {
  uint64_t limit = field == 8 ? UINT64_MAX : field == 7 ? 1 : UINT32_MAX;
  if (v > limit)
    return LD_ERR_MALFORMED;
  switch (field) {
  case 2:
    out->index = (uint32_t)v;
    break;
  case 3:
    out->count = (uint32_t)v;
    break;
  case 5:
    out->parity_index = (uint32_t)v;
    break;
  case 6:
    out->parity_count = (uint32_t)v;
    break;
  case 7:
    out->is_parity = v == 1;
    break;
  default:
    out->total_len = v;
  }
  return 0;
}

int ld_segment_decode(const uint8_t *data, size_t len, ld_segment_t *out) {
  memset(out, 0, sizeof *out);
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  bool seen[9] = {false};
  while (!ld_cursor_empty(&c)) {
    uint64_t tag;
    if (ld_cursor_pbvarint(&c, &tag) != 0)
      return LD_ERR_MALFORMED;
    uint64_t field = tag >> 3, wire = tag & 7;
    if (field < 1 || field > 8 || seen[field])
      return LD_ERR_MALFORMED;
    seen[field] = true;
    bool bytes = field == 1 || field == 4;
    if (wire != (bytes ? 2u : 0u))
      return LD_ERR_MALFORMED;
    if (bytes) {
      const uint8_t *p;
      size_t n;
      if (ld_cursor_lp_bytes(&c, len, &p, &n) != 0)
        return LD_ERR_MALFORMED;
      if (field == 1)
        out->hash = n == LD_SEGMENT_HASH_LEN ? p : NULL;
      else
        out->payload = p, out->len = n;
    } else {
      uint64_t v;
      if (ld_cursor_pbvarint(&c, &v) != 0 || take_varint(out, field, v) != 0)
        return LD_ERR_MALFORMED;
    }
  }
  if (!seen[3] || !segment_valid(out))
    return LD_ERR_MALFORMED;
  return 0;
}

uint32_t ld_segment_parity_count(uint32_t k, uint32_t rate_ppm) {
  if (k < 1 || rate_ppm == 0)
    return 0;
  uint64_t m = ((uint64_t)k * rate_ppm + 999999u) / 1000000u;
  if (m > k)
    m = k;
  if (k + m > LD_SEGMENT_MAX_SEGMENTS || !ld_rs_supported(k, (unsigned)m))
    return 0;
  return (uint32_t)m;
}

int ld_segment_parity(const uint8_t *payload, size_t len, size_t shard_len, uint32_t k, uint32_t m,
                      uint8_t *const parity[]) {
  if (shard_len == 0 || k == 0 || len > (size_t)k * shard_len || len <= (size_t)(k - 1) * shard_len)
    return LD_ERR_INVALID_ARG;
  const uint8_t **data = malloc(k * sizeof *data);
  uint8_t *last = calloc(1, shard_len);
  int rc = LD_ERR_NOMEM;
  if (data != NULL && last != NULL) {
    size_t tail = len - (size_t)(k - 1) * shard_len;
    memcpy(last, payload + (size_t)(k - 1) * shard_len, tail);
    for (uint32_t i = 0; i + 1 < k; i++)
      data[i] = payload + (size_t)i * shard_len;
    data[k - 1] = last;
    rc = ld_rs_encode(shard_len, k, m, data, parity);
  }
  free(data);
  free(last);
  return rc;
}

/* ---- reassembly ----------------------------------------------------------------------------- */

typedef struct set {
  char *sender;
  uint8_t hash[LD_SEGMENT_HASH_LEN];
  uint32_t count, parity_count; /* data, parity segments of the set */
  uint32_t held, held_data;
  uint64_t total_len; /* original_payload_length, 0 when not known */
  size_t shard_len;   /* sets with parity: 0 until a segment has told it */
  uint8_t **parts;    /* [count + parity_count]: data then parity, NULL when missing */
  size_t *lens;
  size_t bytes;
  uint64_t first_ms;
  struct set *prev, *next; /* oldest first */
} set_t;

/* A set delivered recently: its late segments are duplicates. */
typedef struct done {
  char *sender;
  uint8_t hash[LD_SEGMENT_HASH_LEN];
  uint64_t at_ms;
} done_t;

struct ld_reassembler {
  size_t max_sets, max_bytes;
  uint64_t timeout_ms;
  set_t *head, *tail;
  size_t n_sets, bytes;
  uint64_t dropped;
  ld_reassembler_loss_fn on_loss;
  void *loss_ud;
  done_t done[LD_SEGMENT_DONE_MEMORY];
  size_t done_next;
};

void ld_reassembler_on_loss(ld_reassembler_t *r, ld_reassembler_loss_fn fn, void *user_data) {
  r->on_loss = fn;
  r->loss_ud = user_data;
}

ld_reassembler_t *ld_reassembler_new(size_t max_sets, size_t max_bytes, uint64_t timeout_ms) {
  ld_reassembler_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return NULL;
  r->max_sets = max_sets > 0 ? max_sets : LD_SEGMENT_DEFAULT_MAX_SETS;
  r->max_bytes = max_bytes > 0 ? max_bytes : LD_SEGMENT_DEFAULT_MAX_BYTES;
  r->timeout_ms = timeout_ms > 0 ? timeout_ms : LD_SEGMENT_DEFAULT_TIMEOUT_MS;
  return r;
}

static uint32_t slots_of(const set_t *s) {
  return s->count + s->parity_count;
}

static void set_remove(ld_reassembler_t *r, set_t *s) {
  if (s->prev != NULL)
    s->prev->next = s->next;
  else
    r->head = s->next;
  if (s->next != NULL)
    s->next->prev = s->prev;
  else
    r->tail = s->prev;
  r->n_sets--;
  r->bytes -= s->bytes;
  for (uint32_t i = 0; i < slots_of(s); i++)
    free(s->parts[i]);
  free(s->parts);
  free(s->lens);
  free(s->sender);
  free(s);
}

/* Reports and frees a set dropped undelivered. */
static void set_drop(ld_reassembler_t *r, set_t *s, ld_reassembly_loss_t why) {
  if (r->on_loss != NULL)
    r->on_loss(r->loss_ud, s->sender, s->hash, s->held, s->count, why);
  set_remove(r, s);
  r->dropped++;
}

void ld_reassembler_free(ld_reassembler_t *r) {
  if (r == NULL)
    return;
  while (r->head != NULL)
    set_remove(r, r->head);
  for (size_t i = 0; i < LD_SEGMENT_DONE_MEMORY; i++)
    free(r->done[i].sender);
  free(r);
}

static bool done_has(const ld_reassembler_t *r, const char *sender, const uint8_t *hash,
                     uint64_t now) {
  for (size_t i = 0; i < LD_SEGMENT_DONE_MEMORY; i++) {
    const done_t *d = &r->done[i];
    if (d->sender != NULL && d->at_ms + r->timeout_ms > now &&
        memcmp(d->hash, hash, LD_SEGMENT_HASH_LEN) == 0 && strcmp(d->sender, sender) == 0)
      return true;
  }
  return false;
}

/* Remembers a delivered set (best effort: without memory, late segments start a new set). */
static void done_add(ld_reassembler_t *r, const set_t *s, uint64_t now) {
  size_t n = strlen(s->sender);
  char *copy = malloc(n + 1);
  if (copy == NULL)
    return;
  memcpy(copy, s->sender, n + 1);
  done_t *d = &r->done[r->done_next];
  r->done_next = (r->done_next + 1) % LD_SEGMENT_DONE_MEMORY;
  free(d->sender);
  d->sender = copy;
  memcpy(d->hash, s->hash, LD_SEGMENT_HASH_LEN);
  d->at_ms = now;
}

static set_t *set_find(ld_reassembler_t *r, const char *sender, const uint8_t *hash) {
  for (set_t *s = r->head; s != NULL; s = s->next)
    if (memcmp(s->hash, hash, LD_SEGMENT_HASH_LEN) == 0 && strcmp(s->sender, sender) == 0)
      return s;
  return NULL;
}

static set_t *set_new(ld_reassembler_t *r, const char *sender, const ld_segment_t *seg,
                      uint64_t now) {
  set_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return NULL;
  size_t n = strlen(sender), slots = (size_t)seg->count + seg->parity_count;
  s->sender = malloc(n + 1);
  s->parts = calloc(slots, sizeof *s->parts);
  s->lens = calloc(slots, sizeof *s->lens);
  if (s->sender == NULL || s->parts == NULL || s->lens == NULL) {
    free(s->sender);
    free(s->parts);
    free(s->lens);
    free(s);
    return NULL;
  }
  memcpy(s->sender, sender, n + 1);
  memcpy(s->hash, seg->hash, LD_SEGMENT_HASH_LEN);
  s->count = seg->count;
  s->parity_count = seg->parity_count;
  s->first_ms = now;
  s->prev = r->tail;
  if (r->tail != NULL)
    r->tail->next = s;
  else
    r->head = s;
  r->tail = s;
  r->n_sets++;
  return s;
}

/* The shard length a segment of a set with parity states: a parity segment's or a data
 * segment's but the last; 0 for the last data segment (it may be shorter). */
static size_t shard_len_of(const ld_segment_t *seg) {
  return seg->is_parity || seg->index + 1 < seg->count ? seg->len : 0;
}

/* True when `seg` agrees with set `s` (NULL: a new set): counts, length, shard length. */
static bool fits_set(const set_t *s, const ld_segment_t *seg) {
  if (s == NULL)
    return true;
  if (s->count != seg->count || s->parity_count != seg->parity_count)
    return false;
  if (s->total_len != 0 && seg->total_len != 0 && s->total_len != seg->total_len)
    return false;
  if (s->parity_count == 0 || s->shard_len == 0)
    return true;
  size_t stated = shard_len_of(seg);
  return stated != 0 ? stated == s->shard_len : seg->len <= s->shard_len;
}

static uint32_t slot_of(const ld_segment_t *seg) {
  return seg->is_parity ? seg->count + seg->parity_index : seg->index;
}

static void set_store(ld_reassembler_t *r, set_t *s, const ld_segment_t *seg, uint8_t *copy) {
  uint32_t slot = slot_of(seg);
  s->parts[slot] = copy;
  s->lens[slot] = seg->len;
  s->bytes += seg->len;
  r->bytes += seg->len;
  s->held++;
  if (!seg->is_parity)
    s->held_data++;
  if (s->total_len == 0)
    s->total_len = seg->total_len;
  if (s->parity_count > 0 && s->shard_len == 0)
    s->shard_len = shard_len_of(seg);
}

/* Checks the rebuilt payload's hash: delivers it (the set removed and remembered) or drops the
 * set. Takes `whole`. */
static int deliver(ld_reassembler_t *r, set_t *s, uint8_t *whole, size_t len, uint64_t now,
                   uint8_t **out, size_t *out_len) {
  uint8_t digest[LD_KECCAK256_LEN];
  ld_keccak256(whole, len, digest);
  if (memcmp(digest, s->hash, LD_SEGMENT_HASH_LEN) != 0) {
    free(whole);
    set_drop(r, s, LD_REASSEMBLY_LOST_HASH_MISMATCH);
    return LD_REASSEMBLY_HASH_MISMATCH;
  }
  done_add(r, s, now);
  set_remove(r, s);
  *out = whole;
  *out_len = len;
  return LD_REASSEMBLY_COMPLETE;
}

/* All data segments held: their concatenation. */
static int complete_data(ld_reassembler_t *r, set_t *s, uint64_t now, uint8_t **out,
                         size_t *out_len) {
  size_t total = 0;
  for (uint32_t i = 0; i < s->count; i++)
    total += s->lens[i];
  uint8_t *whole = malloc(total);
  if (whole == NULL)
    return LD_ERR_NOMEM;
  size_t at = 0;
  for (uint32_t i = 0; i < s->count; i++) {
    memcpy(whole + at, s->parts[i], s->lens[i]);
    at += s->lens[i];
  }
  return deliver(r, s, whole, total, now, out, out_len);
}

/* The payload length of a set with parity, 0 when not known yet. */
static uint64_t parity_set_length(const set_t *s) {
  uint32_t last = s->count - 1;
  if (s->parts[last] != NULL)
    return (uint64_t)last * s->shard_len + s->lens[last];
  return s->total_len;
}

/* True when set `s` can be rebuilt through its parity now. */
static bool parity_ready(const set_t *s) {
  return s->parity_count > 0 && s->held >= s->count && s->shard_len > 0 &&
         s->shard_len % LD_RS_SHARD_ALIGN == 0 && ld_rs_supported(s->count, s->parity_count) &&
         parity_set_length(s) != 0 && s->lens[s->count - 1] <= s->shard_len;
}

/* Rebuilds the data of `s` through Leopard-RS into *whole (count · shard_len bytes). */
static int decode_set(const set_t *s, uint8_t **whole) {
  size_t L = s->shard_len;
  uint32_t k = s->count, m = s->parity_count, last = k - 1;
  const uint8_t **have = calloc((size_t)k + m, sizeof *have);
  uint8_t **outs = calloc(k, sizeof *outs);
  uint8_t *buf = malloc((size_t)k * L), *padded = calloc(1, L);
  int rc = LD_ERR_NOMEM;
  if (have != NULL && outs != NULL && buf != NULL && padded != NULL) {
    for (uint32_t i = 0; i < k + m; i++)
      have[i] = s->parts[i];
    if (s->parts[last] != NULL) {
      memcpy(padded, s->parts[last], s->lens[last]);
      have[last] = padded;
    }
    for (uint32_t i = 0; i < k; i++)
      outs[i] = buf + (size_t)i * L;
    rc = ld_rs_decode(L, k, m, have, have + k, outs);
  }
  free(have);
  free(outs);
  free(padded);
  if (rc != 0)
    free(buf);
  else
    *whole = buf;
  return rc;
}

static int complete_parity(ld_reassembler_t *r, set_t *s, uint64_t now, uint8_t **out,
                           size_t *out_len) {
  uint64_t total = parity_set_length(s);
  if (total <= (uint64_t)(s->count - 1) * s->shard_len ||
      total > (uint64_t)s->count * s->shard_len) { /* a length the shards cannot hold */
    set_drop(r, s, LD_REASSEMBLY_LOST_HASH_MISMATCH);
    return LD_REASSEMBLY_HASH_MISMATCH;
  }
  uint8_t *whole = NULL;
  int rc = decode_set(s, &whole);
  if (rc != 0)
    return rc == LD_ERR_NOMEM ? rc : LD_REASSEMBLY_HELD;
  return deliver(r, s, whole, (size_t)total, now, out, out_len);
}

int ld_reassembler_add(ld_reassembler_t *r, const char *sender, const ld_segment_t *seg,
                       uint64_t now_ms, uint8_t **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  if (seg->len > r->max_bytes)
    return LD_ERR_TOO_LARGE;
  if (done_has(r, sender, seg->hash, now_ms))
    return LD_REASSEMBLY_DUPLICATE;
  set_t *s = set_find(r, sender, seg->hash);
  if (!fits_set(s, seg))
    return LD_REASSEMBLY_MISMATCH;
  if (s != NULL && s->parts[slot_of(seg)] != NULL)
    return LD_REASSEMBLY_DUPLICATE;
  /* room: the oldest other sets go first */
  while (r->head != NULL &&
         (r->bytes + seg->len > r->max_bytes || (s == NULL && r->n_sets >= r->max_sets))) {
    set_t *victim = r->head != s ? r->head : r->head->next;
    if (victim == NULL)
      break;
    set_drop(r, victim, LD_REASSEMBLY_LOST_EVICTED);
  }
  uint8_t *copy = malloc(seg->len);
  if (copy == NULL)
    return LD_ERR_NOMEM;
  if (s == NULL && (s = set_new(r, sender, seg, now_ms)) == NULL) {
    free(copy);
    return LD_ERR_NOMEM;
  }
  memcpy(copy, seg->payload, seg->len);
  set_store(r, s, seg, copy);
  if (s->held_data == s->count)
    return complete_data(r, s, now_ms, out, out_len);
  if (parity_ready(s))
    return complete_parity(r, s, now_ms, out, out_len);
  return LD_REASSEMBLY_HELD;
}

size_t ld_reassembler_expire(ld_reassembler_t *r, uint64_t now_ms, uint64_t *next) {
  size_t n = 0;
  while (r->head != NULL && r->head->first_ms + r->timeout_ms <= now_ms) {
    set_drop(r, r->head, LD_REASSEMBLY_LOST_EXPIRED);
    n++;
  }
  if (next != NULL)
    *next = r->head != NULL ? r->head->first_ms + r->timeout_ms : UINT64_MAX;
  return n;
}

size_t ld_reassembler_sets(const ld_reassembler_t *r) {
  return r->n_sets;
}

size_t ld_reassembler_bytes(const ld_reassembler_t *r) {
  return r->bytes;
}

uint64_t ld_reassembler_dropped(const ld_reassembler_t *r) {
  return r->dropped;
}
