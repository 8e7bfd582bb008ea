#include "base/base58.h"

#include <string.h>

#include "base/error.h"

static const char b58_alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/* Bytes needed for a base58 number of LD_BASE58_MAX_INPUT digits: log(58)/log(256) < 0.733. */
#define B58_MAX_BYTES (LD_BASE58_MAX_INPUT * 733 / 1000 + 1)
#define B58_MAX_DIGITS LD_BASE58_ENCODED_MAX(LD_BASE58_MAX_INPUT)

static int b58_value(char c) {
  if (c >= '1' && c <= '9')
    return c - '1';
  if (c >= 'A' && c <= 'H')
    return c - 'A' + 9;
  if (c >= 'J' && c <= 'N')
    return c - 'J' + 17;
  if (c >= 'P' && c <= 'Z')
    return c - 'P' + 22;
  if (c >= 'a' && c <= 'k')
    return c - 'a' + 33;
  if (c >= 'm' && c <= 'z')
    return c - 'm' + 44;
  return -1;
}

/* Multiplies the big-endian number digits[start..size) (base `base`) by `mul` and adds `add`,
 * growing towards index 0. Returns the new start, or SIZE_MAX on overflow of the buffer. */
static size_t bignum_muladd(uint8_t *digits, size_t size, size_t start, unsigned base, unsigned mul,
                            unsigned add) {
  unsigned carry = add;
  size_t i = size;
  while (i > start || carry != 0) {
    if (i == 0)
      return SIZE_MAX;
    i--;
    unsigned v = (i >= start ? digits[i] : 0u) * mul + carry;
    digits[i] = (uint8_t)(v % base);
    carry = v / base;
  }
  return i < start ? i : start;
}

int ld_base58_encode(const uint8_t *in, size_t len, char *out, size_t cap) {
  if (len > LD_BASE58_MAX_INPUT)
    return LD_ERR_TOO_LARGE;
  size_t zeros = 0;
  while (zeros < len && in[zeros] == 0)
    zeros++;
  uint8_t digits[B58_MAX_DIGITS];
  size_t start = sizeof digits;
  for (size_t i = zeros; i < len; i++)
    start = bignum_muladd(digits, sizeof digits, start, 58, 256, in[i]);
  size_t ndigits = sizeof digits - start;
  size_t total = zeros + ndigits;
  if (total + 1 > cap)
    return LD_ERR_LIMIT;
  memset(out, '1', zeros);
  for (size_t i = 0; i < ndigits; i++)
    out[zeros + i] = b58_alphabet[digits[start + i]];
  out[total] = '\0';
  return (int)total;
}

int ld_base58_decode(const char *text, size_t textlen, uint8_t *out, size_t cap, size_t *outlen) {
  if (textlen > LD_BASE58_MAX_INPUT)
    return LD_ERR_TOO_LARGE;
  size_t zeros = 0;
  while (zeros < textlen && text[zeros] == '1')
    zeros++;
  uint8_t bytes[B58_MAX_BYTES];
  size_t start = sizeof bytes;
  for (size_t i = zeros; i < textlen; i++) {
    int v = b58_value(text[i]);
    if (v < 0)
      return LD_ERR_BAD_ENCODING;
    start = bignum_muladd(bytes, sizeof bytes, start, 256, 58, (unsigned)v);
    if (start == SIZE_MAX)
      return LD_ERR_INTERNAL;
  }
  size_t nbytes = sizeof bytes - start;
  if (zeros + nbytes > cap)
    return LD_ERR_LIMIT;
  memset(out, 0, zeros);
  if (nbytes > 0)
    memcpy(out + zeros, bytes + start, nbytes);
  *outlen = zeros + nbytes;
  return 0;
}
