/* Fuzz target: base58btc decoding. Base58 text and byte strings are in one-to-one
 * correspondence, so every accepted text must re-encode to exactly itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base58.h"
#include "base/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  size_t cap = size + 1;
  uint8_t *bytes = malloc(cap);
  uint8_t *again = malloc(cap);
  char *reencoded = malloc(size + 2);
  if (bytes == NULL || again == NULL || reencoded == NULL)
    abort();
  size_t n = 0;
  int rc = ld_base58_decode(text, size, bytes, cap, &n);
  if (rc == 0) {
    if (n > size)
      abort(); /* never more bytes than chars */
    int tl = ld_base58_encode(bytes, n, reencoded, size + 2);
    if (tl < 0 || (size_t)tl != size || memcmp(reencoded, text, size) != 0)
      abort();
    size_t m = 0;
    if (ld_base58_decode(reencoded, (size_t)tl, again, cap, &m) != 0 || m != n ||
        (n > 0 && memcmp(again, bytes, n) != 0))
      abort();
    /* a buffer one byte short must be refused, not overrun */
    if (n > 0 && ld_base58_decode(text, size, again, n - 1, &m) != LD_ERR_LIMIT)
      abort();
  } else if (rc != LD_ERR_BAD_ENCODING && rc != LD_ERR_TOO_LARGE) {
    abort();
  }
  free(bytes);
  free(again);
  free(reencoded);
  return 0;
}
