#include "base/base32.h"

#include <limits.h>

#include "base/error.h"

static const char b32_alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";

static int b32_value(char c) {
  if (c >= 'a' && c <= 'z')
    return c - 'a';
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= '2' && c <= '7')
    return c - '2' + 26;
  return -1;
}

int ld_base32_encode(const uint8_t *in, size_t len, char *out, size_t cap) {
  if (len > (SIZE_MAX - 5) / 8 || LD_BASE32_ENCODED_LEN(len) + 1 > cap ||
      LD_BASE32_ENCODED_LEN(len) > INT_MAX)
    return LD_ERR_LIMIT;
  size_t n = 0;
  uint32_t acc = 0;
  unsigned bits = 0;
  for (size_t i = 0; i < len; i++) {
    acc = (acc << 8) | in[i];
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out[n++] = b32_alphabet[(acc >> bits) & 31];
    }
  }
  if (bits > 0)
    out[n++] = b32_alphabet[(acc << (5 - bits)) & 31];
  out[n] = '\0';
  return (int)n;
}

int ld_base32_decode(const char *text, size_t textlen, uint8_t *out, size_t cap, size_t *outlen) {
  size_t rem = textlen % 8;
  if (rem == 1 || rem == 3 || rem == 6)
    return LD_ERR_BAD_ENCODING;
  size_t n = 0;
  uint32_t acc = 0;
  unsigned bits = 0;
  for (size_t i = 0; i < textlen; i++) {
    int v = b32_value(text[i]);
    if (v < 0)
      return LD_ERR_BAD_ENCODING;
    acc = (acc << 5) | (uint32_t)v;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      if (n >= cap)
        return LD_ERR_LIMIT;
      out[n++] = (uint8_t)(acc >> bits);
    }
  }
  if ((acc & ((1u << bits) - 1)) != 0)
    return LD_ERR_BAD_ENCODING; /* non-canonical trailing bits */
  *outlen = n;
  return 0;
}
