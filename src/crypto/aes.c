#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "crypto/internal.h"

/* Per-thread reusable contexts bound to their cipher once, freed at thread exit. */
typedef struct aes_cache {
  EVP_CIPHER_CTX *ctr;
  EVP_CIPHER_CTX *gcm_enc;
  EVP_CIPHER_CTX *gcm_dec;
} aes_cache_t;

static _Thread_local aes_cache_t t_cache;
static pthread_key_t g_cache_key;
static pthread_once_t g_cache_once = PTHREAD_ONCE_INIT;
static int g_cache_key_ok;

static void cache_free(void *p) {
  aes_cache_t *c = p;
  EVP_CIPHER_CTX_free(c->ctr);
  EVP_CIPHER_CTX_free(c->gcm_enc);
  EVP_CIPHER_CTX_free(c->gcm_dec);
  memset(c, 0, sizeof *c);
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

/* The calling thread's context in `slot`, bound to `cipher` for direction `enc`; NULL when the
 * libraries cannot be initialised or the context cannot be allocated. */
static EVP_CIPHER_CTX *cached_ctx(EVP_CIPHER_CTX **slot, const EVP_CIPHER *cipher, int enc) {
  if (*slot != NULL) {
    return *slot;
  }
  if (ld_crypto_init() != 0) {
    return NULL;
  }
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  if (ctx == NULL || !EVP_CipherInit_ex(ctx, cipher, NULL, NULL, NULL, enc)) {
    EVP_CIPHER_CTX_free(ctx);
    return NULL;
  }
  *slot = ctx;
  cache_register();
  return ctx;
}

void ld_aes128_ctr(const uint8_t key[LD_AES128_KEY_LEN], const uint8_t iv[LD_AES_BLOCK_LEN],
                   const uint8_t *in, size_t len, uint8_t *out) {
  EVP_CIPHER_CTX *ctx = cached_ctx(&t_cache.ctr, EVP_aes_128_ctr(), 1);
  int outl;
  if (ctx == NULL || len > INT_MAX || !EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, -1) ||
      (len > 0 && !EVP_CipherUpdate(ctx, out, &outl, in, (int)len))) {
    abort();
  }
}

/* New key and nonce on a bound GCM context, then the authenticated data. */
static int gcm_begin(EVP_CIPHER_CTX *ctx, const uint8_t key[LD_AES128_KEY_LEN],
                     const uint8_t nonce[LD_AES_GCM_NONCE_LEN], const uint8_t *ad, size_t adlen) {
  int outl;
  return EVP_CipherInit_ex(ctx, NULL, NULL, key, nonce, -1) &&
         (adlen == 0 || EVP_CipherUpdate(ctx, NULL, &outl, ad, (int)adlen));
}

void ld_aes128_gcm_encrypt(const uint8_t key[LD_AES128_KEY_LEN],
                           const uint8_t nonce[LD_AES_GCM_NONCE_LEN], const uint8_t *ad,
                           size_t adlen, const uint8_t *in, size_t len, uint8_t *out) {
  EVP_CIPHER_CTX *ctx = cached_ctx(&t_cache.gcm_enc, EVP_aes_128_gcm(), 1);
  uint8_t end[LD_AES_BLOCK_LEN];
  int outl;
  if (ctx == NULL || len > LD_AES_GCM_MAX_LEN || adlen > LD_AES_GCM_MAX_LEN ||
      !gcm_begin(ctx, key, nonce, ad, adlen) ||
      (len > 0 && !EVP_CipherUpdate(ctx, out, &outl, in, (int)len)) ||
      !EVP_CipherFinal_ex(ctx, end, &outl) ||
      !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, LD_AES_GCM_TAG_LEN, out + len)) {
    abort();
  }
}

int ld_aes128_gcm_decrypt(const uint8_t key[LD_AES128_KEY_LEN],
                          const uint8_t nonce[LD_AES_GCM_NONCE_LEN], const uint8_t *ad,
                          size_t adlen, const uint8_t *in, size_t len, uint8_t *out) {
  if (len < LD_AES_GCM_TAG_LEN || len - LD_AES_GCM_TAG_LEN > LD_AES_GCM_MAX_LEN ||
      adlen > LD_AES_GCM_MAX_LEN) {
    return LD_ERR_DECRYPT;
  }
  EVP_CIPHER_CTX *ctx = cached_ctx(&t_cache.gcm_dec, EVP_aes_128_gcm(), 0);
  if (ctx == NULL) {
    int rc = ld_crypto_init();
    return rc != 0 ? rc : LD_ERR_NOMEM;
  }
  size_t textlen = len - LD_AES_GCM_TAG_LEN;
  uint8_t tag[LD_AES_GCM_TAG_LEN], end[LD_AES_BLOCK_LEN];
  int outl;
  memcpy(tag, in + textlen, LD_AES_GCM_TAG_LEN);
  int ok = gcm_begin(ctx, key, nonce, ad, adlen) &&
           EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, LD_AES_GCM_TAG_LEN, tag) &&
           (textlen == 0 || EVP_CipherUpdate(ctx, out, &outl, in, (int)textlen)) &&
           EVP_CipherFinal_ex(ctx, end, &outl);
  if (!ok) {
    if (textlen > 0) {
      OPENSSL_cleanse(out, textlen);
    }
    return LD_ERR_DECRYPT;
  }
  return 0;
}
