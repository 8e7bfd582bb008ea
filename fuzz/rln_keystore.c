/* Fuzz target: nwaku's RLN keystore reader (waku/rln/keystore.h). The input is parsed as JSON and
 * read as a keystore (credential selection, keyfile parsing, the MAC check and decryption with the
 * password "fuzz" when the KDF is cheap, else with a zero key), as a keyfile alone and as a
 * decrypted membership. Never a crash; an accepted membership writes back to JSON that reads back
 * to the same credential. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "waku/rln/keystore.h"

static void check_credential(const char *text, size_t len) {
  ld_rln_credential_t c, again;
  char err[256];
  if (ld_rln_credential_from_json(text, len, &c, err, sizeof err) != 0)
    return;
  char *out = ld_rln_credential_to_json(&c);
  if (out == NULL)
    abort();
  if (ld_rln_credential_from_json(out, strlen(out), &again, err, sizeof err) != 0 ||
      memcmp(&c, &again, sizeof c) != 0)
    abort();
  free(out);
}

static int cheap(const ld_rln_keyfile_t *kf) {
  return kf->kdf == LD_RLN_KDF_PBKDF2 ? kf->iterations <= 64 : kf->n * kf->r * kf->p <= 1024;
}

static void open_keyfile(const json_t *entry) {
  ld_rln_keyfile_t kf;
  char err[256];
  if (ld_rln_keyfile_parse(entry, &kf, err, sizeof err) != 0)
    return;
  uint8_t key[LD_RLN_KEYFILE_KEY_BYTES] = {0};
  if (cheap(&kf) && ld_rln_keyfile_derive(&kf, "fuzz", key) != 0)
    memset(key, 0, sizeof key);
  char *plain = NULL;
  size_t len = 0;
  if (ld_rln_keyfile_open(&kf, key, &plain, &len) == 0) {
    check_credential(plain, len);
    free(plain);
  }
  ld_rln_keyfile_clear(&kf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_credential((const char *)data, size);
  json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
  if (root == NULL)
    return 0;
  if (ld_rln_keystore_detect(root)) {
    ld_rln_keystore_query_t q = {"1337", "0x0000000000000000000000000000000000000042", 0};
    const json_t *entry = NULL;
    char err[256];
    if (ld_rln_keystore_select(root, &q, &entry, err, sizeof err) == 0)
      open_keyfile(entry);
  }
  open_keyfile(root);
  json_decref(root);
  return 0;
}
