/* Fuzz target: G1 point decoding (arkworks compressed, 32 bytes, and uncompressed, 64 bytes).
 * Whatever a decoder accepts is on the curve and re-encodes to exactly the input bytes (only
 * canonical encodings pass). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zk/curve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_g1_affine_t p;
  uint8_t again[LD_G1_UNCOMPRESSED_BYTES];
  if (size >= LD_G1_COMPRESSED_BYTES && ld_g1_from_compressed(&p, data) == 0) {
    ld_g1_to_compressed(again, &p);
    if (!ld_g1_is_on_curve(&p) || memcmp(again, data, LD_G1_COMPRESSED_BYTES) != 0) {
      abort();
    }
    ld_g1_to_uncompressed(again, &p); /* the other form of the same point decodes too */
    ld_g1_affine_t q;
    if (ld_g1_from_uncompressed(&q, again) != 0 || q.infinity != p.infinity ||
        !ld_fp_equal(&q.x, &p.x) || !ld_fp_equal(&q.y, &p.y)) {
      abort();
    }
  }
  if (size >= LD_G1_UNCOMPRESSED_BYTES && ld_g1_from_uncompressed(&p, data) == 0) {
    ld_g1_to_uncompressed(again, &p);
    if (!ld_g1_is_on_curve(&p) || memcmp(again, data, LD_G1_UNCOMPRESSED_BYTES) != 0) {
      abort();
    }
  }
  return 0;
}
