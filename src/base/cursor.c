#include "base/cursor.h"

#include <string.h>

#include "base/error.h"
#include "base/varint.h"

void ld_cursor_init(ld_cursor_t *c, const uint8_t *data, size_t len) {
  c->data = data;
  c->len = data != NULL ? len : 0;
  c->pos = 0;
}

int ld_cursor_bytes(ld_cursor_t *c, size_t n, const uint8_t **out) {
  if (ld_cursor_remaining(c) < n)
    return LD_ERR_TRUNCATED;
  *out = c->data + c->pos;
  c->pos += n;
  return 0;
}

int ld_cursor_copy(ld_cursor_t *c, void *dst, size_t n) {
  const uint8_t *p;
  int rc = ld_cursor_bytes(c, n, &p);
  if (rc == 0 && n > 0)
    memcpy(dst, p, n);
  return rc;
}

int ld_cursor_skip(ld_cursor_t *c, size_t n) {
  const uint8_t *p;
  return ld_cursor_bytes(c, n, &p);
}

static int fetch_be(ld_cursor_t *c, size_t n, uint64_t *out) {
  const uint8_t *p;
  int rc = ld_cursor_bytes(c, n, &p);
  if (rc != 0)
    return rc;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v = (v << 8) | p[i];
  *out = v;
  return 0;
}

int ld_cursor_u8(ld_cursor_t *c, uint8_t *out) {
  uint64_t v;
  int rc = fetch_be(c, 1, &v);
  if (rc == 0)
    *out = (uint8_t)v;
  return rc;
}

int ld_cursor_be16(ld_cursor_t *c, uint16_t *out) {
  uint64_t v;
  int rc = fetch_be(c, 2, &v);
  if (rc == 0)
    *out = (uint16_t)v;
  return rc;
}

int ld_cursor_be32(ld_cursor_t *c, uint32_t *out) {
  uint64_t v;
  int rc = fetch_be(c, 4, &v);
  if (rc == 0)
    *out = (uint32_t)v;
  return rc;
}

int ld_cursor_be64(ld_cursor_t *c, uint64_t *out) {
  return fetch_be(c, 8, out);
}

int ld_cursor_uvarint(ld_cursor_t *c, uint64_t *out) {
  size_t used;
  int rc = ld_uvarint_decode(ld_cursor_ptr(c), ld_cursor_remaining(c), out, &used);
  if (rc == 0)
    c->pos += used;
  return rc;
}

int ld_cursor_pbvarint(ld_cursor_t *c, uint64_t *out) {
  size_t used;
  int rc = ld_pbvarint_decode(ld_cursor_ptr(c), ld_cursor_remaining(c), out, &used);
  if (rc == 0)
    c->pos += used;
  return rc;
}

int ld_cursor_lp_bytes(ld_cursor_t *c, size_t max, const uint8_t **out, size_t *n) {
  size_t start = c->pos;
  uint64_t len;
  int rc = ld_cursor_uvarint(c, &len);
  if (rc != 0)
    return rc;
  if (len > max) {
    c->pos = start;
    return LD_ERR_TOO_LARGE;
  }
  rc = ld_cursor_bytes(c, (size_t)len, out);
  if (rc != 0) {
    c->pos = start;
    return rc;
  }
  *n = (size_t)len;
  return 0;
}
