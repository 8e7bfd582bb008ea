/* RLN-relay's validator (waku/rln/validator.h) on messages proved by our prover: nwaku's order
 * and verdicts — decode, clock gap, epoch, root window of 50, zk proof (tampered shares, another
 * signal, non-canonical field elements), the double-signal rule per epoch with pruning — the
 * gossipsub mapping, the store-sync hook (old messages without the clock gap or the log), the
 * RateLimitProof codec and the nonce manager. Circuit files from LD_RLN_FIXTURES. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "rln_fixtures.h"
#include "waku/rln/hooks.h"
#include "waku/rln/publish.h"
#include "waku/rln/validator.h"
#include "zk/poseidon.h"

#define EPOCH_SEC RF_EPOCH_SEC
#define SEC RF_SEC
#define T0 RF_T0

static ld_rln_prover_t *prover;
static ld_rln_verifier_t *verifier;
static ld_rln_member_t member, other;
static ld_fr_t root;

typedef rf_signed_msg_t signed_msg_t;

static void make_msg(signed_msg_t *m, const ld_rln_member_t *who, int64_t ts, uint64_t id,
                     uint8_t tag) {
  rf_make_msg(prover, m, who, ts, id, tag);
}

static void member_at(ld_rln_member_t *m, uint64_t seed, uint64_t index, ld_fr_t *root_out) {
  rf_member(m, seed * 7919 + 13, index, seed * 1000, root_out);
}

static int setup(void **state) {
  (void)state;
  if (rf_load(&prover, &verifier) != 0)
    return -1;
  ld_fr_t other_root;
  member_at(&member, 1, 5, &root);
  member_at(&other, 2, 9, &other_root); /* a "non-member": its root is never in the window */
  return 0;
}

static int teardown(void **state) {
  (void)state;
  ld_rln_prover_free(prover);
  ld_rln_verifier_free(verifier);
  return 0;
}

static ld_rln_validator_t *new_validator(void) {
  ld_rln_validator_t *v;
  assert_int_equal(ld_rln_validator_new(&v, verifier, EPOCH_SEC), 0);
  ld_rln_validator_add_root(v, &root);
  return v;
}

static ld_rln_reason_t check(ld_rln_validator_t *v, const ld_waku_message_t *m, int64_t now,
                             ld_rln_verdict_t want) {
  ld_rln_reason_t r;
  assert_int_equal(ld_rln_validator_check(v, m, now, &r), want);
  return r;
}

/* Valid, then the double signal: the same message again, another message with the same id
 * (another share, same nullifier) are spam; another id is valid. */
static void valid_then_spam(void **state) {
  (void)state;
  ld_rln_validator_t *v = new_validator();
  signed_msg_t a, b, c;
  make_msg(&a, &member, T0, 0, 1);
  make_msg(&b, &member, T0 + 2 * SEC, 0, 2);
  make_msg(&c, &member, T0 + 3 * SEC, 1, 3);
  assert_int_equal(check(v, &a.msg, T0, LD_RLN_VALID), LD_RLN_OK);
  assert_int_equal(check(v, &a.msg, T0, LD_RLN_SPAM), LD_RLN_DUPLICATE);
  assert_int_equal(check(v, &b.msg, T0 + 2 * SEC, LD_RLN_SPAM), LD_RLN_DUPLICATE);
  assert_int_equal(check(v, &c.msg, T0 + 3 * SEC, LD_RLN_VALID), LD_RLN_OK);
  size_t epochs;
  assert_int_equal(ld_rln_validator_log_size(v, &epochs), 2);
  assert_int_equal(epochs, 1);
  const ld_rln_validator_stats_t *st = ld_rln_validator_stats(v);
  assert_int_equal(st->valid, 2);
  assert_int_equal(st->spam, 2);
  assert_int_equal(ld_rln_gossipsub_verdict(LD_RLN_VALID), LD_GS_ACCEPT);
  assert_int_equal(ld_rln_gossipsub_verdict(LD_RLN_INVALID), LD_GS_REJECT);
  assert_int_equal(ld_rln_gossipsub_verdict(LD_RLN_SPAM), LD_GS_REJECT);

  /* the next epoch: the log is pruned (gap 1 with 600 s epochs) and the old nullifier is gone */
  ld_rln_validator_t *w = new_validator();
  assert_int_equal(check(w, &a.msg, T0, LD_RLN_VALID), LD_RLN_OK);
  signed_msg_t d;
  make_msg(&d, &member, T0 + EPOCH_SEC * SEC, 0, 4);
  assert_int_equal(check(w, &d.msg, T0 + EPOCH_SEC * SEC, LD_RLN_VALID), LD_RLN_OK);
  assert_int_equal(ld_rln_validator_log_size(w, &epochs), 1);
  assert_int_equal(epochs, 1);
  ld_rln_validator_free(w);
  ld_rln_validator_free(v);
}

/* x + r over 256 bits: the same field element, not canonical. */
static void add_r(uint8_t x[32]) {
  static const uint8_t r_le[32] = {0x01, 0x00, 0x00, 0xf0, 0x93, 0xf5, 0xe1, 0x43, 0x91, 0x70, 0xb9,
                                   0x79, 0x48, 0xe8, 0x33, 0x28, 0x5d, 0x58, 0x81, 0x81, 0xb6, 0x45,
                                   0x50, 0xb8, 0x29, 0xa0, 0x31, 0xe1, 0x72, 0x4e, 0x64, 0x30};
  unsigned carry = 0;
  for (int i = 0; i < 32; i++) {
    unsigned s = (unsigned)x[i] + r_le[i] + carry;
    x[i] = (uint8_t)s;
    carry = s >> 8;
  }
  assert_int_equal(carry, 0);
}

/* nwaku's order of Invalid verdicts on one valid message bent each way. */
static void invalid_verdicts(void **state) {
  (void)state;
  ld_rln_validator_t *v = new_validator();
  signed_msg_t a;
  make_msg(&a, &member, T0, 2, 5);
  ld_rln_rate_limit_proof_t p;
  assert_int_equal(ld_rln_rate_limit_proof_decode(&p, a.proof, a.proof_len), 0);

  /* clock gap: 20.9 s passes the gap (and the rest), 21 s does not */
  assert_int_equal(check(v, &a.msg, T0 + 21 * SEC, LD_RLN_INVALID), LD_RLN_INVALID_TIMESTAMP);
  assert_int_equal(check(v, &a.msg, T0 - 21 * SEC, LD_RLN_INVALID), LD_RLN_INVALID_TIMESTAMP);

  /* not a protobuf; no proof at all (decodes as zeros: the epoch does not match) */
  ld_waku_message_t m = a.msg;
  const uint8_t junk[] = {0x0a, 0xff, 0x01};
  m.proof = junk;
  m.proof_len = sizeof junk;
  assert_int_equal(check(v, &m, T0, LD_RLN_INVALID), LD_RLN_UNDECODABLE);
  m.proof = NULL;
  m.proof_len = 0;
  assert_int_equal(check(v, &m, T0, LD_RLN_INVALID), LD_RLN_TIMESTAMP_MISMATCH);

  uint8_t buf[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  ld_rln_rate_limit_proof_t q;
  m = a.msg;
  m.proof = buf;
#define WITH(change, want)                                                                         \
  do {                                                                                             \
    q = p;                                                                                         \
    change;                                                                                        \
    m.proof_len = ld_rln_rate_limit_proof_encode(&q, buf);                                         \
    assert_int_equal(check(v, &m, T0, LD_RLN_INVALID), want);                                      \
  } while (0)
  WITH(q.epoch[0] ^= 1, LD_RLN_TIMESTAMP_MISMATCH);
  WITH(q.merkle_root[0] ^= 1, LD_RLN_INVALID_ROOT);
  WITH(q.share_y[0] ^= 1, LD_RLN_INVALID_PROOF);
  WITH(q.nullifier[0] ^= 1, LD_RLN_INVALID_PROOF);
  WITH(q.share_x[0] ^= 1, LD_RLN_INVALID_PROOF);
  WITH(q.rln_identifier[0] ^= 1, LD_RLN_INVALID_PROOF);
  WITH(q.proof[5] ^= 4, LD_RLN_INVALID_PROOF);
  /* nullifier + r: the same field element, not canonical: refused rather than taken as a
   * second nullifier (ld_rln_validator_check would log it apart from the original) */
  WITH(add_r(q.nullifier), LD_RLN_INVALID_PROOF);
#undef WITH
  /* another signal: the payload changed after proving */
  m = a.msg;
  uint8_t payload[32];
  memcpy(payload, a.payload, 32);
  payload[0] ^= 1;
  m.payload = payload;
  assert_int_equal(check(v, &m, T0, LD_RLN_INVALID), LD_RLN_INVALID_PROOF);
  /* none of that entered the log; the original is still valid once */
  assert_int_equal(ld_rln_validator_log_size(v, NULL), 0);
  assert_int_equal(check(v, &a.msg, T0 + 20 * SEC + SEC / 2, LD_RLN_VALID), LD_RLN_OK);
  ld_rln_validator_free(v);
}

/* A non-member proves against its own tree: its root is not in the window. The window keeps
 * the last 50 roots. */
static void root_window(void **state) {
  (void)state;
  ld_rln_validator_t *v = new_validator();
  signed_msg_t x, a;
  make_msg(&x, &other, T0, 0, 6);
  make_msg(&a, &member, T0, 3, 7);
  assert_int_equal(check(v, &x.msg, T0, LD_RLN_INVALID), LD_RLN_INVALID_ROOT);
  for (uint64_t i = 0; i < LD_RLN_ROOT_WINDOW - 1; i++) {
    ld_fr_t r;
    ld_fr_from_u64(&r, 1000 + i);
    ld_rln_validator_add_root(v, &r);
  }
  uint8_t rb[32];
  ld_fr_to_bytes(rb, &root);
  assert_true(ld_rln_validator_root_ok(v, rb));
  ld_fr_t r;
  ld_fr_from_u64(&r, 5000);
  ld_rln_validator_add_root(v, &r); /* the 51st: ours falls out */
  assert_false(ld_rln_validator_root_ok(v, rb));
  assert_int_equal(check(v, &a.msg, T0, LD_RLN_INVALID), LD_RLN_INVALID_ROOT);
  ld_rln_validator_free(v);
}

/* Store-sync's hook: a valid message hours old passes (no clock gap, no log), a tampered one
 * does not; relay's check refuses the old one on its timestamp. */
static void sync_hook(void **state) {
  (void)state;
  ld_rln_validator_t *v = new_validator();
  signed_msg_t old;
  make_msg(&old, &member, T0 - 3 * 3600 * SEC, 0, 8);
  assert_true(ld_rln_sync_accept(v, "/waku/2/rs/1/0", &old.msg));
  assert_true(ld_rln_sync_accept(v, "/waku/2/rs/1/0", &old.msg));
  assert_int_equal(ld_rln_validator_log_size(v, NULL), 0);
  assert_int_equal(check(v, &old.msg, T0, LD_RLN_INVALID), LD_RLN_INVALID_TIMESTAMP);
  uint8_t payload[32];
  memcpy(payload, old.payload, 32);
  payload[3] ^= 1;
  old.msg.payload = payload;
  assert_false(ld_rln_sync_accept(v, "/waku/2/rs/1/0", &old.msg));
  ld_rln_validator_free(v);
}

/* The codec: nwaku's padding and truncation, all-zero for empty input, junk refused. */
static void proof_codec(void **state) {
  (void)state;
  ld_rln_rate_limit_proof_t p, q;
  memset(&p, 0, sizeof p);
  for (size_t i = 0; i < sizeof p; i++) {
    ((uint8_t *)&p)[i] = (uint8_t)(i * 31 + 7);
  }
  uint8_t buf[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  size_t n = ld_rln_rate_limit_proof_encode(&p, buf);
  assert_true(n > 320 && n <= sizeof buf);
  assert_int_equal(ld_rln_rate_limit_proof_decode(&q, buf, n), 0);
  assert_memory_equal(&p, &q, sizeof p);
  /* field 3 (epoch) of 2 bytes, field 6 (nullifier) of 40 bytes */
  uint8_t short_long[2 + 2 + 2 + 40];
  short_long[0] = 0x1a;
  short_long[1] = 2;
  short_long[2] = 0xaa;
  short_long[3] = 0xbb;
  short_long[4] = 0x32;
  short_long[5] = 40;
  memset(short_long + 6, 0x5c, 40);
  assert_int_equal(ld_rln_rate_limit_proof_decode(&q, short_long, sizeof short_long), 0);
  assert_int_equal(q.epoch[0], 0xaa);
  assert_int_equal(q.epoch[1], 0xbb);
  assert_int_equal(q.epoch[2], 0);
  assert_int_equal(q.nullifier[31], 0x5c);
  assert_int_equal(q.proof[0], 0);
  assert_int_equal(ld_rln_rate_limit_proof_decode(&q, NULL, 0), 0);
  assert_int_equal(q.share_x[0], 0);
  const uint8_t junk[] = {0x0a, 0x05, 0x01};
  assert_int_equal(ld_rln_rate_limit_proof_decode(&q, junk, sizeof junk), LD_ERR_BAD_PROTOBUF);
  /* epoch bytes: t = 1644810116, 600 s => 2741350 => 66d42900… */
  uint8_t e[32];
  ld_rln_epoch_bytes(e, ld_rln_epoch_of((int64_t)1644810116 * SEC, 600));
  assert_int_equal(e[0], 0x66);
  assert_int_equal(e[1], 0xd4);
  assert_int_equal(e[2], 0x29);
  assert_int_equal(e[3], 0);
}

static void nonce_manager(void **state) {
  (void)state;
  ld_rln_nonce_t n;
  ld_rln_nonce_init(&n, 3);
  uint64_t id;
  for (uint64_t i = 0; i < 3; i++) {
    assert_int_equal(ld_rln_nonce_next(&n, 7, &id), 0);
    assert_int_equal(id, i);
  }
  assert_int_equal(ld_rln_nonce_next(&n, 7, &id), LD_ERR_LIMIT);
  assert_int_equal(ld_rln_nonce_next(&n, 8, &id), 0);
  assert_int_equal(id, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(proof_codec),     cmocka_unit_test(nonce_manager),
      cmocka_unit_test(valid_then_spam), cmocka_unit_test(invalid_verdicts),
      cmocka_unit_test(root_window),     cmocka_unit_test(sync_hook),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
