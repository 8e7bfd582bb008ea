/* PBKDF2 and scrypt over OpenSSL (kdf.h). */
#include <limits.h>
#include <string.h>

#include <openssl/evp.h>

#include "base/error.h"
#include "crypto/kdf.h"

static const EVP_MD *digest_by_name(const char *name) {
  static const struct {
    const char *name;
    const EVP_MD *(*md)(void);
  } k_digests[] = {
      {"sha224", EVP_sha224},     {"sha256", EVP_sha256},     {"sha384", EVP_sha384},
      {"sha512", EVP_sha512},     {"sha3-224", EVP_sha3_224}, {"sha3-256", EVP_sha3_256},
      {"sha3-384", EVP_sha3_384}, {"sha3-512", EVP_sha3_512},
  };
  for (size_t i = 0; i < sizeof k_digests / sizeof k_digests[0]; i++)
    if (strcmp(name, k_digests[i].name) == 0)
      return k_digests[i].md();
  return NULL;
}

int ld_pbkdf2_hmac(const char *digest, const void *password, size_t password_len, const void *salt,
                   size_t salt_len, uint32_t iterations, uint8_t *out, size_t outlen) {
  const EVP_MD *md = digest_by_name(digest);
  if (md == NULL)
    return LD_ERR_UNSUPPORTED;
  if (iterations == 0 || iterations > INT_MAX || password_len > INT_MAX || salt_len > INT_MAX ||
      outlen == 0 || outlen > INT_MAX)
    return LD_ERR_INVALID_ARG;
  if (PKCS5_PBKDF2_HMAC(password_len != 0 ? password : "", (int)password_len,
                        salt_len != 0 ? salt : (const void *)"", (int)salt_len, (int)iterations, md,
                        (int)outlen, out) != 1)
    return LD_ERR_CRYPTO;
  return 0;
}

int ld_scrypt(const void *password, size_t password_len, const void *salt, size_t salt_len,
              uint64_t n, uint64_t r, uint64_t p, uint64_t max_memory, uint8_t *out,
              size_t outlen) {
  if (n < 2 || (n & (n - 1)) != 0 || r == 0 || p == 0 || outlen == 0)
    return LD_ERR_INVALID_ARG;
  /* scrypt's memory is about 128·r·(n + p) bytes; refuse before OpenSSL allocates */
  if (r > max_memory / 128 || n + p < n || (n + p) > max_memory / 128 / r)
    return LD_ERR_LIMIT;
  if (EVP_PBE_scrypt(password_len != 0 ? password : "", password_len,
                     salt_len != 0 ? salt : (const unsigned char *)"", salt_len, n, r, p,
                     max_memory + 4096, out, outlen) != 1)
    return LD_ERR_CRYPTO;
  return 0;
}
