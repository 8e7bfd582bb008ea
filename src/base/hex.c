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

static int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

int ld_hex_decode(const char *text, size_t textlen, uint8_t *out, size_t cap, size_t *outlen) {
  if (textlen >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text += 2;
    textlen -= 2;
  }
  if (textlen % 2 != 0)
    return LD_ERR_BAD_ENCODING;
  size_t n = textlen / 2;
  for (size_t i = 0; i < n; i++) {
    int hi = hex_value(text[2 * i]);
    int lo = hex_value(text[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return LD_ERR_BAD_ENCODING;
    if (i >= cap)
      return LD_ERR_LIMIT;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  *outlen = n;
  return 0;
}
