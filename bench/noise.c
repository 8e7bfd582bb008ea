/* Noise engine benchmark: transport throughput (64 KiB writes encrypted by one session and
 * decrypted by its peer, in memory, one core) and complete handshakes per second (both engines
 * of a connection, signatures and verification included), for each identity key type. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "crypto/crypto.h"
#include "p2p/key.h"
#include "p2p/noise.h"

#define WRITE_SIZE (64 * 1024)
#define TRANSFER_SECONDS 2.0
#define HANDSHAKE_SECONDS 1.0

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what) {
  fprintf(stderr, "bench_noise: %s failed\n", what);
  exit(1);
}

static ld_noise_t *make(bool initiator, const ld_privkey_t *id) {
  static const char *const muxers[] = {"/yamux/1.0.0"};
  ld_noise_config_t cfg = {.initiator = initiator, .identity = id, .muxers = muxers, .n_muxers = 1};
  ld_noise_t *n = ld_noise_new(&cfg);
  if (n == NULL)
    die("ld_noise_new");
  return n;
}

/* One full handshake between fresh engines; both are returned established. */
static void handshake(const ld_privkey_t *ka, const ld_privkey_t *kb, ld_noise_t **a,
                      ld_noise_t **b) {
  ld_buf_t wa, wb, plain;
  ld_buf_init(&wa);
  ld_buf_init(&wb);
  ld_buf_init(&plain);
  *a = make(true, ka);
  *b = make(false, kb);
  size_t used;
  if (ld_noise_start(*a, &wa) != 0 || ld_noise_read(*b, wa.data, wa.len, &used, &wb, &plain) != 0)
    die("handshake msg 1");
  ld_buf_reset(&wa);
  if (ld_noise_read(*a, wb.data, wb.len, &used, &wa, &plain) != 0 ||
      ld_noise_read(*b, wa.data, wa.len, &used, &wb, &plain) != 0 || !ld_noise_is_established(*b))
    die("handshake msgs 2 and 3");
  ld_buf_clear(&wa);
  ld_buf_clear(&wb);
  ld_buf_clear(&plain);
}

static void bench_handshakes(ld_key_type_t type, const char *name) {
  ld_privkey_t ka, kb;
  if (ld_privkey_generate(&ka, type) != 0 || ld_privkey_generate(&kb, type) != 0)
    die("key generation");
  size_t count = 0;
  double start = now(), elapsed;
  do {
    ld_noise_t *a, *b;
    handshake(&ka, &kb, &a, &b);
    ld_noise_free(a);
    ld_noise_free(b);
    count++;
    elapsed = now() - start;
  } while (elapsed < HANDSHAKE_SECONDS);
  printf("noise handshake (%s identities, both sides): %.0f handshakes/s (%.1f us each)\n", name,
         (double)count / elapsed, elapsed * 1e6 / (double)count);
}

static void bench_transport(void) {
  ld_privkey_t ka, kb;
  if (ld_privkey_generate(&ka, LD_KEY_ED25519) != 0 ||
      ld_privkey_generate(&kb, LD_KEY_ED25519) != 0)
    die("key generation");
  ld_noise_t *a, *b;
  handshake(&ka, &kb, &a, &b);
  uint8_t *pt = malloc(WRITE_SIZE);
  if (pt == NULL)
    die("malloc");
  ld_random_bytes(pt, WRITE_SIZE);
  ld_buf_t wire, plain;
  ld_buf_init(&wire);
  ld_buf_init(&plain);
  size_t bytes = 0;
  double start = now(), elapsed;
  do {
    for (int i = 0; i < 64; i++) {
      size_t used;
      ld_buf_reset(&wire);
      ld_buf_reset(&plain);
      if (ld_noise_encrypt(a, pt, WRITE_SIZE, &wire) != 0 ||
          ld_noise_read(b, wire.data, wire.len, &used, NULL, &plain) != 0 || used != wire.len ||
          plain.len != WRITE_SIZE)
        die("transport");
      bytes += WRITE_SIZE;
    }
    elapsed = now() - start;
  } while (elapsed < TRANSFER_SECONDS);
  if (memcmp(plain.data, pt, WRITE_SIZE) != 0)
    die("round trip");
  printf("noise transport (64 KiB writes, encrypt + decrypt, one core): %.1f MB/s (%.0f MiB in "
         "%.2f s)\n",
         (double)bytes / elapsed / 1e6, (double)bytes / (1024.0 * 1024.0), elapsed);
  free(pt);
  ld_buf_clear(&wire);
  ld_buf_clear(&plain);
  ld_noise_free(a);
  ld_noise_free(b);
}

int main(void) {
  if (ld_crypto_init() != 0)
    die("ld_crypto_init");
  bench_transport();
  bench_handshakes(LD_KEY_ED25519, "Ed25519");
  bench_handshakes(LD_KEY_SECP256K1, "secp256k1");
  return 0;
}
