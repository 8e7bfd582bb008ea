#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hex.h"
#include "crypto/crypto.h"
#include "noise.pb-c.h"
#include "p2p/key.h"
#include "p2p/noise.h"
#include "p2p/noise_internal.h"
#include "p2p/peerid.h"

/* ---- vectors (libp2p digest §5.7, §3.4) ------------------------------------------------------ */

#define INIT_STATIC "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define RESP_STATIC "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20"
#define INIT_EPHEMERAL "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
#define RESP_EPHEMERAL "4142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f60"

#define CACO_MSG1 "358072d6365880d1aeea329adf9121383851ed21a28e3b75e965d0d2cd166254"
#define CACO_MSG2                                                                                  \
  "64b101b1d0be5a8704bd078f9895001fc03e8e9f9522f188dd128d9846d484663414af878d3e46a2f58911a816d6e8" \
  "346d4ea17a6f2a0bb4ef4ed56c133cff4560a34e36ea82109f26cf2e5a5caf992b608d55c747f615e5a3425a7a19ee" \
  "fb8f"
#define CACO_MSG3                                                                                  \
  "87f864c11ba449f46a0a4f4e2eacbb7b0457784f4fca1937f572c93603e9c4d97e5ea11b16f3968710b23a3be3202d" \
  "c1b5e1ce3c963347491e74f5c0768a9b42"
#define CACO_PT1 "79656c6c6f777375626d6172696e65"
#define CACO_CT1 "a52ef02ba60e12696d1d6b9ef4245c88fca757b6134ad6e76b56e310a6adf6"
#define CACO_PT2 "7375626d6172696e6579656c6c6f77"
#define CACO_CT2 "2445aa438ebd649281c636cc7269ca82f1d9023d72520943aeabf909cdf521"

#define ED25519_PRIV                                                                               \
  "080112407e0830617c4a7de83925dfb2694556b12936c477a0e1feb2e148ec9da60fee7d1ed1e8fae2c4a144b8be8f" \
  "d4b47bf3d3b34b871c3cacf6010f0e42d474fce27e"
#define SECP_PRIV "0802122053DADF1D5A164D6B4ACDB15E24AA4C5B1D3461BDBD42ABEDB0A4404D56CED8FB"
#define ED25519_PEER "0024080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e"
#define SECP_PEER "002508021221037777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca99"

#define INIT_STATIC_PUB "8f40c5adb68f25624ae5b214ea767a6ec94d829d3d7b5e1ad1ba6f3e2138285f"
#define RESP_STATIC_PUB "07a37cbc142093c8b755dc1b10e86cb426374ad16aa853ed0bdfc0b2b86d1c7c"
#define RESP_PAYLOAD                                                                               \
  "0a24080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e1240e50bee9de7af95" \
  "6f6f42ff71195b76f47ea095d2f4c6a57cf588887bed31f78346151ce5458182eb7fae8111ad60cf76d43033911652" \
  "84ff683988e1c7843304220e120c2f79616d75782f312e302e30"
#define INIT_PAYLOAD                                                                               \
  "0a2508021221037777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca9912473045022100a0" \
  "fdecadd695ef4ddd425c0e9f7a55d18d145bf61e88ed920e0a2c99665f17a002204b7c7c57b6b3a640ceaef2e77c66" \
  "b8d468574cd6b611ad396fd0b741f2bb19eb220e120c2f79616d75782f312e302e30"
#define FRAME1 "0020358072d6365880d1aeea329adf9121383851ed21a28e3b75e965d0d2cd166254"
#define FRAME2                                                                                     \
  "00d864b101b1d0be5a8704bd078f9895001fc03e8e9f9522f188dd128d9846d484663414af878d3e46a2f58911a816" \
  "d6e8346d4ea17a6f2a0bb4ef4ed56c133cff4560a34e36ea82109f26cf2e5a5caf992b8b4dc7d75b055773dc07caf8" \
  "d46bebe3276950e5fecceca62e33db713adc27973f86e02ea66d87e8b218daecaa065cae0041147cebad3bafbfec9b" \
  "8e87d59110c31be52a5f1d2924076f33ca4663c1cc571724bf427386002651431bd9143e98df7ed476a84838559421" \
  "6610cafd32b1ac73bf9b837316a61d26ab459f528f42256187a7e4cdb293"
#define FRAME3                                                                                     \
  "00c087f864c11ba449f46a0a4f4e2eacbb7b0457784f4fca1937f572c93603e9c4d9d7afed975e6d6bdf18e9519394" \
  "96974902330cd4b9b5645b07d7f6da0e50b1e4e54cdbbe534a5afc2fcb89f7ae812d438ee31f7d01d1d7b33967e018" \
  "2200d037d29c67512dd05148e2842f0bb99cba10c77eabe089f876cf824f8d2c9b4d4e9deba8f13965053dffe64511" \
  "f701a151f12a10d7a27eb1c9b4c16238a632ada39a067bc1ab1a4fb7faf04ffe46eabe05a493dbe911b1e7858fa9b9" \
  "2aea32a6d447"
#define HANDSHAKE_HASH "d7512615c35d10475e57cfb8fe4c3aad4c7256bb8cc4193c2cfc9cc99af7d8b6"
#define MSS_LINE "132f6d756c746973747265616d2f312e302e300a"
#define TRANSPORT_I2R "0024cf64f132a50d086f7b026f8df065084c87a8a25d8a9eb4e94b8be0063936e0a8f326b7a9"
#define TRANSPORT_R2I "0024441fa55b83bb648f90cd36c173298cfe006c00db96a184f87c747a75c2290942f7d8baa5"

#define YAMUX "/yamux/1.0.0"
#define MPLEX "/mplex/6.7.0"

/* ---- helpers --------------------------------------------------------------------------------- */

static size_t unhex(const char *hex, uint8_t *out, size_t cap) {
  size_t n = 0;
  assert_int_equal(ld_hex_decode(hex, strlen(hex), out, cap, &n), 0);
  return n;
}

static void assert_bytes_hex(const uint8_t *p, size_t len, const char *hex) {
  uint8_t want[1024];
  size_t n = unhex(hex, want, sizeof want);
  assert_int_equal(len, n);
  assert_memory_equal(p, want, n);
}

static void assert_buf_hex(const ld_buf_t *b, const char *hex) {
  assert_bytes_hex(b->data, b->len, hex);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void load_key(ld_privkey_t *key, const char *hex) {
  uint8_t raw[128];
  size_t n = unhex(hex, raw, sizeof raw);
  assert_int_equal(ld_privkey_decode(key, raw, n), 0);
}

static void peer_of(const ld_privkey_t *key, ld_peerid_t *id) {
  ld_pubkey_t pub;
  ld_privkey_public(key, &pub);
  assert_int_equal(ld_peerid_from_pubkey(id, &pub), 0);
}

static const char *const yamux_only[] = {YAMUX};

/* One side of an in-memory connection: bytes travel through `pipe` (written by the other side,
 * read from `off`), wait in `pending` until a whole frame arrived, and come out in `plain`. */
typedef struct side {
  ld_noise_t *n;
  ld_buf_t wire; /* what this side sent; the other side reads it from `off` */
  size_t off;
  ld_buf_t pending;
  ld_buf_t plain;
} side_t;

static void side_init(side_t *s, ld_noise_t *n) {
  assert_non_null(n);
  s->n = n;
  s->off = 0;
  ld_buf_init(&s->wire);
  ld_buf_init(&s->pending);
  ld_buf_init(&s->plain);
}

static void side_clear(side_t *s) {
  ld_noise_free(s->n);
  ld_buf_clear(&s->wire);
  ld_buf_clear(&s->pending);
  ld_buf_clear(&s->plain);
}

/* Moves up to `k` bytes sent by `from` to `to` and lets `to` read them. */
static int deliver(side_t *from, side_t *to, size_t k) {
  size_t avail = from->wire.len - from->off;
  if (k > avail)
    k = avail;
  assert_int_equal(ld_buf_append(&to->pending, from->wire.data + from->off, k), 0);
  from->off += k;
  if (from->off == from->wire.len) {
    ld_buf_reset(&from->wire);
    from->off = 0;
  }
  size_t used = 0;
  int rc = ld_noise_read(to->n, to->pending.data, to->pending.len, &used, &to->wire, &to->plain);
  assert_true(used <= to->pending.len);
  ld_buf_consume(&to->pending, used);
  return rc;
}

static size_t unread(const side_t *s) {
  return s->wire.len - s->off;
}

/* Runs the handshake delivering at most `chunk` bytes per read. */
static void handshake(side_t *a, side_t *b, size_t chunk) {
  assert_int_equal(ld_noise_start(a->n, &a->wire), 0);
  assert_int_equal(ld_noise_start(b->n, &b->wire), 0);
  for (int guard = 0; guard < 100000; guard++) {
    if (ld_noise_is_established(a->n) && ld_noise_is_established(b->n) && unread(a) == 0 &&
        unread(b) == 0)
      return;
    if (unread(a) > 0)
      assert_int_equal(deliver(a, b, chunk), 0);
    if (unread(b) > 0)
      assert_int_equal(deliver(b, a, chunk), 0);
  }
  fail_msg("handshake did not complete");
}

static ld_noise_t *make(bool initiator, const ld_privkey_t *id, const ld_peerid_t *expected,
                        const char *const *muxers, size_t n_muxers) {
  ld_noise_config_t cfg = {.initiator = initiator,
                           .identity = id,
                           .expected_peer = expected,
                           .muxers = muxers,
                           .n_muxers = n_muxers};
  return ld_noise_new(&cfg);
}

static void make_pair(side_t *a, side_t *b, const ld_privkey_t *ida, const ld_privkey_t *idb) {
  ld_peerid_t expect;
  peer_of(idb, &expect);
  side_init(a, make(true, ida, &expect, yamux_only, 1));
  side_init(b, make(false, idb, NULL, yamux_only, 1));
}

static void gen_key(ld_privkey_t *k, ld_key_type_t type) {
  assert_int_equal(ld_privkey_generate(k, type), 0);
}

/* ---- the pure Noise layer -------------------------------------------------------------------- */

static void cacophony_vector(void **state) {
  (void)state;
  uint8_t is[32], rs[32], ie[32], re[32], buf[64];
  unhex(INIT_STATIC, is, 32);
  unhex(RESP_STATIC, rs, 32);
  unhex(INIT_EPHEMERAL, ie, 32);
  unhex(RESP_EPHEMERAL, re, 32);
  ld_noise_hs_t ini, res;
  ld_noise_hs_init(&ini, true, NULL, 0, is, ie);
  ld_noise_hs_init(&res, false, NULL, 0, rs, re);
  ld_buf_t msg, payload;
  ld_buf_init(&msg);
  ld_buf_init(&payload);

  assert_int_equal(ld_noise_hs_write_msg1(&ini, NULL, 0, &msg), 0);
  assert_buf_hex(&msg, CACO_MSG1);
  assert_int_equal(ld_noise_hs_read_msg1(&res, msg.data, msg.len, &payload), 0);
  assert_int_equal(payload.len, 0);

  ld_buf_reset(&msg);
  assert_int_equal(ld_noise_hs_write_msg2(&res, NULL, 0, &msg), 0);
  assert_buf_hex(&msg, CACO_MSG2);
  assert_int_equal(ld_noise_hs_read_msg2(&ini, msg.data, msg.len, &payload), 0);
  assert_int_equal(payload.len, 0);
  assert_memory_equal(ini.rs, res.s_pub, 32);

  ld_buf_reset(&msg);
  assert_int_equal(ld_noise_hs_write_msg3(&ini, NULL, 0, &msg), 0);
  assert_buf_hex(&msg, CACO_MSG3);
  assert_int_equal(ld_noise_hs_read_msg3(&res, msg.data, msg.len, &payload), 0);
  assert_int_equal(payload.len, 0);
  assert_memory_equal(res.rs, ini.s_pub, 32);
  assert_memory_equal(ini.sym.h, res.sym.h, 32);

  ld_noise_cipher_t i_send, i_recv, r_send, r_recv;
  ld_noise_hs_split(&ini, &i_send, &i_recv);
  ld_noise_hs_split(&res, &r_send, &r_recv);
  uint8_t pt[32], out[32];
  size_t n = unhex(CACO_PT1, pt, sizeof pt);
  assert_int_equal(ld_noise_cipher_encrypt(&i_send, NULL, 0, pt, n, buf), 0);
  assert_bytes_hex(buf, n + 16, CACO_CT1);
  assert_int_equal(ld_noise_cipher_decrypt(&r_recv, NULL, 0, buf, n + 16, out), 0);
  assert_memory_equal(out, pt, n);
  n = unhex(CACO_PT2, pt, sizeof pt);
  assert_int_equal(ld_noise_cipher_encrypt(&r_send, NULL, 0, pt, n, buf), 0);
  assert_bytes_hex(buf, n + 16, CACO_CT2);
  assert_int_equal(ld_noise_cipher_decrypt(&i_recv, NULL, 0, buf, n + 16, out), 0);
  assert_memory_equal(out, pt, n);
  assert_true(i_send.n == 1 && r_recv.n == 1 && r_send.n == 1 && i_recv.n == 1);
  ld_buf_clear(&msg);
  ld_buf_clear(&payload);
}

/* msg 1 may carry a plaintext payload: it must be hashed on both sides and handed up. */
static void msg1_payload_is_mixed(void **state) {
  (void)state;
  ld_noise_hs_t ini, res;
  ld_noise_hs_init(&ini, true, NULL, 0, NULL, NULL);
  ld_noise_hs_init(&res, false, NULL, 0, NULL, NULL);
  ld_buf_t msg, payload;
  ld_buf_init(&msg);
  ld_buf_init(&payload);
  assert_int_equal(ld_noise_hs_write_msg1(&ini, (const uint8_t *)"early", 5, &msg), 0);
  assert_int_equal(msg.len, ld_noise_msg1_len(5));
  assert_int_equal(ld_noise_hs_read_msg1(&res, msg.data, msg.len, &payload), 0);
  assert_int_equal(payload.len, 5);
  assert_memory_equal(payload.data, "early", 5);
  assert_memory_equal(ini.sym.h, res.sym.h, 32);
  ld_buf_reset(&msg);
  assert_int_equal(ld_noise_hs_write_msg2(&res, (const uint8_t *)"r", 1, &msg), 0);
  assert_int_equal(msg.len, ld_noise_msg2_len(1));
  msg.data[msg.len - 1] ^= 1;
  ld_buf_reset(&payload);
  assert_int_equal(ld_noise_hs_read_msg2(&ini, msg.data, msg.len, &payload), LD_ERR_DECRYPT);
  ld_buf_clear(&msg);
  ld_buf_clear(&payload);
}

/* ---- the libp2p vector ----------------------------------------------------------------------- */

static void libp2p_vector(void **state) {
  (void)state;
  ld_privkey_t ed, secp;
  load_key(&ed, ED25519_PRIV);
  load_key(&secp, SECP_PRIV);
  ld_peerid_t ed_id, secp_id;
  peer_of(&ed, &ed_id);
  peer_of(&secp, &secp_id);
  assert_bytes_hex(ed_id.bytes, ed_id.len, ED25519_PEER);
  assert_bytes_hex(secp_id.bytes, secp_id.len, SECP_PEER);
  uint8_t is[32], rs[32], ie[32], re[32];
  unhex(INIT_STATIC, is, 32);
  unhex(RESP_STATIC, rs, 32);
  unhex(INIT_EPHEMERAL, ie, 32);
  unhex(RESP_EPHEMERAL, re, 32);
  ld_noise_config_t icfg = {.initiator = true,
                            .identity = &secp,
                            .expected_peer = &ed_id,
                            .static_priv = is,
                            .ephemeral_priv = ie,
                            .muxers = yamux_only,
                            .n_muxers = 1};
  ld_noise_config_t rcfg = {.initiator = false,
                            .identity = &ed,
                            .static_priv = rs,
                            .ephemeral_priv = re,
                            .muxers = yamux_only,
                            .n_muxers = 1};
  ld_noise_t *ini = ld_noise_new(&icfg), *res = ld_noise_new(&rcfg);
  assert_non_null(ini);
  assert_non_null(res);
  ld_buf_t wire, plain;
  ld_buf_init(&wire);
  ld_buf_init(&plain);
  uint8_t frame[256];
  size_t used = 0;

  assert_int_equal(ld_noise_start(ini, &wire), 0);
  assert_buf_hex(&wire, FRAME1);
  ld_buf_reset(&wire);

  size_t n = unhex(FRAME1, frame, sizeof frame);
  assert_int_equal(ld_noise_read(res, frame, n, &used, &wire, &plain), 0);
  assert_int_equal(used, n);
  assert_buf_hex(&wire, FRAME2);
  assert_false(ld_noise_is_established(res));
  ld_buf_reset(&wire);

  n = unhex(FRAME2, frame, sizeof frame);
  assert_int_equal(ld_noise_read(ini, frame, n, &used, &wire, &plain), 0);
  assert_int_equal(used, n);
  assert_buf_hex(&wire, FRAME3);
  assert_true(ld_noise_is_established(ini));
  assert_bytes_hex(ld_noise_handshake_hash(ini), 32, HANDSHAKE_HASH);
  ld_buf_reset(&wire);

  n = unhex(FRAME3, frame, sizeof frame);
  assert_int_equal(ld_noise_read(res, frame, n, &used, &wire, &plain), 0);
  assert_int_equal(used, n);
  assert_int_equal(wire.len, 0);
  assert_int_equal(plain.len, 0);
  assert_true(ld_noise_is_established(res));
  assert_bytes_hex(ld_noise_handshake_hash(res), 32, HANDSHAKE_HASH);

  assert_true(ld_peerid_equal(ld_noise_remote_peer(ini), &ed_id));
  assert_true(ld_peerid_equal(ld_noise_remote_peer(res), &secp_id));
  ld_pubkey_t ed_pub;
  ld_privkey_public(&ed, &ed_pub);
  assert_true(ld_pubkey_equal(ld_noise_remote_key(ini), &ed_pub));
  assert_string_equal(ld_noise_early_muxer(ini), YAMUX);
  assert_string_equal(ld_noise_early_muxer(res), YAMUX);

  uint8_t line[32];
  size_t line_len = unhex(MSS_LINE, line, sizeof line);
  assert_int_equal(ld_noise_encrypt(ini, line, line_len, &wire), 0);
  assert_buf_hex(&wire, TRANSPORT_I2R);
  assert_int_equal(ld_noise_read(res, wire.data, wire.len, &used, NULL, &plain), 0);
  assert_int_equal(used, wire.len);
  assert_bytes_hex(plain.data, plain.len, MSS_LINE);
  ld_buf_reset(&wire);
  ld_buf_reset(&plain);
  assert_int_equal(ld_noise_encrypt(res, line, line_len, &wire), 0);
  assert_buf_hex(&wire, TRANSPORT_R2I);
  assert_int_equal(ld_noise_read(ini, wire.data, wire.len, &used, NULL, &plain), 0);
  assert_bytes_hex(plain.data, plain.len, MSS_LINE);

  ld_buf_clear(&wire);
  ld_buf_clear(&plain);
  ld_noise_free(ini);
  ld_noise_free(res);
}

/* The vector's payloads through the pure layer give the same frames: the payload encoding and
 * the handshake are checked independently. */
static void libp2p_vector_payloads(void **state) {
  (void)state;
  uint8_t is[32], rs[32], ie[32], re[32], rp[200], ip[200];
  unhex(INIT_STATIC, is, 32);
  unhex(RESP_STATIC, rs, 32);
  unhex(INIT_EPHEMERAL, ie, 32);
  unhex(RESP_EPHEMERAL, re, 32);
  size_t rp_len = unhex(RESP_PAYLOAD, rp, sizeof rp), ip_len = unhex(INIT_PAYLOAD, ip, sizeof ip);
  assert_int_equal(rp_len, 120);
  assert_int_equal(ip_len, 128);
  ld_noise_hs_t ini, res;
  ld_noise_hs_init(&ini, true, NULL, 0, is, ie);
  ld_noise_hs_init(&res, false, NULL, 0, rs, re);
  assert_bytes_hex(ini.s_pub, 32, INIT_STATIC_PUB);
  assert_bytes_hex(res.s_pub, 32, RESP_STATIC_PUB);
  ld_buf_t msg, payload;
  ld_buf_init(&msg);
  ld_buf_init(&payload);
  assert_int_equal(ld_noise_hs_write_msg1(&ini, NULL, 0, &msg), 0);
  assert_int_equal(ld_noise_hs_read_msg1(&res, msg.data, msg.len, &payload), 0);
  ld_buf_reset(&msg);
  assert_int_equal(ld_noise_hs_write_msg2(&res, rp, rp_len, &msg), 0);
  assert_bytes_hex(msg.data, msg.len, &FRAME2[4]);
  assert_int_equal(ld_noise_hs_read_msg2(&ini, msg.data, msg.len, &payload), 0);
  assert_bytes_hex(payload.data, payload.len, RESP_PAYLOAD);
  ld_buf_reset(&msg);
  ld_buf_reset(&payload);
  assert_int_equal(ld_noise_hs_write_msg3(&ini, ip, ip_len, &msg), 0);
  assert_bytes_hex(msg.data, msg.len, &FRAME3[4]);
  assert_int_equal(ld_noise_hs_read_msg3(&res, msg.data, msg.len, &payload), 0);
  assert_bytes_hex(payload.data, payload.len, INIT_PAYLOAD);
  assert_bytes_hex(res.sym.h, 32, HANDSHAKE_HASH);
  ld_buf_clear(&msg);
  ld_buf_clear(&payload);
}

/* ---- in-memory sessions ---------------------------------------------------------------------- */

static void fill_random(ld_buf_t *b, size_t len) {
  ld_buf_reset(b);
  assert_int_equal(ld_buf_reserve(b, len), 0);
  for (size_t i = 0; i < len; i++)
    b->data[i] = (uint8_t)(rng() >> 24);
  b->len = len;
}

/* Sends `len` random bytes each way, written in random sizes up to `max_write` and delivered in
 * random pieces up to `max_read`, interleaving the two directions. */
static void transfer(side_t *a, side_t *b, size_t len, size_t max_write, size_t max_read) {
  ld_buf_t da, db;
  ld_buf_init(&da);
  ld_buf_init(&db);
  fill_random(&da, len);
  fill_random(&db, len);
  size_t wa = 0, wb = 0;
  ld_buf_reset(&a->plain);
  ld_buf_reset(&b->plain);
  while (a->plain.len < len || b->plain.len < len) {
    size_t k = 1 + rng() % max_write;
    if (wa < len) {
      k = k > len - wa ? len - wa : k;
      assert_int_equal(ld_noise_encrypt(a->n, da.data + wa, k, &a->wire), 0);
      wa += k;
    }
    k = 1 + rng() % max_write;
    if (wb < len) {
      k = k > len - wb ? len - wb : k;
      assert_int_equal(ld_noise_encrypt(b->n, db.data + wb, k, &b->wire), 0);
      wb += k;
    }
    while (unread(a) > 0 || unread(b) > 0) {
      if (unread(a) > 0)
        assert_int_equal(deliver(a, b, 1 + rng() % max_read), 0);
      if (unread(b) > 0)
        assert_int_equal(deliver(b, a, 1 + rng() % max_read), 0);
    }
  }
  assert_int_equal(b->plain.len, len);
  assert_int_equal(a->plain.len, len);
  assert_memory_equal(b->plain.data, da.data, len);
  assert_memory_equal(a->plain.data, db.data, len);
  assert_int_equal(a->pending.len, 0);
  assert_int_equal(b->pending.len, 0);
  ld_buf_clear(&da);
  ld_buf_clear(&db);
}

static void session_between(ld_key_type_t ta, ld_key_type_t tb) {
  ld_privkey_t ka, kb;
  gen_key(&ka, ta);
  gen_key(&kb, tb);
  side_t a, b;
  make_pair(&a, &b, &ka, &kb);
  handshake(&a, &b, 1 + rng() % 300);
  assert_memory_equal(ld_noise_handshake_hash(a.n), ld_noise_handshake_hash(b.n), 32);
  ld_peerid_t ida, idb;
  peer_of(&ka, &ida);
  peer_of(&kb, &idb);
  assert_true(ld_peerid_equal(ld_noise_remote_peer(a.n), &idb));
  assert_true(ld_peerid_equal(ld_noise_remote_peer(b.n), &ida));
  assert_int_equal(ld_noise_remote_key(a.n)->type, tb);
  assert_int_equal(ld_noise_remote_key(b.n)->type, ta);
  transfer(&a, &b, 3u << 20, 200000, 100000); /* multi-frame writes, partial frames */
  transfer(&a, &b, 1u << 20, 4096, 3000);     /* small writes, reads across frame borders */
  side_clear(&a);
  side_clear(&b);
}

static void sessions_all_key_types(void **state) {
  (void)state;
  session_between(LD_KEY_ED25519, LD_KEY_SECP256K1);
  session_between(LD_KEY_SECP256K1, LD_KEY_ED25519);
  session_between(LD_KEY_ED25519, LD_KEY_ED25519);
  session_between(LD_KEY_SECP256K1, LD_KEY_SECP256K1);
}

static void byte_at_a_time(void **state) {
  (void)state;
  ld_privkey_t ka, kb;
  gen_key(&ka, LD_KEY_SECP256K1);
  gen_key(&kb, LD_KEY_ED25519);
  side_t a, b;
  make_pair(&a, &b, &ka, &kb);
  handshake(&a, &b, 1);
  transfer(&a, &b, 300000, 70000, 1);
  side_clear(&a);
  side_clear(&b);
}

/* Bytes after the last handshake frame in the same input are transport frames. */
static void transport_follows_handshake_in_one_read(void **state) {
  (void)state;
  ld_privkey_t ka, kb;
  gen_key(&ka, LD_KEY_ED25519);
  gen_key(&kb, LD_KEY_ED25519);
  side_t a, b;
  make_pair(&a, &b, &ka, &kb);
  assert_int_equal(ld_noise_start(a.n, &a.wire), 0);
  assert_int_equal(deliver(&a, &b, SIZE_MAX), 0);
  assert_int_equal(deliver(&b, &a, SIZE_MAX), 0);
  assert_true(ld_noise_is_established(a.n));
  assert_int_equal(ld_noise_encrypt(a.n, (const uint8_t *)"hello", 5, &a.wire), 0);
  assert_int_equal(ld_noise_encrypt(a.n, (const uint8_t *)" world", 6, &a.wire), 0);
  /* Everything but the last byte: frame 3 and the first transport frame are consumed. */
  assert_int_equal(deliver(&a, &b, a.wire.len - 1), 0);
  assert_true(ld_noise_is_established(b.n));
  assert_int_equal(b.plain.len, 5);
  assert_int_equal(b.pending.len, 6 + LD_NOISE_FRAME_OVERHEAD - 1);
  assert_int_equal(deliver(&a, &b, 1), 0);
  assert_int_equal(b.plain.len, 11);
  assert_memory_equal(b.plain.data, "hello world", 11);
  side_clear(&a);
  side_clear(&b);
}

static void encrypt_splits_frames(void **state) {
  (void)state;
  ld_privkey_t ka, kb;
  gen_key(&ka, LD_KEY_ED25519);
  gen_key(&kb, LD_KEY_SECP256K1);
  side_t a, b;
  make_pair(&a, &b, &ka, &kb);
  handshake(&a, &b, SIZE_MAX);
  ld_buf_t pt;
  ld_buf_init(&pt);
  size_t len = 2 * LD_NOISE_MAX_PLAINTEXT + 1;
  fill_random(&pt, len);
  assert_int_equal(ld_noise_encrypt(a.n, pt.data, 0, &a.wire), 0);
  assert_int_equal(a.wire.len, 0);
  assert_int_equal(ld_noise_encrypt(a.n, pt.data, len, &a.wire), 0);
  assert_int_equal(a.wire.len, len + 3 * LD_NOISE_FRAME_OVERHEAD);
  const uint8_t *w = a.wire.data;
  assert_int_equal((w[0] << 8) | w[1], 65535);
  assert_int_equal((w[65537] << 8) | w[65538], 65535);
  assert_int_equal((w[2 * 65537] << 8) | w[2 * 65537 + 1], 17);
  assert_int_equal(deliver(&a, &b, SIZE_MAX), 0);
  assert_int_equal(b.plain.len, len);
  assert_memory_equal(b.plain.data, pt.data, len);
  ld_buf_clear(&pt);
  side_clear(&a);
  side_clear(&b);
}

/* ---- failures -------------------------------------------------------------------------------- */

static void pack_payload(ld_buf_t *out, const ld_privkey_t *key_shown, const ld_privkey_t *signer,
                         const uint8_t static_pub[32], bool with_key, bool with_sig) {
  uint8_t msg[56], sig[LD_SIG_MAX];
  size_t siglen = 0;
  memcpy(msg, "noise-libp2p-static-key:", 24);
  memcpy(msg + 24, static_pub, 32);
  assert_int_equal(ld_privkey_sign(signer, msg, sizeof msg, sig, &siglen), 0);
  ld_pubkey_t pub;
  ld_privkey_public(key_shown, &pub);
  NoiseHandshakePayload p = NOISE_HANDSHAKE_PAYLOAD__INIT;
  p.has_identity_key = with_key;
  p.identity_key.data = pub.proto;
  p.identity_key.len = pub.proto_len;
  p.has_identity_sig = with_sig;
  p.identity_sig.data = sig;
  p.identity_sig.len = siglen;
  ld_buf_reset(out);
  assert_int_equal(ld_buf_reserve(out, noise_handshake_payload__get_packed_size(&p)), 0);
  out->len = noise_handshake_payload__pack(&p, out->data);
}

typedef enum forgery {
  FORGE_OTHER_STATIC, /* signs a static key that is not the one used */
  FORGE_OTHER_SIGNER, /* shows one identity, signs with another */
  FORGE_FLIPPED_SIG,  /* a valid signature with one bit flipped */
  FORGE_NO_SIG,
  FORGE_NO_KEY,
  FORGE_GARBAGE_KEY,
  FORGE_NOT_PROTOBUF,
  FORGE_NONE, /* a genuine payload, re-encoded by the test */
} forgery_t;

/* Replaces the payload `n` will send; `static_pub` is n's real Noise static key. */
static void forge(ld_noise_t *n, forgery_t how, const ld_privkey_t *key,
                  const uint8_t static_pub[32]) {
  ld_buf_t p;
  ld_buf_init(&p);
  uint8_t other_static[32];
  ld_random_bytes(other_static, sizeof other_static);
  ld_privkey_t other;
  gen_key(&other, LD_KEY_SECP256K1);
  switch (how) {
  case FORGE_OTHER_STATIC:
    pack_payload(&p, key, key, other_static, true, true);
    break;
  case FORGE_OTHER_SIGNER:
    pack_payload(&p, key, &other, static_pub, true, true);
    break;
  case FORGE_FLIPPED_SIG:
    pack_payload(&p, key, key, static_pub, true, true);
    p.data[p.len - 5] ^= 0x01; /* inside the signature, the last field */
    break;
  case FORGE_NO_SIG:
    pack_payload(&p, key, key, static_pub, true, false);
    break;
  case FORGE_NO_KEY:
    pack_payload(&p, key, key, static_pub, false, true);
    break;
  case FORGE_GARBAGE_KEY:
    assert_int_equal(ld_buf_append(&p, "\x0a\x03xyz\x12\x01s", 8), 0);
    break;
  case FORGE_NOT_PROTOBUF:
    assert_int_equal(ld_buf_append(&p, "\xff\xff\xff", 3), 0);
    break;
  case FORGE_NONE:
    pack_payload(&p, key, key, static_pub, true, true);
    break;
  }
  assert_int_equal(ld_noise_set_local_payload(n, p.data, p.len), 0);
  ld_buf_clear(&p);
}

static ld_noise_t *make_with_static(bool initiator, const ld_privkey_t *id, const uint8_t s[32],
                                    const ld_peerid_t *expected) {
  ld_noise_config_t cfg = {
      .initiator = initiator, .identity = id, .static_priv = s, .expected_peer = expected};
  return ld_noise_new(&cfg);
}

/* The initiator receives a forged msg 2 (forger = responder), or the responder a forged msg 3. */
static void expect_forgery_error(forgery_t how, bool forger_is_responder, int want) {
  ld_privkey_t ki, kr;
  gen_key(&ki, LD_KEY_SECP256K1);
  gen_key(&kr, LD_KEY_ED25519);
  uint8_t s[32], s_pub[32];
  ld_random_bytes(s, sizeof s);
  ld_x25519_public(s_pub, s);
  side_t a, b;
  side_init(&a, make_with_static(true, &ki, forger_is_responder ? NULL : s, NULL));
  side_init(&b, make_with_static(false, &kr, forger_is_responder ? s : NULL, NULL));
  ld_noise_t *forger = forger_is_responder ? b.n : a.n;
  const ld_privkey_t *forger_key = forger_is_responder ? &kr : &ki;
  forge(forger, how, forger_key, s_pub);
  assert_int_equal(ld_noise_start(a.n, &a.wire), 0);
  assert_int_equal(deliver(&a, &b, SIZE_MAX), 0);
  int rc = deliver(&b, &a, SIZE_MAX);
  if (forger_is_responder) {
    assert_int_equal(rc, want);
    assert_false(ld_noise_is_established(a.n));
    assert_null(ld_noise_remote_peer(a.n));
    assert_int_equal(a.wire.len, 0); /* no msg 3 went out */
    /* The failure is sticky. */
    size_t used = 1;
    assert_int_equal(ld_noise_read(a.n, NULL, 0, &used, &a.wire, &a.plain), want);
    assert_int_equal(used, 0);
    assert_int_equal(ld_noise_encrypt(a.n, (const uint8_t *)"x", 1, &a.wire), LD_ERR_STATE);
  } else {
    assert_int_equal(rc, 0);
    assert_int_equal(deliver(&a, &b, SIZE_MAX), want);
    assert_false(ld_noise_is_established(b.n));
    assert_null(ld_noise_remote_key(b.n));
  }
  side_clear(&a);
  side_clear(&b);
}

static void forged_payloads(void **state) {
  (void)state;
  for (int who = 0; who < 2; who++) {
    bool responder = who == 0;
    expect_forgery_error(FORGE_OTHER_STATIC, responder, LD_ERR_BAD_SIGNATURE);
    expect_forgery_error(FORGE_OTHER_SIGNER, responder, LD_ERR_BAD_SIGNATURE);
    expect_forgery_error(FORGE_FLIPPED_SIG, responder, LD_ERR_BAD_SIGNATURE);
    expect_forgery_error(FORGE_NO_SIG, responder, LD_ERR_HANDSHAKE);
    expect_forgery_error(FORGE_NO_KEY, responder, LD_ERR_HANDSHAKE);
    expect_forgery_error(FORGE_GARBAGE_KEY, responder, LD_ERR_BAD_KEY);
    expect_forgery_error(FORGE_NOT_PROTOBUF, responder, LD_ERR_HANDSHAKE);
  }
}

/* The same payload under a genuine static key is accepted: the forgeries above fail for the
 * reason named, not because payload replacement breaks the handshake. */
static void replaced_but_genuine_payload_works(void **state) {
  (void)state;
  ld_privkey_t ki, kr;
  gen_key(&ki, LD_KEY_SECP256K1);
  gen_key(&kr, LD_KEY_ED25519);
  uint8_t s[32], s_pub[32];
  ld_random_bytes(s, sizeof s);
  ld_x25519_public(s_pub, s);
  side_t a, b;
  side_init(&a, make_with_static(true, &ki, NULL, NULL));
  side_init(&b, make_with_static(false, &kr, s, NULL));
  forge(b.n, FORGE_NONE, &kr, s_pub);
  handshake(&a, &b, SIZE_MAX);
  assert_true(ld_noise_is_established(a.n));
  assert_int_equal(ld_noise_set_local_payload(a.n, s, 1), LD_ERR_STATE);
  side_clear(&a);
  side_clear(&b);
}

static void expected_peer_mismatch(void **state) {
  (void)state;
  ld_privkey_t ki, kr, other;
  gen_key(&ki, LD_KEY_SECP256K1);
  gen_key(&kr, LD_KEY_ED25519);
  gen_key(&other, LD_KEY_ED25519);
  ld_peerid_t wrong;
  peer_of(&other, &wrong);
  side_t a, b;
  side_init(&a, make(true, &ki, &wrong, NULL, 0));
  side_init(&b, make(false, &kr, NULL, NULL, 0));
  assert_int_equal(ld_noise_start(a.n, &a.wire), 0);
  assert_int_equal(deliver(&a, &b, SIZE_MAX), 0);
  assert_int_equal(deliver(&b, &a, SIZE_MAX), LD_ERR_PEER_ID_MISMATCH);
  assert_false(ld_noise_is_established(a.n));
  assert_int_equal(a.wire.len, 0);
  side_clear(&a);
  side_clear(&b);
}

static void tampered_transport_frame(void **state) {
  (void)state;
  ld_privkey_t ka, kb;
  gen_key(&ka, LD_KEY_ED25519);
  gen_key(&kb, LD_KEY_SECP256K1);
  for (int where = 0; where < 3; where++) {
    side_t a, b;
    make_pair(&a, &b, &ka, &kb);
    handshake(&a, &b, SIZE_MAX);
    assert_int_equal(ld_noise_encrypt(a.n, (const uint8_t *)"first", 5, &a.wire), 0);
    assert_int_equal(ld_noise_encrypt(a.n, (const uint8_t *)"second", 6, &a.wire), 0);
    size_t second = 5 + LD_NOISE_FRAME_OVERHEAD;
    if (where == 0)
      a.wire.data[second + 2] ^= 0x80; /* first ciphertext byte */
    else if (where == 1)
      a.wire.data[a.wire.len - 1] ^= 0x80; /* last tag byte */
    else
      a.wire.data[second + 1] -= 1; /* a shorter, still complete frame */
    assert_int_equal(deliver(&a, &b, SIZE_MAX), LD_ERR_DECRYPT);
    assert_int_equal(b.plain.len, 5); /* the intact first frame was delivered */
    assert_memory_equal(b.plain.data, "first", 5);
    assert_int_equal(b.pending.len, 6 + LD_NOISE_FRAME_OVERHEAD); /* not consumed */
    assert_int_equal(ld_noise_encrypt(b.n, (const uint8_t *)"x", 1, &b.wire), LD_ERR_STATE);
    side_clear(&a);
    side_clear(&b);
  }
}

static void short_transport_frame(void **state) {
  (void)state;
  ld_privkey_t ka, kb;
  gen_key(&ka, LD_KEY_ED25519);
  gen_key(&kb, LD_KEY_ED25519);
  for (size_t len = 0; len < 16; len += 5) {
    side_t a, b;
    make_pair(&a, &b, &ka, &kb);
    handshake(&a, &b, SIZE_MAX);
    uint8_t frame[2 + 16] = {0, (uint8_t)len};
    size_t used = 99;
    assert_int_equal(ld_noise_read(b.n, frame, 2 + len, &used, NULL, &b.plain), LD_ERR_DECRYPT);
    assert_int_equal(used, 0);
    side_clear(&a);
    side_clear(&b);
  }
}

/* Feeds one raw frame body to `n` and returns the result. */
static int feed_body(ld_noise_t *n, const uint8_t *body, size_t len, ld_buf_t *wire) {
  ld_buf_t in, plain;
  ld_buf_init(&in);
  ld_buf_init(&plain);
  assert_int_equal(ld_buf_be16(&in, (uint16_t)len), 0);
  assert_int_equal(ld_buf_append(&in, body, len), 0);
  size_t used = 0;
  int rc = ld_noise_read(n, in.data, in.len, &used, wire, &plain);
  assert_int_equal(plain.len, 0);
  assert_int_equal(used, rc == 0 ? in.len : 0);
  ld_buf_clear(&in);
  ld_buf_clear(&plain);
  return rc;
}

static void malformed_handshake_messages(void **state) {
  (void)state;
  ld_privkey_t k;
  gen_key(&k, LD_KEY_ED25519);
  uint8_t body[200];
  ld_random_bytes(body, sizeof body);
  ld_buf_t wire;
  ld_buf_init(&wire);
  struct {
    bool initiator;
    size_t len;
    int want;
  } cases[] = {
      {false, 0, LD_ERR_HANDSHAKE},
      {false, 31, LD_ERR_HANDSHAKE},
      {true, 0, LD_ERR_HANDSHAKE},
      {true, LD_NOISE_MSG2_MIN - 1, LD_ERR_HANDSHAKE},
      {true, LD_NOISE_MSG2_MIN, LD_ERR_DECRYPT},
      {true, 200, LD_ERR_DECRYPT},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ld_noise_t *n = make(cases[i].initiator, &k, NULL, NULL, 0);
    ld_buf_reset(&wire);
    assert_int_equal(ld_noise_start(n, &wire), 0);
    ld_buf_reset(&wire);
    assert_int_equal(feed_body(n, body, cases[i].len, &wire), cases[i].want);
    assert_int_equal(wire.len, 0);
    ld_noise_free(n);
  }
  /* msg 3 sizes: a responder that got a valid msg 1 */
  size_t msg3_lens[] = {0, LD_NOISE_MSG3_MIN - 1};
  for (size_t i = 0; i < 2; i++) {
    ld_noise_t *n = make(false, &k, NULL, NULL, 0);
    ld_buf_reset(&wire);
    assert_int_equal(feed_body(n, body, 32, &wire), 0);
    assert_int_equal(feed_body(n, body, msg3_lens[i], &wire), LD_ERR_HANDSHAKE);
    ld_noise_free(n);
  }
  /* A msg 1 with a plaintext payload is accepted and answered with a full msg 2. */
  ld_noise_t *n = make(false, &k, NULL, NULL, 0);
  ld_buf_reset(&wire);
  assert_int_equal(feed_body(n, body, 40, &wire), 0);
  assert_true(wire.len > 2 + LD_NOISE_MSG2_MIN);
  assert_int_equal((wire.data[0] << 8) | wire.data[1], wire.len - 2);
  ld_noise_free(n);
  /* An all-zero ephemeral key (low-order point) is refused. */
  n = make(false, &k, NULL, NULL, 0);
  memset(body, 0, 32);
  ld_buf_reset(&wire);
  assert_int_equal(feed_body(n, body, 32, &wire), LD_ERR_HANDSHAKE);
  assert_int_equal(wire.len, 0);
  ld_noise_free(n);
  ld_buf_clear(&wire);
}

static void state_errors(void **state) {
  (void)state;
  ld_privkey_t k;
  gen_key(&k, LD_KEY_ED25519);
  ld_buf_t wire, plain;
  ld_buf_init(&wire);
  ld_buf_init(&plain);
  ld_noise_t *n = make(true, &k, NULL, NULL, 0);
  size_t used = 7;
  uint8_t byte = 0;
  assert_int_equal(ld_noise_read(n, &byte, 1, &used, &wire, &plain), LD_ERR_STATE);
  assert_int_equal(used, 0);
  assert_int_equal(ld_noise_encrypt(n, &byte, 1, &wire), LD_ERR_STATE);
  assert_null(ld_noise_remote_key(n));
  assert_null(ld_noise_remote_peer(n));
  assert_null(ld_noise_early_muxer(n));
  assert_int_equal(ld_noise_start(n, &wire), 0);
  assert_int_equal(wire.len, 34);
  assert_int_equal(ld_noise_start(n, &wire), LD_ERR_STATE);
  /* incomplete frames are left unconsumed */
  const uint8_t partial[] = {0x00, 0x60, 1, 2, 3};
  for (size_t i = 0; i <= sizeof partial; i++) {
    assert_int_equal(ld_noise_read(n, partial, i, &used, &wire, &plain), 0);
    assert_int_equal(used, 0);
  }
  assert_int_equal(wire.len, 34);
  ld_noise_free(n);

  n = make(false, &k, NULL, NULL, 0);
  ld_buf_reset(&wire);
  assert_int_equal(ld_noise_start(n, &wire), 0);
  assert_int_equal(wire.len, 0);
  ld_noise_free(n);
  ld_buf_clear(&wire);
  ld_buf_clear(&plain);
}

static void config_validation(void **state) {
  (void)state;
  ld_privkey_t k;
  gen_key(&k, LD_KEY_ED25519);
  const char *many[LD_NOISE_MUXERS_MAX + 1];
  for (size_t i = 0; i <= LD_NOISE_MUXERS_MAX; i++)
    many[i] = YAMUX;
  char longname[LD_NOISE_MUXER_NAME_MAX + 2];
  memset(longname, 'm', sizeof longname - 1);
  longname[sizeof longname - 1] = 0;
  const char *bad_names[][1] = {{""}, {NULL}, {longname}};
  assert_null(ld_noise_new(NULL));
  assert_null(make(true, NULL, NULL, NULL, 0));
  assert_null(make(true, &k, NULL, many, LD_NOISE_MUXERS_MAX + 1));
  assert_null(make(true, &k, NULL, NULL, 1));
  for (size_t i = 0; i < 3; i++)
    assert_null(make(true, &k, NULL, bad_names[i], 1));
  ld_noise_t *n = make(true, &k, NULL, many, LD_NOISE_MUXERS_MAX);
  assert_non_null(n);
  ld_noise_free(n);
  ld_noise_free(NULL);
}

static void established_pair(side_t *a, side_t *b) {
  ld_privkey_t ka, kb;
  gen_key(&ka, LD_KEY_ED25519);
  gen_key(&kb, LD_KEY_SECP256K1);
  make_pair(a, b, &ka, &kb);
  assert_int_equal(ld_noise_set_nonces(a->n, 0, 0), LD_ERR_STATE);
  handshake(a, b, SIZE_MAX);
}

/* The last usable nonce (2^64-2) works, then the sender stops. */
static void nonce_exhaustion_single_frames(void **state) {
  (void)state;
  side_t a, b;
  established_pair(&a, &b);
  assert_int_equal(ld_noise_set_nonces(a.n, UINT64_MAX - 1, 0), 0);
  assert_int_equal(ld_noise_set_nonces(b.n, 0, UINT64_MAX - 1), 0);
  assert_int_equal(ld_noise_encrypt(a.n, (const uint8_t *)"0123456789", 10, &a.wire), 0);
  assert_int_equal(deliver(&a, &b, SIZE_MAX), 0);
  assert_int_equal(b.plain.len, 10);
  assert_memory_equal(b.plain.data, "0123456789", 10);
  assert_int_equal(ld_noise_encrypt(a.n, (const uint8_t *)"x", 1, &a.wire), LD_ERR_LIMIT);
  assert_int_equal(a.wire.len, 0);
  assert_int_equal(ld_noise_encrypt(a.n, (const uint8_t *)"x", 1, &a.wire), LD_ERR_STATE);
  side_clear(&a);
  side_clear(&b);
}

/* A write needing nonces 2^64-2 and 2^64-1 is refused as a whole. */
static void nonce_exhaustion_multi_frame_write(void **state) {
  (void)state;
  side_t a, b;
  established_pair(&a, &b);
  ld_buf_t big;
  ld_buf_init(&big);
  fill_random(&big, LD_NOISE_MAX_PLAINTEXT + 1);
  assert_int_equal(ld_noise_set_nonces(a.n, UINT64_MAX - 1, 0), 0);
  assert_int_equal(ld_noise_encrypt(a.n, big.data, big.len, &a.wire), LD_ERR_LIMIT);
  assert_int_equal(a.wire.len, 0);
  ld_buf_clear(&big);
  side_clear(&a);
  side_clear(&b);
}

static void nonce_exhaustion_receiver(void **state) {
  (void)state;
  side_t a, b;
  established_pair(&a, &b);
  assert_int_equal(ld_noise_encrypt(a.n, (const uint8_t *)"abc", 3, &a.wire), 0);
  assert_int_equal(ld_noise_set_nonces(b.n, 0, UINT64_MAX), 0);
  assert_int_equal(deliver(&a, &b, SIZE_MAX), LD_ERR_LIMIT);
  assert_int_equal(b.plain.len, 0);
  side_clear(&a);
  side_clear(&b);
}

/* ---- early muxer negotiation ----------------------------------------------------------------- */

static void muxer_case(const char *const *im, size_t ni, const char *const *rm, size_t nr,
                       const char *want) {
  ld_privkey_t ka, kb;
  gen_key(&ka, LD_KEY_ED25519);
  gen_key(&kb, LD_KEY_SECP256K1);
  side_t a, b;
  side_init(&a, make(true, &ka, NULL, im, ni));
  side_init(&b, make(false, &kb, NULL, rm, nr));
  handshake(&a, &b, SIZE_MAX);
  const char *ga = ld_noise_early_muxer(a.n), *gb = ld_noise_early_muxer(b.n);
  if (want == NULL) {
    assert_null(ga);
    assert_null(gb);
  } else {
    assert_non_null(ga);
    assert_non_null(gb);
    assert_string_equal(ga, want);
    assert_string_equal(gb, want);
  }
  side_clear(&a);
  side_clear(&b);
}

static void early_muxer_agreement(void **state) {
  (void)state;
  const char *const ym[] = {YAMUX, MPLEX}, *const my[] = {MPLEX, YAMUX};
  const char *const mplex_only[] = {MPLEX}, *const other[] = {"/other/1"};
  muxer_case(yamux_only, 1, yamux_only, 1, YAMUX);
  muxer_case(my, 2, ym, 2, MPLEX); /* the initiator's order wins */
  muxer_case(ym, 2, my, 2, YAMUX);
  muxer_case(my, 2, yamux_only, 1, YAMUX);
  muxer_case(mplex_only, 1, ym, 2, MPLEX);
  muxer_case(yamux_only, 1, NULL, 0, NULL); /* one list only */
  muxer_case(NULL, 0, yamux_only, 1, NULL);
  muxer_case(NULL, 0, NULL, 0, NULL); /* none */
  muxer_case(other, 1, ym, 2, NULL);  /* no overlap: multistream fallback */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cacophony_vector),
      cmocka_unit_test(msg1_payload_is_mixed),
      cmocka_unit_test(libp2p_vector),
      cmocka_unit_test(libp2p_vector_payloads),
      cmocka_unit_test(sessions_all_key_types),
      cmocka_unit_test(byte_at_a_time),
      cmocka_unit_test(transport_follows_handshake_in_one_read),
      cmocka_unit_test(encrypt_splits_frames),
      cmocka_unit_test(forged_payloads),
      cmocka_unit_test(replaced_but_genuine_payload_works),
      cmocka_unit_test(expected_peer_mismatch),
      cmocka_unit_test(tampered_transport_frame),
      cmocka_unit_test(short_transport_frame),
      cmocka_unit_test(malformed_handshake_messages),
      cmocka_unit_test(state_errors),
      cmocka_unit_test(config_validation),
      cmocka_unit_test(nonce_exhaustion_single_frames),
      cmocka_unit_test(nonce_exhaustion_multi_frame_write),
      cmocka_unit_test(nonce_exhaustion_receiver),
      cmocka_unit_test(early_muxer_agreement),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
