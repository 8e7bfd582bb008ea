/* Fuzz target: base32, base64, base64url and hex decoding. Whenever a decoder accepts the input,
 * re-encoding must give the canonical text (the input itself up to letter case or padding) and
 * that text must decode to the same bytes. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base32.h"
#include "base/base64.h"
#include "base/error.h"
#include "base/hex.h"

typedef int (*decode_fn)(const char *, size_t, uint8_t *, size_t, size_t *);
typedef int (*encode_fn)(const uint8_t *, size_t, char *, size_t);

typedef enum { SAME, SAME_IGNORING_CASE, SAME_WITHOUT_PADDING } canon_t;

static int hex_encode_adapter(const uint8_t *in, size_t len, char *out, size_t cap) {
  if (2 * len + 1 > cap)
    return LD_ERR_LIMIT;
  return (int)ld_hex_encode(in, len, out);
}

static size_t strip_padding(const char *text, size_t len) {
  while (len > 0 && text[len - 1] == '=')
    len--;
  return len;
}

static int text_equal(const char *a, size_t alen, const char *b, size_t blen, canon_t canon) {
  if (canon == SAME_WITHOUT_PADDING)
    blen = strip_padding(b, blen);
  if (alen != blen)
    return 0;
  for (size_t i = 0; i < alen; i++) {
    char x = a[i], y = b[i];
    if (canon == SAME_IGNORING_CASE) {
      x = (char)tolower((unsigned char)x);
      y = (char)tolower((unsigned char)y);
    }
    if (x != y)
      return 0;
  }
  return 1;
}

static void check(decode_fn decode, encode_fn encode, canon_t canon, const char *text,
                  size_t size) {
  size_t cap = size + 1, tcap = 2 * size + 8;
  uint8_t *bytes = malloc(cap), *again = malloc(cap);
  char *re = malloc(tcap);
  if (bytes == NULL || again == NULL || re == NULL)
    abort();
  size_t n = 0, m = 0;
  int rc = decode(text, size, bytes, cap, &n);
  if (rc == 0) {
    if (n > size)
      abort();
    int tl = encode(bytes, n, re, tcap);
    if (tl < 0 || !text_equal(re, (size_t)tl, text, size, canon))
      abort();
    if (decode(re, (size_t)tl, again, cap, &m) != 0 || m != n ||
        (n > 0 && memcmp(again, bytes, n) != 0))
      abort();
    if (n > 0 && decode(text, size, again, n - 1, &m) != LD_ERR_LIMIT)
      abort();
  } else if (rc != LD_ERR_BAD_ENCODING) {
    abort();
  }
  free(bytes);
  free(again);
  free(re);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  check(ld_base32_decode, ld_base32_encode, SAME_IGNORING_CASE, text, size);
  check(ld_base64_decode, ld_base64_encode, SAME, text, size);
  check(ld_base64url_decode, ld_base64url_encode, SAME_WITHOUT_PADDING, text, size);
  /* hex accepts a "0x" prefix and either case: compare after the prefix */
  size_t skip = size >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') ? 2 : 0;
  uint8_t *probe = malloc(size + 1);
  size_t pn;
  if (probe == NULL)
    abort();
  if (ld_hex_decode(text, size, probe, size + 1, &pn) == 0)
    check(ld_hex_decode, hex_encode_adapter, SAME_IGNORING_CASE, text + skip, size - skip);
  free(probe);
  return 0;
}
