#include <pthread.h>
#include <stdlib.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "crypto/internal.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static EVP_KDF *g_hkdf;

static void fetch_hkdf(void) {
  g_hkdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
}

int ld_hkdf_sha256(const uint8_t *salt, size_t saltlen, const uint8_t *ikm, size_t ikmlen,
                   const uint8_t *info, size_t infolen, uint8_t *out, size_t outlen) {
  static const uint8_t empty[1];
  if (outlen == 0 || outlen > 255 * LD_SHA256_LEN) {
    return LD_ERR_INVALID_ARG;
  }
  int rc = ld_crypto_init();
  if (rc != 0) {
    return rc;
  }
  pthread_once(&g_once, fetch_hkdf);
  if (g_hkdf == NULL) {
    return LD_ERR_CRYPTO;
  }
  EVP_KDF_CTX *kctx = EVP_KDF_CTX_new(g_hkdf);
  if (kctx == NULL) {
    return LD_ERR_NOMEM;
  }
  /* OpenSSL refuses NULL buffers, even of length 0. */
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, "SHA256", 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)(ikmlen ? ikm : empty), ikmlen),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)(saltlen ? salt : empty),
                                        saltlen),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)(infolen ? info : empty),
                                        infolen),
      OSSL_PARAM_construct_end(),
  };
  int ok = EVP_KDF_derive(kctx, out, outlen, params);
  EVP_KDF_CTX_free(kctx);
  return ok ? 0 : LD_ERR_CRYPTO;
}
