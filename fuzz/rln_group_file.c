/* Fuzz target: RLN-relay's static group and identity files (waku/rln/group_file.h). The input is
 * parsed as JSON and read both as a group and as an identity: never a crash, and every member of
 * an accepted group is a canonical field element that prints back to the same value. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "waku/rln/group_file.h"

static void check_member(const ld_fr_t *x) {
  uint8_t le[32];
  ld_fr_to_bytes(le, x);
  uint8_t be[32];
  for (int i = 0; i < 32; i++)
    be[i] = le[31 - i];
  char text[2 + 64 + 1] = "0x";
  ld_hex_encode(be, sizeof be, text + 2);
  ld_fr_t y;
  if (ld_rln_field_from_hex(text, &y) != 0 || memcmp(x, &y, sizeof y) != 0)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
  if (root == NULL)
    return 0;
  ld_fr_t *leaves = NULL;
  size_t n = 0;
  char err[256];
  if (ld_rln_group_from_json(root, 1u << 20, &leaves, &n, err, sizeof err) == 0) {
    if (n == 0)
      abort();
    for (size_t i = 0; i < n; i++)
      check_member(&leaves[i]);
    free(leaves);
  }
  ld_fr_t secret;
  if (ld_rln_identity_from_json(root, &secret) == 0)
    check_member(&secret);
  json_decref(root);
  return 0;
}
