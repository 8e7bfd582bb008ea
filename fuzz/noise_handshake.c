/* Fuzz target for the Noise engine. Every input is fed three ways, with the fixed keys of the
 * libp2p Noise vector so that the vector's frames (in the corpus) reach the deep states:
 *   1. as bytes from the network to a fresh responder (msg 1, then msg 3 and transport frames);
 *   2. as bytes to an initiator after ld_noise_start (msg 2, then transport frames);
 *   3. as plaintext sent from the responder to the initiator of a completed in-memory
 *      handshake in two pieces, which must come out unchanged, then as transport frames to
 *      that responder.
 * Invariants checked: the engine never consumes more than it was given, never produces more
 * plaintext than it consumed, leaves only an incomplete frame unconsumed, and round-trips data. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/hex.h"
#include "p2p/key.h"
#include "p2p/noise.h"

static const char *const ed_hex = "080112407e0830617c4a7de83925dfb2694556b12936c477a0e1feb2e148ec9d"
                                  "a60fee7d1ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42"
                                  "d474fce27e";
static const char *const secp_hex =
    "0802122053dadf1d5a164d6b4acdb15e24aa4c5b1d3461bdbd42abedb0a4404d56ced8fb";
static const char *const key_hex[4] = {
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", /* initiator static */
    "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20", /* responder static */
    "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f", /* initiator ephemeral */
    "4142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f60", /* responder ephemeral */
};
static const char *const muxers[] = {"/yamux/1.0.0"};

static ld_privkey_t ed, secp;
static uint8_t keys[4][32];

static void unhex_or_abort(const char *hex, uint8_t *out, size_t cap, size_t *len) {
  if (ld_hex_decode(hex, strlen(hex), out, cap, len) != 0)
    abort();
}

static void setup(void) {
  static int done;
  if (done)
    return;
  uint8_t raw[80];
  size_t n;
  unhex_or_abort(ed_hex, raw, sizeof raw, &n);
  if (ld_privkey_decode(&ed, raw, n) != 0)
    abort();
  unhex_or_abort(secp_hex, raw, sizeof raw, &n);
  if (ld_privkey_decode(&secp, raw, n) != 0)
    abort();
  for (int i = 0; i < 4; i++)
    unhex_or_abort(key_hex[i], keys[i], 32, &n);
  done = 1;
}

static ld_noise_t *make(bool initiator) {
  ld_noise_config_t cfg = {.initiator = initiator,
                           .identity = initiator ? &secp : &ed,
                           .static_priv = keys[initiator ? 0 : 1],
                           .ephemeral_priv = keys[initiator ? 2 : 3],
                           .muxers = muxers,
                           .n_muxers = 1};
  ld_noise_t *n = ld_noise_new(&cfg);
  if (n == NULL)
    abort();
  return n;
}

/* True when in[0..len) does not start with a complete frame. */
static bool incomplete(const uint8_t *in, size_t len) {
  return len < 2 || len < 2 + (((size_t)in[0] << 8) | in[1]);
}

/* Feeds `in` and checks the consumption invariants. Returns the engine's result. */
static int feed(ld_noise_t *n, const uint8_t *in, size_t len, ld_buf_t *wire, ld_buf_t *plain) {
  size_t used = 0, before = plain->len;
  int rc = ld_noise_read(n, in, len, &used, wire, plain);
  if (used > len || plain->len - before > used)
    abort();
  if (rc == 0 && !incomplete(in + used, len - used))
    abort();
  return rc;
}

static void as_responder(const uint8_t *data, size_t size, ld_buf_t *wire, ld_buf_t *plain) {
  ld_noise_t *n = make(false);
  ld_noise_start(n, wire);
  feed(n, data, size, wire, plain);
  ld_noise_free(n);
}

static void as_initiator(const uint8_t *data, size_t size, ld_buf_t *wire, ld_buf_t *plain) {
  ld_noise_t *n = make(true);
  if (ld_noise_start(n, wire) != 0)
    abort();
  feed(n, data, size, wire, plain);
  ld_noise_free(n);
}

/* Runs the vector handshake in memory; both engines end established. */
static void establish_pair(ld_noise_t **ini, ld_noise_t **res) {
  ld_buf_t a, b, plain;
  ld_buf_init(&a);
  ld_buf_init(&b);
  ld_buf_init(&plain);
  *ini = make(true);
  *res = make(false);
  size_t used;
  if (ld_noise_start(*ini, &a) != 0 || ld_noise_read(*res, a.data, a.len, &used, &b, &plain) != 0)
    abort();
  ld_buf_reset(&a);
  if (ld_noise_read(*ini, b.data, b.len, &used, &a, &plain) != 0 ||
      ld_noise_read(*res, a.data, a.len, &used, &b, &plain) != 0 ||
      !ld_noise_is_established(*ini) || !ld_noise_is_established(*res))
    abort();
  ld_buf_clear(&a);
  ld_buf_clear(&b);
  ld_buf_clear(&plain);
}

/* Sends `data` from `from` to `to` as plaintext and delivers the frames in two pieces split where
 * data[0] says. */
static void round_trip(ld_noise_t *from, ld_noise_t *to, const uint8_t *data, size_t size) {
  ld_buf_t wire, plain;
  ld_buf_init(&wire);
  ld_buf_init(&plain);
  if (ld_noise_encrypt(from, data, size, &wire) != 0)
    abort();
  size_t cut = size > 0 ? (data[0] * wire.len) / 255 : 0, used = 0;
  if (ld_noise_read(to, wire.data, cut, &used, NULL, &plain) != 0)
    abort();
  size_t rest = wire.len - used; /* an empty message may leave no frame at all (data NULL) */
  if (rest > 0 && ld_noise_read(to, wire.data + used, rest, &used, NULL, &plain) != 0)
    abort();
  if (plain.len != size || (size > 0 && memcmp(plain.data, data, size) != 0))
    abort();
  ld_buf_clear(&wire);
  ld_buf_clear(&plain);
}

static void as_transport(const uint8_t *data, size_t size, ld_buf_t *plain) {
  ld_noise_t *ini, *res;
  establish_pair(&ini, &res);
  round_trip(res, ini, data, size); /* leaves the initiator → responder nonce at 0 */
  feed(res, data, size, NULL, plain);
  ld_noise_free(ini);
  ld_noise_free(res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setup();
  ld_buf_t wire, plain;
  ld_buf_init(&wire);
  ld_buf_init(&plain);
  as_responder(data, size, &wire, &plain);
  ld_buf_reset(&wire);
  ld_buf_reset(&plain);
  as_initiator(data, size, &wire, &plain);
  ld_buf_reset(&plain);
  as_transport(data, size, &plain);
  ld_buf_clear(&wire);
  ld_buf_clear(&plain);
  return 0;
}
