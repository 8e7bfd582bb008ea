/* nwaku's RLN keystore (keystore.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/hex.h"
#include "crypto/crypto.h"
#include "crypto/kdf.h"
#include "crypto/keccak.h"
#include "waku/rln/keystore.h"
#include "zk/rln.h"

/* ---- keyfile ----------------------------------------------------------------------------- */

static int hex_field(const json_t *obj, const char *name, uint8_t *out, size_t cap, size_t *len,
                     char *err, size_t errlen) {
  const char *text = json_string_value(json_object_get(obj, name));
  if (text == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "keyfile: no \"%s\" hex string", name);
  size_t n = strlen(text);
  if (n > 2 * cap + 2)
    return ld_error_fmt(err, errlen, LD_ERR_LIMIT, "keyfile: \"%s\" longer than %zu bytes", name,
                        cap);
  if (ld_hex_decode(text, n, out, cap, len) != 0 || *len == 0)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "keyfile: \"%s\" is not hex", name);
  return 0;
}

static int int_field(const json_t *obj, const char *name, uint64_t max, uint64_t *out, char *err,
                     size_t errlen) {
  const json_t *v = json_object_get(obj, name);
  if (!json_is_integer(v) || json_integer_value(v) < 1)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "keyfile: \"%s\" is not a positive integer",
                        name);
  if ((uint64_t)json_integer_value(v) > max)
    return ld_error_fmt(err, errlen, LD_ERR_LIMIT, "keyfile: \"%s\" above %" PRIu64, name, max);
  *out = (uint64_t)json_integer_value(v);
  return 0;
}

/* "hmac-sha256" → "sha256"; nwaku also names SHA-3 ("hmac-sha3_256") and Keccak digests. */
static int prf_digest(const char *prf, char out[16]) {
  if (prf == NULL || strncasecmp(prf, "hmac-", 5) != 0 || strlen(prf + 5) >= 16)
    return LD_ERR_UNSUPPORTED;
  snprintf(out, 16, "%s", prf + 5);
  for (char *c = out; *c != '\0'; c++) {
    *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    if (*c == '_')
      *c = '-';
  }
  static const char *const known[] = {"sha224",   "sha256",   "sha384",   "sha512",
                                      "sha3-224", "sha3-256", "sha3-384", "sha3-512"};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(out, known[i]) == 0)
      return 0;
  return LD_ERR_UNSUPPORTED;
}

static int parse_kdf(const json_t *crypto, ld_rln_keyfile_t *kf, char *err, size_t errlen) {
  const char *kdf = json_string_value(json_object_get(crypto, "kdf"));
  const json_t *params = json_object_get(crypto, "kdfparams");
  if (kdf == NULL || !json_is_object(params))
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "keyfile: no \"kdf\" and \"kdfparams\"");
  int rc = hex_field(params, "salt", kf->salt, sizeof kf->salt, &kf->salt_len, err, errlen);
  uint64_t dklen = 0;
  if (rc == 0)
    rc = int_field(params, "dklen", 128, &dklen, err, errlen);
  if (rc != 0)
    return rc;
  if (strcmp(kdf, "pbkdf2") == 0) {
    kf->kdf = LD_RLN_KDF_PBKDF2;
    const char *prf = json_string_value(json_object_get(params, "prf"));
    if (prf_digest(prf, kf->prf_digest) != 0)
      return ld_error_fmt(err, errlen, LD_ERR_UNSUPPORTED, "keyfile: PBKDF2 PRF %s not supported",
                          prf != NULL ? prf : "(none)");
    uint64_t c = 0;
    rc = int_field(params, "c", LD_RLN_KEYFILE_PBKDF2_MAX_ITERATIONS, &c, err, errlen);
    kf->iterations = (uint32_t)c;
    return rc;
  }
  if (strcmp(kdf, "scrypt") == 0) {
    kf->kdf = LD_RLN_KDF_SCRYPT;
    rc = int_field(params, "n", (uint64_t)1 << 30, &kf->n, err, errlen);
    if (rc == 0)
      rc = int_field(params, "r", 1u << 16, &kf->r, err, errlen);
    if (rc == 0)
      rc = int_field(params, "p", 1u << 16, &kf->p, err, errlen);
    if (rc == 0 && (kf->n < 2 || (kf->n & (kf->n - 1)) != 0))
      return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "keyfile: scrypt n is not a power of 2");
    if (rc == 0 && 128 * kf->r * (kf->n + kf->p) > LD_RLN_KEYFILE_SCRYPT_MAX_MEMORY)
      return ld_error_fmt(err, errlen, LD_ERR_LIMIT,
                          "keyfile: scrypt needs more than %" PRIu64 " MiB",
                          LD_RLN_KEYFILE_SCRYPT_MAX_MEMORY >> 20);
    return rc;
  }
  return ld_error_fmt(err, errlen, LD_ERR_UNSUPPORTED, "keyfile: KDF %s not supported", kdf);
}

static int parse_cipher(const json_t *crypto, ld_rln_keyfile_t *kf, char *err, size_t errlen) {
  const char *cipher = json_string_value(json_object_get(crypto, "cipher"));
  if (cipher == NULL || strcasecmp(cipher, "aes-128-ctr") != 0)
    return ld_error_fmt(err, errlen, LD_ERR_UNSUPPORTED, "keyfile: cipher %s not supported",
                        cipher != NULL ? cipher : "(none)");
  size_t len = 0;
  int rc = hex_field(json_object_get(crypto, "cipherparams"), "iv", kf->iv, sizeof kf->iv, &len,
                     err, errlen);
  if (rc == 0 && len != sizeof kf->iv)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "keyfile: the IV is not 16 bytes");
  if (rc == 0)
    rc = hex_field(crypto, "mac", kf->mac, sizeof kf->mac, &len, err, errlen);
  if (rc == 0 && len != sizeof kf->mac)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "keyfile: the MAC is not 32 bytes");
  if (rc != 0)
    return rc;
  kf->ciphertext = malloc(LD_RLN_KEYFILE_CIPHERTEXT_MAX);
  if (kf->ciphertext == NULL)
    return LD_ERR_NOMEM;
  return hex_field(crypto, "ciphertext", kf->ciphertext, LD_RLN_KEYFILE_CIPHERTEXT_MAX,
                   &kf->ciphertext_len, err, errlen);
}

int ld_rln_keyfile_parse(const json_t *keyfile, ld_rln_keyfile_t *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  const json_t *crypto = json_object_get(keyfile, "crypto");
  if (!json_is_object(crypto))
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "keyfile: no \"crypto\" object");
  int rc = parse_kdf(crypto, out, err, errlen);
  if (rc == 0)
    rc = parse_cipher(crypto, out, err, errlen);
  if (rc != 0)
    ld_rln_keyfile_clear(out);
  return rc;
}

void ld_rln_keyfile_clear(ld_rln_keyfile_t *kf) {
  free(kf->ciphertext);
  memset(kf, 0, sizeof *kf);
}

int ld_rln_keyfile_derive(const ld_rln_keyfile_t *kf, const char *password,
                          uint8_t key[LD_RLN_KEYFILE_KEY_BYTES]) {
  size_t len = strlen(password);
  int rc = kf->kdf == LD_RLN_KDF_PBKDF2
               ? ld_pbkdf2_hmac(kf->prf_digest, password, len, kf->salt, kf->salt_len,
                                kf->iterations, key, LD_RLN_KEYFILE_KEY_BYTES)
               : ld_scrypt(password, len, kf->salt, kf->salt_len, kf->n, kf->r, kf->p,
                           LD_RLN_KEYFILE_SCRYPT_MAX_MEMORY, key, LD_RLN_KEYFILE_KEY_BYTES);
  return rc == 0 ? 0 : LD_ERR_CRYPTO;
}

static void keyfile_mac(const uint8_t key[LD_RLN_KEYFILE_KEY_BYTES], const uint8_t *ct, size_t len,
                        uint8_t mac[32]) {
  ld_keccak256_ctx_t ctx;
  ld_keccak256_init(&ctx);
  ld_keccak256_update(&ctx, key + 16, 16);
  ld_keccak256_update(&ctx, ct, len);
  ld_keccak256_final(&ctx, mac);
}

static int equal_ct(const uint8_t *a, const uint8_t *b, size_t n) {
  uint8_t d = 0;
  for (size_t i = 0; i < n; i++)
    d |= (uint8_t)(a[i] ^ b[i]);
  return d == 0;
}

int ld_rln_keyfile_open(const ld_rln_keyfile_t *kf, const uint8_t key[LD_RLN_KEYFILE_KEY_BYTES],
                        char **plain, size_t *plain_len) {
  uint8_t mac[32];
  keyfile_mac(key, kf->ciphertext, kf->ciphertext_len, mac);
  if (!equal_ct(mac, kf->mac, sizeof mac))
    return LD_ERR_DECRYPT;
  char *out = malloc(kf->ciphertext_len + 1);
  if (out == NULL)
    return LD_ERR_NOMEM;
  ld_aes128_ctr(key, kf->iv, kf->ciphertext, kf->ciphertext_len, (uint8_t *)out);
  out[kf->ciphertext_len] = '\0';
  *plain = out;
  *plain_len = kf->ciphertext_len;
  return 0;
}

/* ---- the membership JSON ------------------------------------------------------------------ */

static int byte_array(const json_t *obj, const char *name, uint8_t out[32], char *err,
                      size_t errlen) {
  const json_t *a = json_object_get(obj, name);
  if (!json_is_array(a) || json_array_size(a) != 32)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED,
                        "credential: \"%s\" is not an array of 32 bytes", name);
  for (size_t i = 0; i < 32; i++) {
    const json_t *v = json_array_get(a, i);
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 255)
      return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "credential: \"%s\"[%zu] is not a byte",
                          name, i);
    out[i] = (uint8_t)json_integer_value(v);
  }
  ld_fr_t x;
  if (ld_fr_from_bytes(&x, out) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED,
                        "credential: \"%s\" is not a canonical field element", name);
  return 0;
}

static int copy_string(const json_t *obj, const char *name, char *out, size_t cap, char *err,
                       size_t errlen) {
  const json_t *v = json_object_get(obj, name);
  if (!json_is_string(v) || json_string_length(v) >= cap)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED,
                        "credential: \"membershipContract.%s\" is not a string of at most %zu "
                        "bytes",
                        name, cap - 1);
  memcpy(out, json_string_value(v), json_string_length(v) + 1);
  return 0;
}

static int read_identity(const json_t *id, ld_rln_credential_t *c, char *err, size_t errlen) {
  int rc = byte_array(id, "idTrapdoor", c->id_trapdoor, err, errlen);
  if (rc == 0)
    rc = byte_array(id, "idNullifier", c->id_nullifier, err, errlen);
  if (rc == 0)
    rc = byte_array(id, "idSecretHash", c->id_secret_hash, err, errlen);
  if (rc == 0)
    rc = byte_array(id, "idCommitment", c->id_commitment, err, errlen);
  if (rc != 0)
    return rc;
  ld_fr_t secret, commitment;
  uint8_t expect[32];
  ld_fr_from_bytes(&secret, c->id_secret_hash);
  ld_rln_id_commitment(&commitment, &secret);
  ld_fr_to_bytes(expect, &commitment);
  explicit_bzero(&secret, sizeof secret);
  if (memcmp(expect, c->id_commitment, 32) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED,
                        "credential: idCommitment is not Poseidon(idSecretHash)");
  return 0;
}

static int read_credential(const json_t *root, ld_rln_credential_t *c, char *err, size_t errlen) {
  const json_t *contract = json_object_get(root, "membershipContract");
  const json_t *index = json_object_get(root, "treeIndex");
  const json_t *limit = json_object_get(root, "userMessageLimit");
  if (!json_is_object(contract) || !json_is_integer(index) || json_integer_value(index) < 0)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED,
                        "credential: no \"membershipContract\" object and \"treeIndex\"");
  if (limit != NULL && (!json_is_integer(limit) || json_integer_value(limit) < 0))
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED,
                        "credential: \"userMessageLimit\" is not a number");
  c->tree_index = (uint64_t)json_integer_value(index);
  c->user_message_limit = limit != NULL ? (uint64_t)json_integer_value(limit) : 0;
  int rc = copy_string(contract, "chainId", c->chain_id, sizeof c->chain_id, err, errlen);
  if (rc == 0)
    rc = copy_string(contract, "address", c->contract_address, sizeof c->contract_address, err,
                     errlen);
  if (rc != 0)
    return rc;
  const json_t *id = json_object_get(root, "identityCredential");
  if (!json_is_object(id))
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "credential: no \"identityCredential\"");
  return read_identity(id, c, err, errlen);
}

int ld_rln_credential_from_json(const char *text, size_t len, ld_rln_credential_t *out, char *err,
                                size_t errlen) {
  memset(out, 0, sizeof *out);
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
  if (!json_is_object(root)) {
    json_decref(root);
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "credential: not a JSON object");
  }
  int rc = read_credential(root, out, err, errlen);
  json_decref(root);
  if (rc != 0)
    explicit_bzero(out, sizeof *out);
  return rc;
}

static json_t *bytes_json(const uint8_t b[32]) {
  json_t *a = json_array();
  for (size_t i = 0; a != NULL && i < 32; i++)
    json_array_append_new(a, json_integer(b[i]));
  return a;
}

char *ld_rln_credential_to_json(const ld_rln_credential_t *c) {
  json_t *root = json_pack(
      "{s:{s:s,s:s},s:I,s:{s:o,s:o,s:o,s:o},s:I}", "membershipContract", "chainId", c->chain_id,
      "address", c->contract_address, "treeIndex", (json_int_t)c->tree_index, "identityCredential",
      "idTrapdoor", bytes_json(c->id_trapdoor), "idNullifier", bytes_json(c->id_nullifier),
      "idSecretHash", bytes_json(c->id_secret_hash), "idCommitment", bytes_json(c->id_commitment),
      "userMessageLimit", (json_int_t)c->user_message_limit);
  if (root == NULL)
    return NULL;
  char *text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(root);
  return text;
}

/* ---- the keystore ------------------------------------------------------------------------- */

void ld_rln_keystore_key(const char *chain_id, const char *address, uint64_t tree_index,
                         char out[65]) {
  char index[24];
  snprintf(index, sizeof index, "%" PRIu64, tree_index);
  ld_sha256_ctx_t ctx;
  uint8_t digest[LD_SHA256_LEN];
  ld_sha256_begin(&ctx);
  ld_sha256_update(&ctx, chain_id, strlen(chain_id));
  ld_sha256_update(&ctx, address, strlen(address));
  ld_sha256_update(&ctx, index, strlen(index));
  ld_sha256_final(&ctx, digest);
  ld_hex_encode(digest, sizeof digest, out);
  for (int i = 0; i < 64; i++)
    out[i] = (char)(out[i] >= 'a' ? out[i] - 'a' + 'A' : out[i]);
}

bool ld_rln_keystore_detect(const json_t *root) {
  return json_is_object(root) && json_object_get(root, "application") != NULL &&
         json_object_get(root, "credentials") != NULL;
}

static int check_app_field(const json_t *ks, const char *name, const char *want, char *err,
                           size_t errlen) {
  const char *have = json_string_value(json_object_get(ks, name));
  if (have == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "keystore: no \"%s\"", name);
  if (strcmp(have, want) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED,
                        "keystore: %s does not match: expected '%s' but got '%s'", name, want,
                        have);
  return 0;
}

int ld_rln_keystore_select(const json_t *keystore, const ld_rln_keystore_query_t *q,
                           const json_t **keyfile, char *err, size_t errlen) {
  int rc = check_app_field(keystore, "application", LD_RLN_KEYSTORE_APPLICATION, err, errlen);
  if (rc == 0)
    rc = check_app_field(keystore, "appIdentifier", LD_RLN_KEYSTORE_APP_IDENTIFIER, err, errlen);
  if (rc == 0)
    rc = check_app_field(keystore, "version", LD_RLN_KEYSTORE_VERSION, err, errlen);
  if (rc != 0)
    return rc;
  const json_t *creds = json_object_get(keystore, "credentials");
  if (!json_is_object(creds))
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "keystore: \"credentials\" is no object");
  if (json_object_size(creds) == 0)
    return ld_error_fmt(err, errlen, LD_ERR_NOT_FOUND, "keystore: no credentials");
  if (json_object_size(creds) == 1) {
    *keyfile = json_object_iter_value(json_object_iter((json_t *)creds));
    return 0;
  }
  char key[65];
  ld_rln_keystore_key(q->chain_id != NULL ? q->chain_id : "",
                      q->contract_address != NULL ? q->contract_address : "", q->tree_index, key);
  *keyfile = json_object_get(creds, key);
  if (*keyfile == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_NOT_FOUND,
                        "keystore: %zu credentials and none for chain %s, contract %s, index "
                        "%" PRIu64,
                        json_object_size(creds), q->chain_id != NULL ? q->chain_id : "",
                        q->contract_address != NULL ? q->contract_address : "", q->tree_index);
  return 0;
}

int ld_rln_keystore_open(const json_t *keystore, const char *password,
                         const ld_rln_keystore_query_t *q, ld_rln_credential_t *out, char *err,
                         size_t errlen) {
  const json_t *entry = NULL;
  ld_rln_keyfile_t kf;
  int rc = ld_rln_keystore_select(keystore, q, &entry, err, errlen);
  if (rc == 0)
    rc = ld_rln_keyfile_parse(entry, &kf, err, errlen);
  if (rc != 0)
    return rc;
  uint8_t key[LD_RLN_KEYFILE_KEY_BYTES];
  char *plain = NULL;
  size_t len = 0;
  rc = ld_rln_keyfile_derive(&kf, password, key);
  if (rc == 0)
    rc = ld_rln_keyfile_open(&kf, key, &plain, &len);
  ld_rln_keyfile_clear(&kf);
  explicit_bzero(key, sizeof key);
  if (rc == LD_ERR_DECRYPT)
    return ld_error_fmt(err, errlen, rc, "keystore: the MAC does not match: wrong password");
  if (rc != 0)
    return ld_error_fmt(err, errlen, rc, "keystore: %s", ld_strerror(rc));
  rc = ld_rln_credential_from_json(plain, len, out, err, errlen);
  explicit_bzero(plain, len);
  free(plain);
  return rc;
}

/* ---- writing ------------------------------------------------------------------------------ */

static json_t *hex_json(const uint8_t *b, size_t n) {
  char text[2 * LD_RLN_KEYFILE_CIPHERTEXT_MAX + 1];
  if (n > LD_RLN_KEYFILE_CIPHERTEXT_MAX)
    return NULL;
  ld_hex_encode(b, n, text);
  return json_string(text);
}

static json_t *seal(const char *plain, const char *password, uint32_t iterations) {
  size_t len = strlen(plain);
  if (len > LD_RLN_KEYFILE_CIPHERTEXT_MAX)
    return NULL;
  uint8_t salt[16], iv[16], key[LD_RLN_KEYFILE_KEY_BYTES], mac[32];
  uint8_t ct[LD_RLN_KEYFILE_CIPHERTEXT_MAX];
  ld_random_bytes(salt, sizeof salt);
  ld_random_bytes(iv, sizeof iv);
  if (ld_pbkdf2_hmac("sha256", password, strlen(password), salt, sizeof salt, iterations, key,
                     sizeof key) != 0)
    return NULL;
  ld_aes128_ctr(key, iv, (const uint8_t *)plain, len, ct);
  keyfile_mac(key, ct, len, mac);
  explicit_bzero(key, sizeof key);
  return json_pack("{s:{s:s,s:{s:o},s:o,s:s,s:{s:i,s:I,s:s,s:o},s:o}}", "crypto", "cipher",
                   "aes-128-ctr", "cipherparams", "iv", hex_json(iv, sizeof iv), "ciphertext",
                   hex_json(ct, len), "kdf", "pbkdf2", "kdfparams", "dklen",
                   LD_RLN_KEYFILE_KEY_BYTES, "c", (json_int_t)iterations, "prf", "hmac-sha256",
                   "salt", hex_json(salt, sizeof salt), "mac", hex_json(mac, sizeof mac));
}

static int load_or_create(const char *path, json_t **out, char *err, size_t errlen) {
  if (access(path, F_OK) != 0) {
    *out = json_pack("{s:s,s:s,s:{},s:s}", "application", LD_RLN_KEYSTORE_APPLICATION,
                     "appIdentifier", LD_RLN_KEYSTORE_APP_IDENTIFIER, "credentials", "version",
                     LD_RLN_KEYSTORE_VERSION);
    return *out != NULL ? 0 : LD_ERR_NOMEM;
  }
  json_error_t jerr;
  *out = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
  if (*out == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "%s: %s", path, jerr.text);
  const json_t *dummy = NULL;
  ld_rln_keystore_query_t q = {0};
  int rc = ld_rln_keystore_select(*out, &q, &dummy, err, errlen);
  if (rc == LD_ERR_MALFORMED) {
    json_decref(*out);
    return rc;
  }
  return 0;
}

static int save(const char *path, const json_t *ks, char *err, size_t errlen) {
  char *text = json_dumps(ks, JSON_COMPACT | JSON_PRESERVE_ORDER);
  if (text == NULL)
    return LD_ERR_NOMEM;
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  size_t len = strlen(text);
  int ok = fd >= 0 && write(fd, text, len) == (ssize_t)len && write(fd, "\n", 1) == 1;
  if (fd >= 0)
    ok = close(fd) == 0 && ok;
  free(text);
  if (!ok || rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    return ld_error_fmt(err, errlen, LD_ERR_IO, "%s: %s", path, strerror(e));
  }
  return 0;
}

int ld_rln_keystore_add(const char *path, const ld_rln_credential_t *c, const char *password,
                        uint32_t iterations, char *err, size_t errlen) {
  json_t *ks = NULL;
  int rc = load_or_create(path, &ks, err, errlen);
  if (rc != 0)
    return rc;
  char key[65];
  ld_rln_keystore_key(c->chain_id, c->contract_address, c->tree_index, key);
  json_t *creds = json_object_get(ks, "credentials");
  if (json_object_get(creds, key) == NULL) {
    char *plain = ld_rln_credential_to_json(c);
    json_t *kf = plain != NULL ? seal(plain, password, iterations) : NULL;
    if (plain != NULL) {
      explicit_bzero(plain, strlen(plain));
      free(plain);
    }
    rc = kf != NULL ? json_object_set_new(creds, key, kf) : LD_ERR_NOMEM;
    if (rc == 0)
      rc = save(path, ks, err, errlen);
  }
  json_decref(ks);
  return rc;
}
