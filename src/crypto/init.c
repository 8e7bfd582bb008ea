#include <pthread.h>
#include <stdlib.h>

#include <openssl/evp.h>
#include <secp256k1.h>
#include <sodium.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "crypto/internal.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_once_t g_openssl_once = PTHREAD_ONCE_INIT;
static int g_status = LD_ERR_CRYPTO;
static secp256k1_context *g_secp;
static EVP_MD *g_sha256;
static EVP_MAC *g_hmac;

static int secp_create(void) {
  uint8_t seed[32];
  g_secp = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
  if (g_secp == NULL) {
    return LD_ERR_NOMEM;
  }
  randombytes_buf(seed, sizeof seed);
  int ok = secp256k1_context_randomize(g_secp, seed);
  sodium_memzero(seed, sizeof seed);
  return ok ? 0 : LD_ERR_CRYPTO;
}

static void init_once(void) {
  if (sodium_init() < 0) {
    return;
  }
  g_status = secp_create();
}

/* OpenSSL sets up its default provider at the first fetch, which makes about 1.4 MiB of the
 * library resident: it is done at the first SHA-256 or HMAC, so that a process that has not
 * hashed yet (an idle node without peers) does not pay it. */
static void openssl_once(void) {
  g_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
  g_hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
}

static void require_openssl(void) {
  if (pthread_once(&g_openssl_once, openssl_once) != 0 || g_sha256 == NULL || g_hmac == NULL) {
    abort();
  }
}

int ld_crypto_init(void) {
  if (pthread_once(&g_once, init_once) != 0) {
    return LD_ERR_INTERNAL;
  }
  return g_status;
}

void ld_crypto_require(void) {
  if (ld_crypto_init() != 0) {
    abort();
  }
}

const secp256k1_context *ld_crypto_secp256k1(void) {
  return g_secp;
}

int ld_crypto_secp256k1_ready(const secp256k1_context **ctx) {
  int rc = ld_crypto_init();
  if (rc == 0) {
    *ctx = g_secp;
  }
  return rc;
}

const EVP_MD *ld_crypto_sha256_md(void) {
  require_openssl();
  return g_sha256;
}

EVP_MAC *ld_crypto_hmac_mac(void) {
  require_openssl();
  return g_hmac;
}
