/* Fuzz target: the snarkjs zkey reader (zk/zkey.h). Any bytes: a clear error or a key whose
 * sections have the sizes its header announces and whose coefficient indices are in range. */
#include <stdint.h>
#include <stdlib.h>

#include "zk/zkey.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_zkey_t *zk;
  if (ld_zkey_read(&zk, data, size) != 0) {
    return 0;
  }
  for (size_t i = 0; i < zk->num_coefs_a; i++) {
    if (zk->coefs_a[i].wire >= zk->num_wires || zk->coefs_a[i].constraint >= zk->domain_size) {
      abort();
    }
  }
  for (size_t i = 0; i < zk->num_coefs_b; i++) {
    if (zk->coefs_b[i].wire >= zk->num_wires || zk->coefs_b[i].constraint >= zk->domain_size) {
      abort();
    }
  }
  ld_zkey_free(zk);
  return 0;
}
