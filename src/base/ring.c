#include "base/ring.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#define RING_MIN_CAP 64

void ld_ring_init(ld_ring_t *r, size_t max) {
  r->data = NULL;
  r->cap = 0;
  r->head = 0;
  r->len = 0;
  r->max = max;
}

void ld_ring_clear(ld_ring_t *r) {
  free(r->data);
  ld_ring_init(r, r->max);
}

/* Copies up to `len` readable bytes starting `offset` bytes past the head. */
static size_t copy_out(const ld_ring_t *r, size_t offset, uint8_t *out, size_t len) {
  if (offset >= r->len)
    return 0;
  if (len > r->len - offset)
    len = r->len - offset;
  if (len == 0)
    return 0;
  size_t start = (r->head + offset) % r->cap;
  size_t first = r->cap - start < len ? r->cap - start : len;
  memcpy(out, r->data + start, first);
  memcpy(out + first, r->data, len - first);
  return len;
}

static int grow(ld_ring_t *r, size_t need) {
  size_t cap = r->cap ? r->cap : RING_MIN_CAP;
  while (cap < need && cap <= SIZE_MAX / 2)
    cap *= 2;
  if (cap < need)
    cap = need;
  if (cap > r->max)
    cap = r->max;
  uint8_t *data = malloc(cap);
  if (data == NULL)
    return LD_ERR_NOMEM;
  copy_out(r, 0, data, r->len);
  free(r->data);
  r->data = data;
  r->cap = cap;
  r->head = 0;
  return 0;
}

int ld_ring_write(ld_ring_t *r, const void *data, size_t len) {
  if (len > r->max - r->len)
    return LD_ERR_LIMIT;
  if (len == 0)
    return 0;
  if (r->len + len > r->cap) {
    int rc = grow(r, r->len + len);
    if (rc != 0)
      return rc;
  }
  size_t tail = (r->head + r->len) % r->cap;
  size_t first = r->cap - tail < len ? r->cap - tail : len;
  memcpy(r->data + tail, data, first);
  memcpy(r->data, (const uint8_t *)data + first, len - first);
  r->len += len;
  return 0;
}

size_t ld_ring_peek(const ld_ring_t *r, void *out, size_t len) {
  return copy_out(r, 0, out, len);
}

size_t ld_ring_consume(ld_ring_t *r, size_t n) {
  if (n > r->len)
    n = r->len;
  r->len -= n;
  r->head = r->len == 0 ? 0 : (r->head + n) % r->cap;
  return n;
}

size_t ld_ring_read(ld_ring_t *r, void *out, size_t len) {
  return ld_ring_consume(r, copy_out(r, 0, out, len));
}

int ld_ring_spans(const ld_ring_t *r, ld_ring_span_t spans[2]) {
  spans[0].data = NULL;
  spans[0].len = 0;
  spans[1].data = NULL;
  spans[1].len = 0;
  if (r->len == 0)
    return 0;
  size_t first = r->cap - r->head < r->len ? r->cap - r->head : r->len;
  spans[0].data = r->data + r->head;
  spans[0].len = first;
  if (first == r->len)
    return 1;
  spans[1].data = r->data;
  spans[1].len = r->len - first;
  return 2;
}
