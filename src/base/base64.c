#include "base/base64.h"

#include <limits.h>
#include <stdbool.h>

#include "base/error.h"

static const char b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int b64_value(char c, bool url) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == (url ? '-' : '+'))
    return 62;
  if (c == (url ? '_' : '/'))
    return 63;
  return -1;
}

static int b64_encode(const uint8_t *in, size_t len, char *out, size_t cap, const char *alphabet,
                      bool pad) {
  if (len > (SIZE_MAX - 3) / 4)
    return LD_ERR_LIMIT;
  size_t need = pad ? LD_BASE64_ENCODED_LEN(len) : LD_BASE64URL_ENCODED_LEN(len);
  if (need + 1 > cap || need > INT_MAX)
    return LD_ERR_LIMIT;
  size_t n = 0;
  size_t i = 0;
  for (; i + 3 <= len; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
    out[n++] = alphabet[v >> 18];
    out[n++] = alphabet[(v >> 12) & 63];
    out[n++] = alphabet[(v >> 6) & 63];
    out[n++] = alphabet[v & 63];
  }
  if (i < len) {
    uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0);
    out[n++] = alphabet[v >> 18];
    out[n++] = alphabet[(v >> 12) & 63];
    if (i + 1 < len)
      out[n++] = alphabet[(v >> 6) & 63];
    else if (pad)
      out[n++] = '=';
    if (pad)
      out[n++] = '=';
  }
  out[n] = '\0';
  return (int)n;
}

/* Decodes unpadded text (its length mod 4 must not be 1); trailing bits must be zero. */
static int b64_decode_bare(const char *text, size_t textlen, uint8_t *out, size_t cap,
                           size_t *outlen, bool url) {
  if (textlen % 4 == 1)
    return LD_ERR_BAD_ENCODING;
  size_t n = 0;
  uint32_t acc = 0;
  unsigned bits = 0;
  for (size_t i = 0; i < textlen; i++) {
    int v = b64_value(text[i], url);
    if (v < 0)
      return LD_ERR_BAD_ENCODING;
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (n >= cap)
        return LD_ERR_LIMIT;
      out[n++] = (uint8_t)(acc >> bits);
    }
  }
  if ((acc & ((1u << bits) - 1)) != 0)
    return LD_ERR_BAD_ENCODING;
  *outlen = n;
  return 0;
}

/* Strips correct '=' padding: the text must be a multiple of 4 long with at most two '='. */
static int b64_strip_padding(const char *text, size_t *textlen) {
  size_t len = *textlen;
  if (len % 4 != 0)
    return LD_ERR_BAD_ENCODING;
  size_t pads = 0;
  while (pads < 2 && pads < len && text[len - 1 - pads] == '=')
    pads++;
  *textlen = len - pads;
  return 0;
}

int ld_base64_encode(const uint8_t *in, size_t len, char *out, size_t cap) {
  return b64_encode(in, len, out, cap, b64_std, true);
}

int ld_base64_decode(const char *text, size_t textlen, uint8_t *out, size_t cap, size_t *outlen) {
  if (b64_strip_padding(text, &textlen) != 0)
    return LD_ERR_BAD_ENCODING;
  return b64_decode_bare(text, textlen, out, cap, outlen, false);
}

int ld_base64url_encode(const uint8_t *in, size_t len, char *out, size_t cap) {
  return b64_encode(in, len, out, cap, b64_url, false);
}

int ld_base64url_decode(const char *text, size_t textlen, uint8_t *out, size_t cap,
                        size_t *outlen) {
  if (textlen > 0 && text[textlen - 1] == '=' && b64_strip_padding(text, &textlen) != 0)
    return LD_ERR_BAD_ENCODING;
  return b64_decode_bare(text, textlen, out, cap, outlen, true);
}
