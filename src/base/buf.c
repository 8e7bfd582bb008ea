#include "base/buf.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/varint.h"

void ld_buf_init(ld_buf_t *b) {
  b->data = NULL;
  b->len = 0;
  b->cap = 0;
}

void ld_buf_clear(ld_buf_t *b) {
  free(b->data);
  ld_buf_init(b);
}

int ld_buf_reserve(ld_buf_t *b, size_t extra) {
  if (extra > SIZE_MAX - b->len)
    return LD_ERR_NOMEM;
  size_t need = b->len + extra;
  if (need <= b->cap)
    return 0;
  size_t cap = b->cap < 64 ? 64 : b->cap;
  while (cap < need)
    cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  uint8_t *p = realloc(b->data, cap);
  if (p == NULL)
    return LD_ERR_NOMEM;
  b->data = p;
  b->cap = cap;
  return 0;
}

int ld_buf_append(ld_buf_t *b, const void *data, size_t n) {
  if (n == 0)
    return 0;
  int rc = ld_buf_reserve(b, n);
  if (rc != 0)
    return rc;
  memcpy(b->data + b->len, data, n);
  b->len += n;
  return 0;
}

int ld_buf_u8(ld_buf_t *b, uint8_t v) {
  return ld_buf_append(b, &v, 1);
}

int ld_buf_be16(ld_buf_t *b, uint16_t v) {
  uint8_t p[2] = {(uint8_t)(v >> 8), (uint8_t)v};
  return ld_buf_append(b, p, sizeof p);
}

int ld_buf_be32(ld_buf_t *b, uint32_t v) {
  uint8_t p[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  return ld_buf_append(b, p, sizeof p);
}

int ld_buf_be64(ld_buf_t *b, uint64_t v) {
  uint8_t p[8];
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (56 - 8 * i));
  return ld_buf_append(b, p, sizeof p);
}

int ld_buf_varint(ld_buf_t *b, uint64_t v) {
  uint8_t p[LD_PBVARINT_MAX_LEN];
  return ld_buf_append(b, p, ld_varint_encode(v, p));
}

int ld_buf_lp(ld_buf_t *b, const void *data, size_t n) {
  uint8_t p[LD_PBVARINT_MAX_LEN];
  size_t k = ld_varint_encode(n, p);
  int rc = ld_buf_reserve(b, k + n);
  if (rc != 0)
    return rc;
  ld_buf_append(b, p, k);
  ld_buf_append(b, data, n);
  return 0;
}

void ld_buf_consume(ld_buf_t *b, size_t n) {
  if (n >= b->len) {
    b->len = 0;
    return;
  }
  memmove(b->data, b->data + n, b->len - n);
  b->len -= n;
}
