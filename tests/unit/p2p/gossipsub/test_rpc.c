#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/hex.h"
#include "p2p/gossipsub/router.h"
#include "p2p/gossipsub/rpc.h"

#define TOPIC "/waku/2/rs/1/0"

/* libp2p.md §9.10, each with its one-byte length prefix */
static const char *V_SUB = "140a120801120e2f77616b752f322f72732f312f30";
static const char *V_PUB = "191217120568656c6c6f220e2f77616b752f322f72732f312f30";
static const char *V_GRAFT = "141a121a100a0e2f77616b752f322f72732f312f30";
static const char *V_PRUNE = "161a1422120a0e2f77616b752f322f72732f312f30183c";
static const char *V_IHAVE = "361a340a320a0e2f77616b752f322f72732f312f3012202cf24dba5fb0a30e26e83b2"
                             "ac5b9e29e1b161e5c1fa7425e73043362938b9824";
static const char *V_IWANT = "261a2412220a202cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043"
                             "362938b9824";
static const char *V_IDONTWANT = "261a242a220a202cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73"
                                 "043362938b9824";
static const char *HELLO_ID = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

static size_t unhex(const char *h, uint8_t *out, size_t cap) {
  size_t n = 0;
  assert_int_equal(ld_hex_decode(h, strlen(h), out, cap, &n), 0);
  return n;
}

/* Vector body without the length prefix. */
static size_t vector(const char *h, uint8_t *out) {
  uint8_t buf[256];
  size_t n = unhex(h, buf, sizeof buf);
  assert_int_equal(buf[0], n - 1);
  memcpy(out, buf + 1, n - 1);
  return n - 1;
}

typedef struct sink {
  uint8_t *rpcs[64];
  size_t lens[64];
  size_t n;
} sink_t;

static void sink_emit(void *ctx, const uint8_t *rpc, size_t len) {
  sink_t *s = ctx;
  assert_true(s->n < 64);
  s->rpcs[s->n] = malloc(len ? len : 1);
  memcpy(s->rpcs[s->n], rpc, len);
  s->lens[s->n++] = len;
}

static void sink_free(sink_t *s) {
  for (size_t i = 0; i < s->n; i++) {
    free(s->rpcs[i]);
  }
  s->n = 0;
}

static uint8_t scratch[LD_GS_MAX_RPC_SIZE];

/* Flushes `o` and checks that it produced exactly the vector `h`. */
static void expect_vector(ld_gs_out_t *o, const char *h) {
  uint8_t want[256];
  size_t wn = vector(h, want);
  sink_t s = {0};
  size_t dropped = 9;
  assert_int_equal(ld_gs_out_flush(o, scratch, sizeof scratch, sink_emit, &s, &dropped), 1);
  assert_int_equal(dropped, 0);
  assert_int_equal(s.lens[0], wn);
  assert_memory_equal(s.rpcs[0], want, wn);
  sink_free(&s);
}

static void encodes_vectors(void **state) {
  (void)state;
  uint8_t id[32];
  unhex(HELLO_ID, id, sizeof id);
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  ld_gs_out_sub(&o, TOPIC, true);
  expect_vector(&o, V_SUB);
  ld_gs_out_msg(&o, TOPIC, (const uint8_t *)"hello", 5);
  expect_vector(&o, V_PUB);
  ld_gs_out_graft(&o, TOPIC);
  expect_vector(&o, V_GRAFT);
  ld_gs_out_prune(&o, TOPIC, true, 60);
  expect_vector(&o, V_PRUNE);
  ld_gs_out_ihave(&o, TOPIC, id, 1);
  expect_vector(&o, V_IHAVE);
  ld_gs_out_iwant(&o, id, 1);
  expect_vector(&o, V_IWANT);
  ld_gs_out_idontwant(&o, id, 1);
  expect_vector(&o, V_IDONTWANT);
  ld_gs_out_clear(&o);
}

static ld_gs_rpc_t *decode_vector(const char *h) {
  uint8_t buf[256];
  size_t n = vector(h, buf);
  ld_gs_rpc_t *rpc = NULL;
  assert_int_equal(ld_gs_rpc_decode(buf, n, &rpc), 0);
  return rpc;
}

static void assert_topic(const ProtobufCBinaryData *b) {
  assert_int_equal(b->len, strlen(TOPIC));
  assert_memory_equal(b->data, TOPIC, b->len);
}

static void assert_hello_id(const ProtobufCBinaryData *b) {
  uint8_t id[32];
  unhex(HELLO_ID, id, sizeof id);
  assert_int_equal(b->len, 32);
  assert_memory_equal(b->data, id, 32);
}

static void decodes_vectors(void **state) {
  (void)state;
  ld_gs_rpc_t *r = decode_vector(V_SUB);
  assert_int_equal(r->n_subscriptions, 1);
  assert_true(r->subscriptions[0]->has_subscribe && r->subscriptions[0]->subscribe);
  assert_topic(&r->subscriptions[0]->topicid);
  ld_gs_rpc_free(r);

  r = decode_vector(V_PUB);
  assert_int_equal(r->n_publish, 1);
  Ld__Gossipsub__Message *m = r->publish[0];
  assert_false(m->has_from || m->has_seqno || m->has_signature || m->has_key);
  assert_int_equal(m->data.len, 5);
  assert_memory_equal(m->data.data, "hello", 5);
  assert_topic(&m->topic);
  uint8_t id[32], want[32];
  ld_gs_msg_id(m->data.data, m->data.len, id);
  unhex(HELLO_ID, want, sizeof want);
  assert_memory_equal(id, want, 32);
  ld_gs_rpc_free(r);

  r = decode_vector(V_GRAFT);
  assert_int_equal(r->control->n_graft, 1);
  assert_topic(&r->control->graft[0]->topicid);
  ld_gs_rpc_free(r);

  r = decode_vector(V_PRUNE);
  assert_int_equal(r->control->n_prune, 1);
  assert_topic(&r->control->prune[0]->topicid);
  assert_true(r->control->prune[0]->has_backoff);
  assert_int_equal(r->control->prune[0]->backoff, 60);
  assert_int_equal(r->control->prune[0]->n_peers, 0);
  ld_gs_rpc_free(r);

  r = decode_vector(V_IHAVE);
  assert_int_equal(r->control->n_ihave, 1);
  assert_topic(&r->control->ihave[0]->topicid);
  assert_int_equal(r->control->ihave[0]->n_messageids, 1);
  assert_hello_id(&r->control->ihave[0]->messageids[0]);
  ld_gs_rpc_free(r);

  r = decode_vector(V_IWANT);
  assert_int_equal(r->control->n_iwant, 1);
  assert_hello_id(&r->control->iwant[0]->messageids[0]);
  ld_gs_rpc_free(r);

  r = decode_vector(V_IDONTWANT);
  assert_int_equal(r->control->n_idontwant, 1);
  assert_hello_id(&r->control->idontwant[0]->messageids[0]);
  ld_gs_rpc_free(r);
}

static void decode_skips_unknown_fields_and_keeps_presence(void **state) {
  (void)state;
  /* RPC { publish { from = "" data = "x" topic = "t" } 60 = "ping" control { 6 = "" } } */
  const uint8_t rpc[] = {0x12, 0x08, 0x0a, 0x00, 0x12, 0x01, 'x',  0x22, 0x01, 't', 0xe2,
                         0x03, 0x04, 'p',  'i',  'n',  'g',  0x1a, 0x02, 0x32, 0x00};
  ld_gs_rpc_t *r = NULL;
  assert_int_equal(ld_gs_rpc_decode(rpc, sizeof rpc, &r), 0);
  assert_int_equal(r->n_publish, 1);
  assert_true(r->publish[0]->has_from);
  assert_int_equal(r->publish[0]->from.len, 0);
  assert_non_null(r->control);
  assert_int_equal(r->control->n_ihave, 0);
  ld_gs_rpc_free(r);
}

static void decode_rejects_malformed(void **state) {
  (void)state;
  uint8_t buf[256];
  size_t n = vector(V_IHAVE, buf);
  ld_gs_rpc_t *r = NULL;
  for (size_t cut = 1; cut < n; cut++) {
    assert_int_equal(ld_gs_rpc_decode(buf, cut, &r), LD_ERR_BAD_PROTOBUF);
  }
  const uint8_t bad_wire[] = {0x0b}; /* field 1, wire type 3 (group) */
  assert_int_equal(ld_gs_rpc_decode(bad_wire, sizeof bad_wire, &r), LD_ERR_BAD_PROTOBUF);
  assert_int_equal(ld_gs_rpc_decode(NULL, 0, &r), 0); /* the empty RPC is valid */
  ld_gs_rpc_free(r);
}

static void splits_long_id_lists(void **state) {
  (void)state;
  enum { N = 10000 };
  uint8_t *ids = malloc(N * 32);
  for (size_t i = 0; i < N; i++) {
    memset(ids + i * 32, (int)(i & 0xff), 32);
    memcpy(ids + i * 32, &i, sizeof i);
  }
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  ld_gs_out_ihave(&o, TOPIC, ids, N);
  ld_gs_out_iwant(&o, ids, 100);
  ld_gs_out_iwant(&o, ids + 100 * 32, 50);
  sink_t s = {0};
  int n = ld_gs_out_flush(&o, scratch, LD_GS_MAX_RPC_SIZE, sink_emit, &s, NULL);
  assert_int_equal(n, 3); /* 10000 * 34 bytes need three 150 KiB frames */
  size_t total = 0, wants = 0, iwant_entries = 0;
  for (size_t i = 0; i < s.n; i++) {
    assert_true(s.lens[i] <= LD_GS_MAX_RPC_SIZE);
    ld_gs_rpc_t *r = NULL;
    assert_int_equal(ld_gs_rpc_decode(s.rpcs[i], s.lens[i], &r), 0);
    for (size_t k = 0; k < r->control->n_ihave; k++) {
      for (size_t j = 0; j < r->control->ihave[k]->n_messageids; j++, total++) {
        assert_memory_equal(r->control->ihave[k]->messageids[j].data, ids + total * 32, 32);
      }
    }
    iwant_entries += r->control->n_iwant;
    for (size_t k = 0; k < r->control->n_iwant; k++) {
      wants += r->control->iwant[k]->n_messageids;
    }
    ld_gs_rpc_free(r);
  }
  assert_int_equal(total, N);
  assert_int_equal(wants, 150);
  assert_int_equal(iwant_entries, 1); /* merged */
  sink_free(&s);
  ld_gs_out_clear(&o);
  free(ids);
}

static void splits_message_batches_and_drops_oversize(void **state) {
  (void)state;
  size_t big = 60 * 1024;
  uint8_t *data = calloc(1, 200 * 1024);
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  ld_gs_out_sub(&o, TOPIC, true);
  for (int i = 0; i < 5; i++) {
    ld_gs_out_msg(&o, TOPIC, data, big);
  }
  ld_gs_out_msg(&o, TOPIC, data, 200 * 1024); /* can never fit */
  ld_gs_out_graft(&o, TOPIC);
  sink_t s = {0};
  size_t dropped = 0;
  int n = ld_gs_out_flush(&o, scratch, LD_GS_MAX_RPC_SIZE, sink_emit, &s, &dropped);
  assert_int_equal(n, 3);
  assert_int_equal(dropped, 1);
  size_t msgs = 0, grafts = 0;
  for (size_t i = 0; i < s.n; i++) {
    assert_true(s.lens[i] <= LD_GS_MAX_RPC_SIZE);
    ld_gs_rpc_t *r = NULL;
    assert_int_equal(ld_gs_rpc_decode(s.rpcs[i], s.lens[i], &r), 0);
    msgs += r->n_publish;
    grafts += r->control ? r->control->n_graft : 0;
    ld_gs_rpc_free(r);
  }
  assert_int_equal(msgs, 5);
  assert_int_equal(grafts, 1);
  assert_true(ld_gs_out_empty(&o));
  sink_free(&s);
  ld_gs_out_clear(&o);
  free(data);
}

static void msg_size_matches_encoding(void **state) {
  (void)state;
  uint8_t want[64];
  size_t n = vector(V_PUB, want);
  assert_int_equal(ld_gs_rpc_msg_size(strlen(TOPIC), 5), n);
  assert_int_equal(ld_gs_rpc_msg_size(14, 200), 222); /* 1+2+(1+2+200)+(1+1+14) */
}

static void unsubscribe_and_v10_prune_encoding(void **state) {
  (void)state;
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  ld_gs_out_sub(&o, "t", false);
  ld_gs_out_prune(&o, "t", false, 60);
  sink_t s = {0};
  assert_int_equal(ld_gs_out_flush(&o, scratch, sizeof scratch, sink_emit, &s, NULL), 1);
  const uint8_t want[] = {0x0a, 0x05, 0x08, 0x00, 0x12, 0x01, 't',
                          0x1a, 0x05, 0x22, 0x03, 0x0a, 0x01, 't'};
  assert_int_equal(s.lens[0], sizeof want);
  assert_memory_equal(s.rpcs[0], want, sizeof want);
  sink_free(&s);
  ld_gs_out_clear(&o);
}

static void proto_ids_map_both_ways(void **state) {
  (void)state;
  ld_gs_proto_t p;
  assert_int_equal(ld_gs_proto_from_id("/vac/waku/relay/2.0.0", &p), 0);
  assert_int_equal(p, LD_GS_PROTO_WAKU_RELAY);
  assert_int_equal(ld_gs_proto_from_id("/meshsub/1.2.0", &p), 0);
  assert_int_equal(p, LD_GS_PROTO_MESHSUB_12);
  assert_int_equal(ld_gs_proto_from_id("/meshsub/1.3.0", &p), LD_ERR_UNSUPPORTED);
  assert_string_equal(ld_gs_proto_id(LD_GS_PROTO_FLOODSUB), "/floodsub/1.0.0");
  assert_string_equal(ld_gs_proto_id(LD_GS_PROTO_MESHSUB_10), "/meshsub/1.0.0");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodes_vectors),
      cmocka_unit_test(decodes_vectors),
      cmocka_unit_test(decode_skips_unknown_fields_and_keeps_presence),
      cmocka_unit_test(decode_rejects_malformed),
      cmocka_unit_test(splits_long_id_lists),
      cmocka_unit_test(splits_message_batches_and_drops_oversize),
      cmocka_unit_test(msg_size_matches_encoding),
      cmocka_unit_test(unsubscribe_and_v10_prune_encoding),
      cmocka_unit_test(proto_ids_map_both_ways),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
