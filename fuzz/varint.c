/* Fuzz target: both varint dialects must agree with the encoder on every value they accept. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/varint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t v;
  size_t used;
  uint8_t again[10];
  if (ld_uvarint_decode(data, size, &v, &used) == 0) {
    if (ld_varint_encode(v, again) != used || memcmp(again, data, used) != 0)
      abort(); /* a minimal varint must re-encode to the same bytes */
  }
  if (ld_pbvarint_decode(data, size, &v, &used) == 0) {
    if (used > 10 || ld_varint_len(v) > used)
      abort();
  }
  return 0;
}
