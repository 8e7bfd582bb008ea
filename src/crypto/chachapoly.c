#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "crypto/internal.h"

#define NONCE_LEN 12
#define TAG_LEN LD_CHACHAPOLY_TAG_LEN
/* RFC 8439 §2.8: the 32-bit block counter starts at 1, so a message is at most 2^38 − 64 bytes. */
#define MAX_TEXT_LEN ((UINT64_C(1) << 38) - 64)
/* EVP takes int lengths; longer inputs go through in chunks that keep ChaCha20 block alignment. */
#define EVP_CHUNK (1 << 30)

/* Per-thread reusable cipher contexts, one per direction, freed at thread exit. */
typedef struct aead_cache {
  EVP_CIPHER_CTX *enc;
  EVP_CIPHER_CTX *dec;
} aead_cache_t;

static _Thread_local aead_cache_t t_cache;
static pthread_key_t g_cache_key;
static pthread_once_t g_cache_once = PTHREAD_ONCE_INIT;
static int g_cache_key_ok;

static void cache_free(void *p) {
  aead_cache_t *c = p;
  EVP_CIPHER_CTX_free(c->enc);
  EVP_CIPHER_CTX_free(c->dec);
  c->enc = NULL;
  c->dec = NULL;
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

/* The calling thread's context for one direction (enc 1 or 0), bound to the cipher once; NULL
 * when the libraries cannot be initialised or the context cannot be allocated. */
static EVP_CIPHER_CTX *cached_ctx(EVP_CIPHER_CTX **slot, int enc) {
  if (*slot != NULL) {
    return *slot;
  }
  if (ld_crypto_init() != 0) {
    return NULL;
  }
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  if (ctx == NULL || !EVP_CipherInit_ex(ctx, EVP_chacha20_poly1305(), NULL, NULL, NULL, enc)) {
    EVP_CIPHER_CTX_free(ctx);
    return NULL;
  }
  *slot = ctx;
  cache_register();
  return ctx;
}

static void make_nonce(uint8_t n[NONCE_LEN], uint64_t counter) {
  n[0] = n[1] = n[2] = n[3] = 0;
  for (int i = 0; i < 8; i++) {
    n[4 + i] = (uint8_t)(counter >> (8 * i));
  }
}

/* Runs `len` bytes through the cipher; with out NULL they are authenticated data. */
static int feed(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in, size_t len) {
  while (len > 0) {
    int n = len > EVP_CHUNK ? EVP_CHUNK : (int)len;
    int outl;
    if (!EVP_CipherUpdate(ctx, out, &outl, in, n)) {
      return 0;
    }
    in += n;
    len -= (size_t)n;
    if (out != NULL) {
      out += n;
    }
  }
  return 1;
}

/* Starts a message: new key and nonce on the bound context, then the authenticated data. */
static int begin(EVP_CIPHER_CTX *ctx, const uint8_t key[LD_CHACHAPOLY_KEY_LEN], uint64_t nonce,
                 const uint8_t *ad, size_t adlen) {
  uint8_t n[NONCE_LEN];
  make_nonce(n, nonce);
  return EVP_CipherInit_ex(ctx, NULL, NULL, key, n, -1) && feed(ctx, NULL, ad, adlen);
}

void ld_chachapoly_encrypt(const uint8_t key[LD_CHACHAPOLY_KEY_LEN], uint64_t nonce,
                           const uint8_t *ad, size_t adlen, const uint8_t *in, size_t len,
                           uint8_t *out) {
  EVP_CIPHER_CTX *ctx = cached_ctx(&t_cache.enc, 1);
  uint8_t end[1];
  int outl;
  if (ctx == NULL || (uint64_t)len > MAX_TEXT_LEN || !begin(ctx, key, nonce, ad, adlen) ||
      !feed(ctx, out, in, len) || !EVP_CipherFinal_ex(ctx, end, &outl) ||
      !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, out + len)) {
    abort();
  }
}

/* Decrypts into `out` and checks the tag; returns 1 only when it verifies. */
static int open_into(EVP_CIPHER_CTX *ctx, const uint8_t key[LD_CHACHAPOLY_KEY_LEN], uint64_t nonce,
                     const uint8_t *ad, size_t adlen, const uint8_t *in, size_t textlen,
                     uint8_t *out) {
  uint8_t tag[TAG_LEN], end[1];
  int outl;
  memcpy(tag, in + textlen, TAG_LEN);
  return begin(ctx, key, nonce, ad, adlen) &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, tag) &&
         feed(ctx, out, in, textlen) && EVP_CipherFinal_ex(ctx, end, &outl);
}

int ld_chachapoly_decrypt(const uint8_t key[LD_CHACHAPOLY_KEY_LEN], uint64_t nonce,
                          const uint8_t *ad, size_t adlen, const uint8_t *in, size_t len,
                          uint8_t *out) {
  if (len < TAG_LEN || (uint64_t)(len - TAG_LEN) > MAX_TEXT_LEN) {
    return LD_ERR_DECRYPT;
  }
  EVP_CIPHER_CTX *ctx = cached_ctx(&t_cache.dec, 0);
  if (ctx == NULL) {
    int rc = ld_crypto_init();
    return rc != 0 ? rc : LD_ERR_NOMEM;
  }
  size_t textlen = len - TAG_LEN;
  if (!open_into(ctx, key, nonce, ad, adlen, in, textlen, out)) {
    if (textlen > 0) {
      OPENSSL_cleanse(out, textlen);
    }
    return LD_ERR_DECRYPT;
  }
  return 0;
}
