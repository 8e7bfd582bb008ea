/* nwaku's RLN keystore (waku_keystore): the file --rln-relay-cred-path names and
 * --rln-relay-cred-password opens.
 *
 * The file is one JSON object
 *
 *   {"application": "waku-rln-relay", "appIdentifier": "01234567890abcdef", "version": "0.2",
 *    "credentials": {"<HASH>": <keyfile>, …}}
 *
 * where HASH is the upper-case hex SHA-256 of chainId ‖ address ‖ decimal treeIndex of the
 * membership, and each keyfile is an Ethereum "Web3 Secret Storage" object without id and
 * version:
 *
 *   {"crypto": {"cipher": "aes-128-ctr", "cipherparams": {"iv": hex16}, "ciphertext": hex,
 *               "kdf": "pbkdf2", "kdfparams": {"dklen": 32, "c": 1000000,
 *               "prf": "hmac-sha256", "salt": hex}, "mac": hex32}}
 *
 * (or "kdf": "scrypt" with "n", "r", "p"). The key is the KDF of the password, 32 bytes: AES-128
 * takes the first 16, and mac = keccak256(key[16..32] ‖ ciphertext). The plaintext is nwaku's
 * JSON of the membership:
 *
 *   {"membershipContract": {"chainId": "…", "address": "0x…"}, "treeIndex": N,
 *    "identityCredential": {"idTrapdoor": [32 bytes], "idNullifier": […], "idSecretHash": […],
 *                           "idCommitment": […]}, "userMessageLimit": L}
 *
 * with each field element as a JSON array of its 32 little-endian bytes. nwaku picks the only
 * credential of a file, or, when there are several, the one whose hash its query (chain id,
 * contract address, membership index) gives.
 *
 * Pure functions except where a path is read or written. Any thread. */
#ifndef LD_WAKU_RLN_KEYSTORE_H
#define LD_WAKU_RLN_KEYSTORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LD_RLN_KEYSTORE_APPLICATION "waku-rln-relay"
#define LD_RLN_KEYSTORE_APP_IDENTIFIER "01234567890abcdef"
#define LD_RLN_KEYSTORE_VERSION "0.2"

#define LD_RLN_KEYSTORE_FILE_MAX (1u << 20)          /* bytes of a keystore file */
#define LD_RLN_KEYFILE_CIPHERTEXT_MAX 4096           /* bytes of one encrypted credential */
#define LD_RLN_KEYFILE_SALT_MAX 128                  /* bytes */
#define LD_RLN_KEYFILE_PBKDF2_MAX_ITERATIONS 8000000 /* nwaku writes 1,000,000 */
#define LD_RLN_KEYFILE_SCRYPT_MAX_MEMORY ((uint64_t)512 << 20) /* nwaku's n=2^18, r=1: 32 MiB */
#define LD_RLN_KEYFILE_DEFAULT_ITERATIONS 1000000              /* nwaku's PBKDF2 work factor */
#define LD_RLN_KEYFILE_KEY_BYTES 32

typedef enum ld_rln_kdf { LD_RLN_KDF_PBKDF2, LD_RLN_KDF_SCRYPT } ld_rln_kdf_t;

/* One keyfile, parsed but not opened. ld_rln_keyfile_parse fills it; ld_rln_keyfile_clear
 * releases the ciphertext. */
typedef struct ld_rln_keyfile {
  ld_rln_kdf_t kdf;
  char prf_digest[16]; /* PBKDF2: OpenSSL's digest name ("sha256" for "hmac-sha256") */
  uint32_t iterations; /* PBKDF2 */
  uint64_t n, r, p;    /* scrypt */
  uint8_t salt[LD_RLN_KEYFILE_SALT_MAX];
  size_t salt_len;
  uint8_t iv[16];
  uint8_t mac[32];
  uint8_t *ciphertext; /* malloc'd */
  size_t ciphertext_len;
} ld_rln_keyfile_t;

/* A membership as the keystore keeps it. Field elements are 32 little-endian bytes. */
typedef struct ld_rln_credential {
  uint8_t id_trapdoor[32];
  uint8_t id_nullifier[32];
  uint8_t id_secret_hash[32];
  uint8_t id_commitment[32];
  uint64_t tree_index;
  uint64_t user_message_limit; /* 0 when the credential has none */
  char chain_id[80];           /* as written: nwaku writes the decimal chain id */
  char contract_address[80];
} ld_rln_credential_t;

/* What nwaku asks the keystore for when it holds several credentials. */
typedef struct ld_rln_keystore_query {
  const char *chain_id;         /* decimal, as nwaku's $chainId */
  const char *contract_address; /* as given on the command line */
  uint64_t tree_index;          /* --rln-relay-membership-index, 0 when not given */
} ld_rln_keystore_query_t;

/* The credential key nwaku files a membership under: upper-case hex of
 * SHA-256(chain_id ‖ address ‖ decimal tree_index), NUL-terminated. */
void ld_rln_keystore_key(const char *chain_id, const char *address, uint64_t tree_index,
                         char out[65]);

/* Parses a keyfile object. LD_ERR_MALFORMED (a field missing or badly typed, reason in err),
 * LD_ERR_UNSUPPORTED (another cipher, KDF or PRF), LD_ERR_LIMIT (work factor, memory, salt or
 * ciphertext beyond the caps above), LD_ERR_NOMEM. On failure nothing needs clearing. */
int ld_rln_keyfile_parse(const json_t *keyfile, ld_rln_keyfile_t *out, char *err, size_t errlen);
void ld_rln_keyfile_clear(ld_rln_keyfile_t *kf);

/* The 32-byte key of `password` by the keyfile's KDF (slow by design: about a second for
 * nwaku's 1,000,000 PBKDF2 iterations). LD_ERR_CRYPTO. */
int ld_rln_keyfile_derive(const ld_rln_keyfile_t *kf, const char *password,
                          uint8_t key[LD_RLN_KEYFILE_KEY_BYTES]);

/* Checks the MAC and decrypts into *plain (malloc'd, ciphertext_len bytes plus a NUL; the caller
 * frees). LD_ERR_DECRYPT when the MAC does not match (a wrong password), LD_ERR_NOMEM. */
int ld_rln_keyfile_open(const ld_rln_keyfile_t *kf, const uint8_t key[LD_RLN_KEYFILE_KEY_BYTES],
                        char **plain, size_t *plain_len);

/* Reads a decrypted membership. Each field element must be canonical, and idCommitment must be
 * Poseidon(idSecretHash). LD_ERR_MALFORMED with the reason in err. */
int ld_rln_credential_from_json(const char *text, size_t len, ld_rln_credential_t *out, char *err,
                                size_t errlen);

/* nwaku's JSON of a membership; malloc'd, the caller frees. NULL when out of memory. */
char *ld_rln_credential_to_json(const ld_rln_credential_t *c);

/* The keyfile a parsed keystore object holds for `q`: the only credential, else the one filed
 * under ld_rln_keystore_key(q). Checks application, appIdentifier and version. Borrowed from
 * `keystore`. LD_ERR_MALFORMED, LD_ERR_NOT_FOUND, with the reason in err. */
int ld_rln_keystore_select(const json_t *keystore, const ld_rln_keystore_query_t *q,
                           const json_t **keyfile, char *err, size_t errlen);

/* Whether a JSON object looks like nwaku's keystore (has "application" and "credentials"). */
bool ld_rln_keystore_detect(const json_t *root);

/* Opens `keystore` (parsed) with `password` for `q` and reads the membership.
 * LD_ERR_DECRYPT means a wrong password. Other errors as above. */
int ld_rln_keystore_open(const json_t *keystore, const char *password,
                         const ld_rln_keystore_query_t *q, ld_rln_credential_t *out, char *err,
                         size_t errlen);

/* Adds `c` encrypted under `password` (PBKDF2-HMAC-SHA256 with `iterations`, a random salt and
 * IV) to the keystore at `path`, creating the file (mode 0600) when it does not exist. A
 * credential already filed under its key is left as it is (nwaku's no-op). LD_ERR_IO,
 * LD_ERR_MALFORMED (an existing file that is not a keystore of this application), LD_ERR_NOMEM. */
int ld_rln_keystore_add(const char *path, const ld_rln_credential_t *c, const char *password,
                        uint32_t iterations, char *err, size_t errlen);

#endif
