/* Fuzz target: the 128-byte compressed Groth16 proof A ‖ B ‖ C as zerokit writes it, then RLN-v2
 * verification. A proof that decodes re-encodes to the same bytes; verifying it against fixed
 * values (the input's next 160 bytes, when they are canonical, else zeros) never crashes and
 * answers only 0 or LD_ERR_BAD_PROOF. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "zk/rln.h"

static ld_rln_verifier_t *verifier;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < LD_RLN_PROOF_BYTES) {
    return 0;
  }
  ld_groth16_proof_t proof;
  if (ld_groth16_proof_decode(&proof, data) != 0) {
    return 0;
  }
  uint8_t again[LD_RLN_PROOF_BYTES];
  ld_groth16_proof_encode(again, &proof);
  if (memcmp(again, data, LD_RLN_PROOF_BYTES) != 0) {
    abort();
  }
  if (verifier == NULL && ld_rln_verifier_new(&verifier) != 0) {
    abort();
  }
  ld_rln_proof_values_t values;
  memset(&values, 0, sizeof values);
  if (size >= LD_RLN_PROOF_BYTES + LD_RLN_PROOF_VALUES_BYTES &&
      ld_rln_proof_values_decode(&values, data + LD_RLN_PROOF_BYTES) != 0) {
    memset(&values, 0, sizeof values);
  }
  int rc = ld_rln_verify(verifier, data, &values);
  if (rc != 0 && rc != LD_ERR_BAD_PROOF) {
    abort();
  }
  return 0;
}
