#include "base/hex.h"

#include "base/error.h"

static const char hex_digits[] = "0123456789abcdef";

size_t ld_hex_encode(const uint8_t *in, size_t len, char *out) {
  for (size_t i = 0; i < len; i++) {
    out[2 * i] = hex_digits[in[i] >> 4];
    out[2 * i + 1] = hex_digits[in[i] & 0x0f];
  }
  out[2 * len] = '\0';
  return 2 * len;
}

/* 1 + the value of each hex digit character; 0 for every other character. */
static const uint8_t k_digit_plus_one[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

int ld_hex_digit_value(int c) {
  if (c < 0 || c > 255)
    return -1;
  return (int)k_digit_plus_one[c] - 1;
}

int ld_hex_decode(const char *text, size_t textlen, uint8_t *out, size_t cap, size_t *outlen) {
  if (textlen >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text += 2;
    textlen -= 2;
  }
  if (textlen % 2 != 0)
    return LD_ERR_BAD_ENCODING;
  size_t n = textlen / 2;
  const unsigned char *t = (const unsigned char *)text;
  for (size_t i = 0; i < n; i++) {
    unsigned hi = k_digit_plus_one[t[2 * i]], lo = k_digit_plus_one[t[2 * i + 1]];
    if ((hi == 0) | (lo == 0))
      return LD_ERR_BAD_ENCODING;
    if (i >= cap)
      return LD_ERR_LIMIT;
    out[i] = (uint8_t)((hi - 1) << 4 | (lo - 1));
  }
  *outlen = n;
  return 0;
}
