/* Fuzz target: PublicKey and PrivateKey protobuf decoding. Accepted keys must re-encode
 * canonically (decoding the canonical form gives the same key), derive a valid peer ID, and
 * private keys must sign messages their public half verifies. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "p2p/key.h"
#include "p2p/peerid.h"

static void check_public(const ld_pubkey_t *pub) {
  ld_pubkey_t again;
  ld_peerid_t id, parsed;
  if (ld_pubkey_decode(&again, pub->proto, pub->proto_len) != 0 || !ld_pubkey_equal(pub, &again))
    abort();
  if (ld_peerid_from_pubkey(&id, pub) != 0 || !ld_peerid_matches(&id, pub))
    abort();
  if (ld_peerid_from_bytes(&parsed, id.bytes, id.len) != 0 || !ld_peerid_equal(&id, &parsed))
    abort();
}

static void check_private(const ld_privkey_t *key) {
  ld_pubkey_t pub, pub2;
  ld_privkey_t again;
  ld_buf_t enc;
  ld_privkey_public(key, &pub);
  check_public(&pub);
  ld_buf_init(&enc);
  if (ld_privkey_encode(key, &enc) != 0 || ld_privkey_decode(&again, enc.data, enc.len) != 0)
    abort();
  ld_buf_clear(&enc);
  ld_privkey_public(&again, &pub2);
  if (!ld_pubkey_equal(&pub, &pub2))
    abort();
  uint8_t sig[LD_SIG_MAX];
  size_t siglen;
  if (ld_privkey_sign(key, "fuzz", 4, sig, &siglen) != 0 ||
      ld_pubkey_verify(&pub, "fuzz", 4, sig, siglen) != 0)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_pubkey_t pub;
  ld_privkey_t key;
  if (ld_pubkey_decode(&pub, data, size) == 0)
    check_public(&pub);
  if (ld_privkey_decode(&key, data, size) == 0)
    check_private(&key);
  return 0;
}
