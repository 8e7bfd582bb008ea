/* LIP-243 segments and their reassembly (channels/segment.h). */
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "channels/segment.h"
#include "crypto/keccak.h"

/* ---- wire ----------------------------------------------------------------------------------- */

static int put_tag(ld_buf_t *out, unsigned field, unsigned wire) {
  return ld_buf_varint(out, (uint64_t)field << 3 | wire);
}

int ld_segment_encode(const uint8_t hash[LD_SEGMENT_HASH_LEN], uint32_t index, uint32_t count,
                      const uint8_t *payload, size_t len, ld_buf_t *out) {
  if (hash == NULL || payload == NULL || len == 0 || count < 2 || count > LD_SEGMENT_MAX_SEGMENTS ||
      index >= count)
    return LD_ERR_INVALID_ARG;
  size_t before = out->len;
  int rc = put_tag(out, 1, 2);
  if (rc == 0)
    rc = ld_buf_lp(out, hash, LD_SEGMENT_HASH_LEN);
  if (rc == 0 && index > 0) /* proto3: a zero index is not written */
    rc = put_tag(out, 2, 0) != 0 ? LD_ERR_NOMEM : ld_buf_varint(out, index);
  if (rc == 0)
    rc = put_tag(out, 3, 0) != 0 ? LD_ERR_NOMEM : ld_buf_varint(out, count);
  if (rc == 0)
    rc = put_tag(out, 4, 2) != 0 ? LD_ERR_NOMEM : ld_buf_lp(out, payload, len);
  if (rc != 0)
    out->len = before;
  return rc;
}

int ld_segment_decode(const uint8_t *data, size_t len, ld_segment_t *out) {
  memset(out, 0, sizeof *out);
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  bool seen[5] = {false};
  uint64_t index = 0, count = 0;
  while (!ld_cursor_empty(&c)) {
    uint64_t tag;
    if (ld_cursor_pbvarint(&c, &tag) != 0)
      return LD_ERR_MALFORMED;
    uint64_t field = tag >> 3, wire = tag & 7;
    if (field >= 5 && field <= 7)
      return LD_ERR_UNSUPPORTED; /* parity */
    if (field < 1 || field > 4 || seen[field])
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
    } else if (ld_cursor_pbvarint(&c, field == 2 ? &index : &count) != 0) {
      return LD_ERR_MALFORMED;
    }
  }
  if (out->hash == NULL || out->payload == NULL || out->len == 0 || !seen[3] || count < 2 ||
      count > LD_SEGMENT_MAX_SEGMENTS || index >= count)
    return LD_ERR_MALFORMED;
  out->index = (uint32_t)index;
  out->count = (uint32_t)count;
  return 0;
}

/* ---- reassembly ----------------------------------------------------------------------------- */

typedef struct set {
  char *sender;
  uint8_t hash[LD_SEGMENT_HASH_LEN];
  uint32_t count, held;
  uint8_t **parts; /* [count], NULL when missing */
  size_t *lens;
  size_t bytes;
  uint64_t first_ms;
  struct set *prev, *next; /* oldest first */
} set_t;

struct ld_reassembler {
  size_t max_sets, max_bytes;
  uint64_t timeout_ms;
  set_t *head, *tail;
  size_t n_sets, bytes;
  uint64_t dropped;
  ld_reassembler_loss_fn on_loss;
  void *loss_ud;
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
  for (uint32_t i = 0; i < s->count; i++)
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
  free(r);
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
  size_t n = strlen(sender);
  s->sender = malloc(n + 1);
  s->parts = calloc(seg->count, sizeof *s->parts);
  s->lens = calloc(seg->count, sizeof *s->lens);
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

/* Concatenates a complete set and checks its hash. */
static int complete(ld_reassembler_t *r, set_t *s, uint8_t **out, size_t *out_len) {
  uint8_t *whole = malloc(s->bytes);
  if (whole == NULL)
    return LD_ERR_NOMEM;
  size_t at = 0;
  for (uint32_t i = 0; i < s->count; i++) {
    memcpy(whole + at, s->parts[i], s->lens[i]);
    at += s->lens[i];
  }
  uint8_t digest[LD_KECCAK256_LEN];
  ld_keccak256(whole, at, digest);
  if (memcmp(digest, s->hash, LD_SEGMENT_HASH_LEN) != 0) {
    free(whole);
    set_drop(r, s, LD_REASSEMBLY_LOST_HASH_MISMATCH);
    return LD_REASSEMBLY_HASH_MISMATCH;
  }
  set_remove(r, s);
  *out = whole;
  *out_len = at;
  return LD_REASSEMBLY_COMPLETE;
}

int ld_reassembler_add(ld_reassembler_t *r, const char *sender, const ld_segment_t *seg,
                       uint64_t now_ms, uint8_t **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  if (seg->len > r->max_bytes)
    return LD_ERR_TOO_LARGE;
  set_t *s = set_find(r, sender, seg->hash);
  if (s != NULL && s->count != seg->count)
    return LD_REASSEMBLY_MISMATCH;
  if (s != NULL && s->parts[seg->index] != NULL)
    return LD_REASSEMBLY_DUPLICATE;
  /* room: the oldest other sets go first */
  while (r->head != NULL &&
         (r->bytes + seg->len > r->max_bytes || (s == NULL && r->n_sets >= r->max_sets))) {
    set_t *victim = r->head != s ? r->head : r->head->next;
    if (victim == NULL)
      break;
    set_drop(r, victim, LD_REASSEMBLY_LOST_EVICTED);
  }
  if (s == NULL && (s = set_new(r, sender, seg, now_ms)) == NULL)
    return LD_ERR_NOMEM;
  uint8_t *copy = malloc(seg->len);
  if (copy == NULL)
    return LD_ERR_NOMEM;
  memcpy(copy, seg->payload, seg->len);
  s->parts[seg->index] = copy;
  s->lens[seg->index] = seg->len;
  s->bytes += seg->len;
  r->bytes += seg->len;
  if (++s->held < s->count)
    return LD_REASSEMBLY_HELD;
  return complete(r, s, out, out_len);
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
