/* Fuzz target: multiaddr text parsing. Whatever parses must print, and the printed text must parse
 * back to the same bytes and print identically (text → binary → text → binary is stable). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "p2p/multiaddr.h"

#define INPUT_MAX 4096
#define TEXT_WORST (8 * LD_MULTIADDR_MAX) /* longest text a valid binary form can print */

static void check(const char *text) {
  static char out[TEXT_WORST], again[TEXT_WORST];
  ld_multiaddr_t a, b, c;
  if (ld_multiaddr_parse(&a, text) != 0)
    return;
  if (a.len == 0 || a.len > LD_MULTIADDR_MAX || ld_multiaddr_from_bytes(&c, a.bytes, a.len) != 0)
    abort();
  int n = ld_multiaddr_to_text(&a, out, sizeof out);
  if (n <= 0 || (size_t)n != strlen(out))
    abort();
  if (ld_multiaddr_parse(&b, out) != 0 || !ld_multiaddr_equal(&a, &b))
    abort();
  if (ld_multiaddr_to_text(&b, again, sizeof again) != n || strcmp(out, again) != 0)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > INPUT_MAX)
    return 0;
  char *text = malloc(size + 1);
  if (text == NULL)
    return 0;
  if (size > 0)
    memcpy(text, data, size);
  text[size] = '\0';
  check(text);
  free(text);
  return 0;
}
