/* Fuzz target: G2 point decoding (arkworks compressed, 64 bytes, and uncompressed, 128 bytes).
 * Whatever a decoder accepts is on the twist, in the order-r subgroup, and re-encodes to exactly
 * the input bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zk/curve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_g2_affine_t p;
  uint8_t again[LD_G2_UNCOMPRESSED_BYTES];
  if (size >= LD_G2_COMPRESSED_BYTES && ld_g2_from_compressed(&p, data) == 0) {
    ld_g2_to_compressed(again, &p);
    if (!ld_g2_is_on_curve(&p) || !ld_g2_is_in_subgroup(&p) ||
        memcmp(again, data, LD_G2_COMPRESSED_BYTES) != 0) {
      abort();
    }
    ld_g2_to_uncompressed(again, &p);
    ld_g2_affine_t q;
    if (ld_g2_from_uncompressed(&q, again) != 0 || q.infinity != p.infinity ||
        !ld_fp2_equal(&q.x, &p.x) || !ld_fp2_equal(&q.y, &p.y)) {
      abort();
    }
  }
  if (size >= LD_G2_UNCOMPRESSED_BYTES && ld_g2_from_uncompressed(&p, data) == 0) {
    ld_g2_to_uncompressed(again, &p);
    if (!ld_g2_is_on_curve(&p) || !ld_g2_is_in_subgroup(&p) ||
        memcmp(again, data, LD_G2_UNCOMPRESSED_BYTES) != 0) {
      abort();
    }
  }
  return 0;
}
