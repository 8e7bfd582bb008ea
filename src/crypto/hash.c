#include <pthread.h>
#include <stdlib.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "crypto/internal.h"

/* Per-thread reusable OpenSSL contexts for the one-shot hashes, freed at thread exit. */
typedef struct hash_cache {
  EVP_MD_CTX *md;
  EVP_MAC_CTX *mac;
} hash_cache_t;

static _Thread_local hash_cache_t t_cache;
static pthread_key_t g_cache_key;
static pthread_once_t g_cache_once = PTHREAD_ONCE_INIT;
static int g_cache_key_ok;

static void cache_free(void *p) {
  hash_cache_t *c = p;
  EVP_MD_CTX_free(c->md);
  EVP_MAC_CTX_free(c->mac);
  c->md = NULL;
  c->mac = NULL;
}

static void cache_key_create(void) {
  g_cache_key_ok = pthread_key_create(&g_cache_key, cache_free) == 0;
}

static void cache_register(void) {
  pthread_once(&g_cache_once, cache_key_create);
  if (g_cache_key_ok) {
    pthread_setspecific(g_cache_key, &t_cache);
  }
}

static EVP_MD_CTX *cached_md_ctx(void) {
  if (t_cache.md == NULL) {
    ld_crypto_require();
    t_cache.md = EVP_MD_CTX_new();
    if (t_cache.md == NULL) {
      abort();
    }
    cache_register();
  }
  return t_cache.md;
}

static EVP_MAC_CTX *new_hmac_ctx(void) {
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
      OSSL_PARAM_construct_end(),
  };
  EVP_MAC_CTX *mac = EVP_MAC_CTX_new(ld_crypto_hmac_mac());
  if (mac == NULL || !EVP_MAC_CTX_set_params(mac, params)) {
    abort();
  }
  return mac;
}

static EVP_MAC_CTX *cached_mac_ctx(void) {
  if (t_cache.mac == NULL) {
    ld_crypto_require();
    t_cache.mac = new_hmac_ctx();
    cache_register();
  }
  return t_cache.mac;
}

void ld_sha256_2(const void *a, size_t alen, const void *b, size_t blen,
                 uint8_t out[LD_SHA256_LEN]) {
  EVP_MD_CTX *md = cached_md_ctx();
  if (!EVP_DigestInit_ex2(md, ld_crypto_sha256_md(), NULL) || !EVP_DigestUpdate(md, a, alen) ||
      !EVP_DigestUpdate(md, b, blen) || !EVP_DigestFinal_ex(md, out, NULL)) {
    abort();
  }
}

void ld_sha256(const void *data, size_t len, uint8_t out[LD_SHA256_LEN]) {
  ld_sha256_2(data, len, NULL, 0, out);
}

void ld_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len,
                    uint8_t out[LD_SHA256_LEN]) {
  static const uint8_t empty_key[1];
  EVP_MAC_CTX *mac = cached_mac_ctx();
  size_t outlen = 0;
  /* A NULL key would make OpenSSL reuse the previous call's key. */
  if (key == NULL || keylen == 0) {
    key = empty_key;
    keylen = 0;
  }
  if (!EVP_MAC_init(mac, key, keylen, NULL) || !EVP_MAC_update(mac, data, len) ||
      !EVP_MAC_final(mac, out, &outlen, LD_SHA256_LEN) || outlen != LD_SHA256_LEN) {
    abort();
  }
}

int ld_sha256_begin(ld_sha256_ctx_t *ctx) {
  int rc = ld_crypto_init();
  ctx->impl = NULL;
  if (rc != 0) {
    return rc;
  }
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  if (md == NULL) {
    return LD_ERR_NOMEM;
  }
  if (!EVP_DigestInit_ex2(md, ld_crypto_sha256_md(), NULL)) {
    EVP_MD_CTX_free(md);
    return LD_ERR_NOMEM;
  }
  ctx->impl = md;
  return 0;
}

int ld_sha256_update(ld_sha256_ctx_t *ctx, const void *data, size_t len) {
  if (ctx->impl == NULL) {
    return LD_ERR_STATE;
  }
  if (!EVP_DigestUpdate(ctx->impl, data, len)) {
    ld_sha256_clear(ctx);
    return LD_ERR_CRYPTO;
  }
  return 0;
}

int ld_sha256_final(ld_sha256_ctx_t *ctx, uint8_t out[LD_SHA256_LEN]) {
  if (ctx->impl == NULL) {
    return LD_ERR_STATE;
  }
  int ok = EVP_DigestFinal_ex(ctx->impl, out, NULL);
  ld_sha256_clear(ctx);
  return ok ? 0 : LD_ERR_CRYPTO;
}

void ld_sha256_clear(ld_sha256_ctx_t *ctx) {
  EVP_MD_CTX_free(ctx->impl);
  ctx->impl = NULL;
}
