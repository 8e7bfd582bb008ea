/* Throughput of the crypto layer on one core. Prints one figure per line; never fails on a time.
 * Each figure runs for about half a second. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "crypto/crypto.h"

#define RUN_SECONDS 0.5
#define FRAME (64 * 1024)

typedef void (*bench_fn)(void *arg);

static volatile uint8_t g_sink;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Calls fn in batches until RUN_SECONDS have passed; returns calls per second. */
static double calls_per_second(bench_fn fn, void *arg, int batch) {
  fn(arg);
  double start = now_seconds(), elapsed;
  long calls = 0;
  do {
    for (int i = 0; i < batch; i++) {
      fn(arg);
    }
    calls += batch;
    elapsed = now_seconds() - start;
  } while (elapsed < RUN_SECONDS);
  return (double)calls / elapsed;
}

static void report_mbps(const char *name, bench_fn fn, void *arg, size_t bytes) {
  double rate = calls_per_second(fn, arg, 8) * (double)bytes / 1e6;
  printf("%-70s %10.1f MB/s\n", name, rate);
}

static void report_ops(const char *name, bench_fn fn, void *arg) {
  printf("%-70s %10.0f ops/s\n", name, calls_per_second(fn, arg, 16));
}

typedef struct {
  uint8_t key[LD_CHACHAPOLY_KEY_LEN];
  uint64_t nonce;
  uint8_t *buf;    /* FRAME + tag, encrypted in place */
  uint8_t *sealed; /* FRAME + tag, a valid frame under nonce 0 */
  uint8_t *plain;  /* FRAME */
} aead_bench_t;

static void aead_encrypt(void *arg) {
  aead_bench_t *b = arg;
  ld_chachapoly_encrypt(b->key, b->nonce++, NULL, 0, b->buf, FRAME, b->buf);
}

static void aead_decrypt(void *arg) {
  aead_bench_t *b = arg;
  if (ld_chachapoly_decrypt(b->key, 0, NULL, 0, b->sealed, FRAME + LD_CHACHAPOLY_TAG_LEN,
                            b->plain) != 0) {
    abort();
  }
}

/* libsodium's IETF ChaCha20-Poly1305 on the same frames, for comparison. */
static void sodium_nonce(uint8_t n[crypto_aead_chacha20poly1305_ietf_NPUBBYTES], uint64_t counter) {
  memset(n, 0, crypto_aead_chacha20poly1305_ietf_NPUBBYTES);
  for (int i = 0; i < 8; i++) {
    n[4 + i] = (uint8_t)(counter >> (8 * i));
  }
}

static void aead_encrypt_sodium(void *arg) {
  aead_bench_t *b = arg;
  uint8_t n[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];
  sodium_nonce(n, b->nonce++);
  crypto_aead_chacha20poly1305_ietf_encrypt(b->buf, NULL, b->buf, FRAME, NULL, 0, NULL, n, b->key);
}

static void aead_decrypt_sodium(void *arg) {
  aead_bench_t *b = arg;
  uint8_t n[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];
  sodium_nonce(n, 0);
  if (crypto_aead_chacha20poly1305_ietf_decrypt(b->plain, NULL, NULL, b->sealed,
                                                FRAME + LD_CHACHAPOLY_TAG_LEN, NULL, 0, n,
                                                b->key) != 0) {
    abort();
  }
}

static void bench_aead(void) {
  aead_bench_t b = {.nonce = 0};
  b.buf = calloc(1, FRAME + LD_CHACHAPOLY_TAG_LEN);
  b.sealed = calloc(1, FRAME + LD_CHACHAPOLY_TAG_LEN);
  b.plain = calloc(1, FRAME);
  if (!b.buf || !b.sealed || !b.plain) {
    abort();
  }
  ld_random_bytes(b.key, sizeof b.key);
  ld_random_bytes(b.plain, FRAME);
  ld_chachapoly_encrypt(b.key, 0, NULL, 0, b.plain, FRAME, b.sealed);
  report_mbps("ChaCha20-Poly1305 encrypt, 64 KiB in place (ld_chachapoly, OpenSSL)", aead_encrypt,
              &b, FRAME);
  report_mbps("ChaCha20-Poly1305 decrypt, 64 KiB (ld_chachapoly, OpenSSL)", aead_decrypt, &b,
              FRAME);
  report_mbps("ChaCha20-Poly1305 encrypt, 64 KiB in place (libsodium, comparison)",
              aead_encrypt_sodium, &b, FRAME);
  report_mbps("ChaCha20-Poly1305 decrypt, 64 KiB (libsodium, comparison)", aead_decrypt_sodium, &b,
              FRAME);
  g_sink = b.buf[0] ^ b.plain[0];
  free(b.buf);
  free(b.sealed);
  free(b.plain);
}

typedef struct {
  uint8_t *data;
  size_t len;
  uint8_t out[LD_SHA256_LEN];
} hash_bench_t;

static void hash_ours(void *arg) {
  hash_bench_t *b = arg;
  ld_sha256(b->data, b->len, b->out);
}

static void hash_sodium(void *arg) {
  hash_bench_t *b = arg;
  crypto_hash_sha256(b->out, b->data, b->len);
}

static void hmac_ours(void *arg) {
  hash_bench_t *b = arg;
  ld_hmac_sha256(b->out, sizeof b->out, b->data, b->len, b->out);
}

static void bench_hash(void) {
  hash_bench_t b = {.len = FRAME};
  b.data = calloc(1, FRAME);
  if (b.data == NULL) {
    abort();
  }
  ld_random_bytes(b.data, FRAME);
  report_mbps("SHA-256, 64 KiB (ld_sha256, OpenSSL)", hash_ours, &b, FRAME);
  report_mbps("SHA-256, 64 KiB (libsodium crypto_hash_sha256)", hash_sodium, &b, FRAME);
  report_mbps("HMAC-SHA256, 64 KiB (ld_hmac_sha256)", hmac_ours, &b, FRAME);
  b.len = 32;
  report_ops("SHA-256, 32 bytes (ld_sha256)", hash_ours, &b);
  report_ops("SHA-256, 32 bytes (libsodium crypto_hash_sha256)", hash_sodium, &b);
  report_ops("HMAC-SHA256, 32-byte key and message", hmac_ours, &b);
  g_sink = b.out[0];
  free(b.data);
}

typedef struct {
  uint8_t priv[32], pub[32], shared[32];
} x25519_bench_t;

static void x25519_op(void *arg) {
  x25519_bench_t *b = arg;
  if (ld_x25519(b->shared, b->priv, b->pub) != 0) {
    abort();
  }
}

typedef struct {
  uint8_t pub[LD_ED25519_PUBLIC_LEN], secret[LD_ED25519_SECRET_LEN], sig[LD_ED25519_SIG_LEN];
  uint8_t msg[56];
} ed25519_bench_t;

static void ed25519_sign_op(void *arg) {
  ed25519_bench_t *b = arg;
  ld_ed25519_sign(b->secret, b->msg, sizeof b->msg, b->sig);
}

static void ed25519_verify_op(void *arg) {
  ed25519_bench_t *b = arg;
  if (ld_ed25519_verify(b->pub, b->msg, sizeof b->msg, b->sig) != 0) {
    abort();
  }
}

typedef struct {
  uint8_t secret[LD_SECP256K1_SECRET_LEN], pub[LD_SECP256K1_PUBLIC_LEN];
  uint8_t sig[LD_SECP256K1_DER_MAX], msg[56];
  size_t siglen;
} secp_bench_t;

static void secp_sign_op(void *arg) {
  secp_bench_t *b = arg;
  if (ld_secp256k1_sign(b->secret, b->msg, sizeof b->msg, b->sig, &b->siglen) != 0) {
    abort();
  }
}

static void secp_verify_op(void *arg) {
  secp_bench_t *b = arg;
  if (ld_secp256k1_verify(b->pub, sizeof b->pub, b->msg, sizeof b->msg, b->sig, b->siglen) != 0) {
    abort();
  }
}

static void bench_public_key(void) {
  x25519_bench_t x;
  uint8_t other[32];
  ld_x25519_keypair(x.pub, other);
  ld_x25519_keypair(other, x.priv);
  report_ops("X25519 shared secret", x25519_op, &x);

  ed25519_bench_t e;
  ld_ed25519_generate(e.pub, e.secret);
  ld_random_bytes(e.msg, sizeof e.msg);
  ld_ed25519_sign(e.secret, e.msg, sizeof e.msg, e.sig);
  report_ops("Ed25519 sign, 56-byte message", ed25519_sign_op, &e);
  report_ops("Ed25519 verify, 56-byte message", ed25519_verify_op, &e);

  secp_bench_t s;
  ld_secp256k1_generate(s.secret);
  if (ld_secp256k1_public(s.secret, s.pub) != 0) {
    abort();
  }
  ld_random_bytes(s.msg, sizeof s.msg);
  secp_sign_op(&s);
  report_ops("secp256k1 ECDSA sign, 56-byte message", secp_sign_op, &s);
  report_ops("secp256k1 ECDSA verify, 56-byte message", secp_verify_op, &s);
  g_sink = x.shared[0] ^ e.sig[0] ^ s.sig[0];
}

int main(void) {
  if (ld_crypto_init() != 0) {
    fprintf(stderr, "crypto initialisation failed\n");
    return 1;
  }
  bench_aead();
  bench_hash();
  bench_public_key();
  return 0;
}
