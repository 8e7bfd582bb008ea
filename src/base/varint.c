#include "base/varint.h"

#include "base/error.h"

size_t ld_varint_encode(uint64_t v, uint8_t *out) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  out[n++] = (uint8_t)v;
  return n;
}

size_t ld_varint_len(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

int ld_uvarint_decode(const uint8_t *in, size_t len, uint64_t *value, size_t *used) {
  uint64_t v = 0;
  for (size_t i = 0; i < LD_UVARINT_MAX_LEN; i++) {
    if (i >= len)
      return LD_ERR_TRUNCATED;
    uint8_t b = in[i];
    v |= (uint64_t)(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      if (i > 0 && b == 0)
        return LD_ERR_VARINT_NONMINIMAL;
      *value = v;
      *used = i + 1;
      return 0;
    }
  }
  return LD_ERR_VARINT_TOO_LONG;
}

int ld_pbvarint_decode(const uint8_t *in, size_t len, uint64_t *value, size_t *used) {
  uint64_t v = 0;
  for (size_t i = 0; i < LD_PBVARINT_MAX_LEN; i++) {
    if (i >= len)
      return LD_ERR_TRUNCATED;
    uint8_t b = in[i];
    if (i == 9 && b > 1)
      return LD_ERR_VARINT_TOO_LONG;
    v |= (uint64_t)(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      *value = v;
      *used = i + 1;
      return 0;
    }
  }
  return LD_ERR_VARINT_TOO_LONG;
}
