/* Fuzz target: binary multiaddr validation. Every accepted address must iterate to its end, print,
 * and parse back from its text to identical bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "p2p/multiaddr.h"

#define TEXT_WORST (8 * LD_MULTIADDR_MAX) /* longest text a valid binary form can print */

static void check_components(const ld_multiaddr_t *ma) {
  size_t off = 0, prev = 0;
  ld_multiaddr_component_t comp;
  while (ld_multiaddr_next(ma, &off, &comp) == 1) {
    if (off <= prev || off > ma->len || comp.value + comp.value_len > ma->bytes + off)
      abort();
    prev = off;
  }
  if (off != ma->len)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char text[TEXT_WORST];
  ld_multiaddr_t a, b;
  if (ld_multiaddr_from_bytes(&a, data, size) != 0)
    return 0;
  if (a.len != size || memcmp(a.bytes, data, size) != 0)
    abort();
  check_components(&a);
  int n = ld_multiaddr_to_text(&a, text, sizeof text);
  if (n <= 0)
    abort();
  if (ld_multiaddr_parse(&b, text) != 0 || !ld_multiaddr_equal(&a, &b))
    abort();
  ld_peerid_t id;
  ld_multiaddr_peerid(&b, &id, true);
  return 0;
}
