/* The connection upgrade engine in memory: two upgraders exchange bytes through buffers, in one
 * piece or a byte at a time. No sockets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/multistream.h"
#include "p2p/upgrader.h"

#define YAMUX "/yamux/1.0.0"
#define MPLEX "/mplex/6.7.0"

typedef struct side {
  ld_upgrader_t up;
  ld_buf_t inbox; /* bytes received and not consumed yet */
  int rc;
} side_t;

static const char *const both[] = {YAMUX, MPLEX};

static void side_init(side_t *s, bool initiator, const ld_privkey_t *id, const ld_peerid_t *expect,
                      const char *const *muxers, size_t n) {
  memset(s, 0, sizeof *s);
  ld_buf_init(&s->inbox);
  ld_upgrader_config_t cfg = {
      .initiator = initiator,
      .identity = id,
      .expected_peer = expect,
      .muxers = muxers,
      .n_muxers = n,
  };
  assert_int_equal(ld_upgrader_init(&s->up, &cfg), 0);
}

static void side_clear(side_t *s) {
  ld_upgrader_clear(&s->up);
  ld_buf_clear(&s->inbox);
}

/* Delivers up to `chunk` bytes of `from`'s output to `to`; returns the bytes moved. */
static size_t deliver(ld_buf_t *wire, side_t *to, size_t chunk, ld_buf_t *reply) {
  size_t n = wire->len < chunk ? wire->len : chunk;
  if (n == 0 || to->rc < 0 || to->rc == LD_UPGRADER_DONE)
    return 0;
  ld_buf_append(&to->inbox, wire->data, n);
  ld_buf_consume(wire, n);
  size_t used = 0;
  to->rc = ld_upgrader_read(&to->up, to->inbox.data, to->inbox.len, &used, reply);
  if (to->rc >= 0)
    ld_buf_consume(&to->inbox, used);
  return n;
}

/* Runs both sides until neither moves; `chunk` bytes per delivery. */
static void exchange(side_t *a, side_t *b, size_t chunk) {
  ld_buf_t ab, ba;
  ld_buf_init(&ab);
  ld_buf_init(&ba);
  assert_int_equal(ld_upgrader_start(&a->up, &ab), 0);
  assert_int_equal(ld_upgrader_start(&b->up, &ba), 0);
  assert_int_equal(ba.len, 0); /* the listener waits for the dialer */
  for (int guard = 0; guard < 100000; guard++) {
    size_t moved = deliver(&ab, b, chunk, &ba) + deliver(&ba, a, chunk, &ab);
    if (moved == 0)
      break;
  }
  ld_buf_clear(&ab);
  ld_buf_clear(&ba);
}

static void keys(ld_privkey_t *a, ld_privkey_t *b) {
  assert_int_equal(ld_privkey_generate(a, LD_KEY_SECP256K1), 0);
  assert_int_equal(ld_privkey_generate(b, LD_KEY_ED25519), 0);
}

static void peer_of(const ld_privkey_t *k, ld_peerid_t *id) {
  ld_pubkey_t pub;
  ld_privkey_public(k, &pub);
  assert_int_equal(ld_peerid_from_pubkey(id, &pub), 0);
}

static void upgrade_agrees_on_first_muxer(void **state) {
  (void)state;
  for (size_t chunk = 1; chunk <= 4096; chunk *= 64) {
    ld_privkey_t ka, kb;
    keys(&ka, &kb);
    ld_peerid_t pb;
    peer_of(&kb, &pb);
    side_t a, b;
    side_init(&a, true, &ka, &pb, both, 2);
    side_init(&b, false, &kb, NULL, both, 2);
    exchange(&a, &b, chunk);
    assert_int_equal(a.rc, LD_UPGRADER_DONE);
    assert_int_equal(b.rc, LD_UPGRADER_DONE);
    assert_string_equal(ld_upgrader_muxer(&a.up), YAMUX);
    assert_string_equal(ld_upgrader_muxer(&b.up), YAMUX);
    ld_noise_t *na = ld_upgrader_take_noise(&a.up);
    ld_noise_t *nb = ld_upgrader_take_noise(&b.up);
    assert_true(ld_peerid_equal(ld_noise_remote_peer(na), &pb));
    ld_peerid_t pa;
    peer_of(&ka, &pa);
    assert_true(ld_peerid_equal(ld_noise_remote_peer(nb), &pa));
    assert_memory_equal(ld_noise_handshake_hash(na), ld_noise_handshake_hash(nb), 32);
    assert_string_equal(ld_upgrader_stage_name(&a.up), "finished");
    ld_noise_free(na);
    ld_noise_free(nb);
    side_clear(&a);
    side_clear(&b);
  }
}

static void dialer_preference_decides(void **state) {
  (void)state;
  ld_privkey_t ka, kb;
  keys(&ka, &kb);
  static const char *const mplex_first[] = {MPLEX, YAMUX};
  side_t a, b;
  side_init(&a, true, &ka, NULL, mplex_first, 2);
  side_init(&b, false, &kb, NULL, both, 2);
  exchange(&a, &b, 1 << 20);
  assert_int_equal(a.rc, LD_UPGRADER_DONE);
  assert_int_equal(b.rc, LD_UPGRADER_DONE);
  assert_string_equal(ld_upgrader_muxer(&a.up), MPLEX);
  assert_string_equal(ld_upgrader_muxer(&b.up), MPLEX);
  side_clear(&a);
  side_clear(&b);

  /* the listener answers na to what it lacks; the dialer moves on */
  static const char *const odd_first[] = {"/coolmux/9", MPLEX};
  static const char *const only_mplex[] = {MPLEX};
  side_init(&a, true, &ka, NULL, odd_first, 2);
  side_init(&b, false, &kb, NULL, only_mplex, 1);
  exchange(&a, &b, 1 << 20);
  assert_int_equal(a.rc, LD_UPGRADER_DONE);
  assert_string_equal(ld_upgrader_muxer(&a.up), MPLEX);
  side_clear(&a);
  side_clear(&b);
}

static void no_common_muxer_fails(void **state) {
  (void)state;
  ld_privkey_t ka, kb;
  keys(&ka, &kb);
  static const char *const odd[] = {"/coolmux/9"};
  side_t a, b;
  side_init(&a, true, &ka, NULL, odd, 1);
  side_init(&b, false, &kb, NULL, both, 2);
  exchange(&a, &b, 1 << 20);
  assert_int_equal(a.rc, LD_ERR_PROTOCOL_UNSUPPORTED);
  assert_int_equal(b.rc, LD_UPGRADER_PENDING);
  assert_string_equal(ld_upgrader_stage_name(&b.up), "muxer");
  side_clear(&a);
  side_clear(&b);
}

static void wrong_peer_is_refused(void **state) {
  (void)state;
  ld_privkey_t ka, kb, kc;
  keys(&ka, &kb);
  assert_int_equal(ld_privkey_generate(&kc, LD_KEY_ED25519), 0);
  ld_peerid_t pc;
  peer_of(&kc, &pc);
  side_t a, b;
  side_init(&a, true, &ka, &pc, both, 2);
  side_init(&b, false, &kb, NULL, both, 2);
  exchange(&a, &b, 1 << 20);
  assert_int_equal(a.rc, LD_ERR_PEER_ID_MISMATCH);
  assert_string_equal(ld_upgrader_stage_name(&a.up), "handshake");
  side_clear(&a);
  side_clear(&b);
}

/* Encrypts `text` as muxer bytes and appends them, plus `partial` bytes of one more frame. */
static void append_muxer_bytes(ld_noise_t *n, ld_buf_t *wire, const char *text, size_t partial) {
  assert_int_equal(ld_noise_encrypt(n, (const uint8_t *)text, strlen(text), wire), 0);
  if (partial == 0)
    return;
  ld_buf_t more;
  ld_buf_init(&more);
  assert_int_equal(ld_noise_encrypt(n, (const uint8_t *)text, strlen(text), &more), 0);
  ld_buf_append(wire, more.data, partial);
  ld_buf_clear(&more);
}

static void muxer_bytes_after_agreement_are_kept(void **state) {
  (void)state;
  ld_privkey_t ka, kb;
  keys(&ka, &kb);
  side_t a, b;
  side_init(&a, true, &ka, NULL, both, 2);
  side_init(&b, false, &kb, NULL, both, 2);
  ld_buf_t ab, ba;
  ld_buf_init(&ab);
  ld_buf_init(&ba);
  size_t big = 1 << 20;
  assert_int_equal(ld_upgrader_start(&a.up, &ab), 0);
  deliver(&ab, &b, big, &ba); /* "/noise" agreed */
  deliver(&ba, &a, big, &ab); /* Noise message 1 */
  deliver(&ab, &b, big, &ba); /* message 2 */
  deliver(&ba, &a, big, &ab); /* message 3 and the muxer proposal */
  assert_string_equal(ld_upgrader_stage_name(&a.up), "muxer");
  /* the dialer pipelines muxer bytes behind its proposal, the last frame cut short */
  append_muxer_bytes(a.up.noise, &ab, "dialer bytes", 5);
  deliver(&ab, &b, big, &ba);
  assert_int_equal(b.rc, LD_UPGRADER_DONE);
  size_t n;
  const uint8_t *rest = ld_upgrader_leftover(&b.up, &n);
  assert_int_equal(n, strlen("dialer bytes"));
  assert_memory_equal(rest, "dialer bytes", n);
  assert_int_equal(b.inbox.len, 5); /* the partial frame stays with the caller */
  /* the listener's own muxer bytes follow its echo */
  append_muxer_bytes(b.up.noise, &ba, "listener bytes", 0);
  deliver(&ba, &a, big, &ab);
  assert_int_equal(a.rc, LD_UPGRADER_DONE);
  rest = ld_upgrader_leftover(&a.up, &n);
  assert_int_equal(n, strlen("listener bytes"));
  assert_memory_equal(rest, "listener bytes", n);
  assert_int_equal(a.inbox.len, 0);
  ld_buf_clear(&ab);
  ld_buf_clear(&ba);
  side_clear(&a);
  side_clear(&b);
}

static void garbage_fails_each_stage(void **state) {
  (void)state;
  ld_privkey_t ka, kb;
  keys(&ka, &kb);
  side_t b;
  side_init(&b, false, &kb, NULL, both, 2);
  ld_buf_t out;
  ld_buf_init(&out);
  size_t used;
  static const uint8_t junk[] = "\x05hello world";
  assert_true(ld_upgrader_read(&b.up, junk, sizeof junk - 1, &used, &out) < 0);
  side_clear(&b);

  /* a valid negotiation, then a Noise message 1 of the wrong size */
  side_init(&b, false, &kb, NULL, both, 2);
  ld_buf_t in;
  ld_buf_init(&in);
  ld_mss_write_message(&in, LD_MSS_PROTOCOL_ID, strlen(LD_MSS_PROTOCOL_ID));
  ld_mss_write_message(&in, "/noise", 6);
  static const uint8_t bad_msg1[] = {0x00, 0x03, 1, 2, 3};
  ld_buf_append(&in, bad_msg1, sizeof bad_msg1);
  assert_int_equal(ld_upgrader_read(&b.up, in.data, in.len, &used, &out), LD_ERR_HANDSHAKE);
  side_clear(&b);
  ld_buf_clear(&in);
  ld_buf_clear(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(upgrade_agrees_on_first_muxer),
      cmocka_unit_test(dialer_preference_decides),
      cmocka_unit_test(no_common_muxer_fails),
      cmocka_unit_test(wrong_peer_is_refused),
      cmocka_unit_test(muxer_bytes_after_agreement_are_kept),
      cmocka_unit_test(garbage_fails_each_stage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
