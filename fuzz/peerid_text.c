/* Fuzz target: peer ID text parsing. Accepted IDs must be valid binary peer IDs whose base58 and
 * CID texts parse back to the same ID. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "p2p/peerid.h"

#define INPUT_MAX 512

static void check(const char *text) {
  ld_peerid_t id, again;
  char out[LD_PEERID_TEXT_MAX];
  if (ld_peerid_parse(&id, text) != 0)
    return;
  if (ld_peerid_from_bytes(&again, id.bytes, id.len) != 0 || !ld_peerid_equal(&id, &again))
    abort();
  if (ld_peerid_to_text(&id, out, sizeof out) <= 0 || ld_peerid_parse(&again, out) != 0 ||
      !ld_peerid_equal(&id, &again))
    abort();
  if (ld_peerid_to_cid_text(&id, out, sizeof out) <= 0 || ld_peerid_parse(&again, out) != 0 ||
      !ld_peerid_equal(&id, &again))
    abort();
  ld_pubkey_t pub;
  if (ld_peerid_pubkey(&id, &pub) == 0 && !ld_peerid_matches(&id, &pub))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > INPUT_MAX)
    return 0;
  char text[INPUT_MAX + 1];
  if (size > 0)
    memcpy(text, data, size);
  text[size] = '\0';
  check(text);
  return 0;
}
