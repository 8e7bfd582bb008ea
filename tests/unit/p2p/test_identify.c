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
#include "base/hex.h"
#include "base/varint.h"
#include "identify.pb-c.h"
#include "p2p/identify.h"

typedef Ld__Identify__Identify pb_identify_t;

#define ED25519_PUB "080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e"
#define SECP_PUB "08021221037777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca99"

/* Digest §7.1: pb_identify_t of the Ed25519 test key, decoded correctly by js @libp2p/identify. */
#define VECTOR_HEX                                                                                 \
  "8c010a24080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e1208047f0000"   \
  "0106ea601a0e2f697066732f69642f312e302e301a102f697066732f70696e672f312e302e301a152f7661632f77"   \
  "616b752f72656c61792f322e302e302208047f00000106d6d82a0a697066732f302e312e30320b6578616d706c65"   \
  "2f302e31"

static const char *const vector_protocols[] = {"/ipfs/id/1.0.0", "/ipfs/ping/1.0.0",
                                               "/vac/waku/relay/2.0.0"};

static size_t unhex(const char *text, uint8_t *out, size_t cap) {
  size_t n = 0;
  assert_int_equal(ld_hex_decode(text, strlen(text), out, cap, &n), 0);
  return n;
}

static void load_key(const char *hex, ld_pubkey_t *pub, ld_peerid_t *id) {
  uint8_t raw[64];
  size_t n = unhex(hex, raw, sizeof raw);
  assert_int_equal(ld_pubkey_decode(pub, raw, n), 0);
  assert_int_equal(ld_peerid_from_pubkey(id, pub), 0);
}

static void parse_addr(const char *text, ld_multiaddr_t *ma) {
  assert_int_equal(ld_multiaddr_parse(ma, text), 0);
}

/* Packs `msg` with its length prefix into `out` and returns the total length. */
static size_t pack_framed(const pb_identify_t *msg, uint8_t *out, size_t cap) {
  size_t body = ld__identify__identify__get_packed_size(msg);
  assert_true(body + 10 <= cap);
  size_t pre = ld_varint_encode(body, out);
  ld__identify__identify__pack(msg, out + pre);
  return pre + body;
}

static ProtobufCBinaryData bin(const void *p, size_t n) {
  ProtobufCBinaryData b = {n, (uint8_t *)p};
  return b;
}

static ProtobufCBinaryData text(const char *s) {
  return bin(s, strlen(s));
}

static void decodes_digest_vector(void **state) {
  (void)state;
  uint8_t msg[200];
  size_t len = unhex(VECTOR_HEX, msg, sizeof msg);
  assert_int_equal(len, 142); /* 2-byte prefix, 140-byte body */
  ld_pubkey_t pub;
  ld_peerid_t remote;
  load_key(ED25519_PUB, &pub, &remote);
  ld_identify_info_t info;
  ld_identify_info_init(&info);
  assert_int_equal(ld_identify_decode(msg, len, &remote, 0, &info), 142);

  assert_true(ld_peerid_equal(&info.peer_id, &remote));
  assert_true(info.has_public_key);
  assert_true(ld_pubkey_equal(&info.public_key, &pub));
  assert_true(info.has_agent_version);
  assert_string_equal(info.agent_version, "example/0.1");
  assert_true(info.has_protocol_version);
  assert_string_equal(info.protocol_version, "ipfs/0.1.0");
  assert_true(info.protocols_present);
  assert_int_equal(info.n_protocols, 3);
  for (size_t i = 0; i < 3; i++)
    assert_string_equal(info.protocols[i], vector_protocols[i]);
  assert_true(ld_identify_info_has_protocol(&info, "/ipfs/ping/1.0.0"));
  assert_false(ld_identify_info_has_protocol(&info, "/ipfs/ping/1.0"));

  ld_multiaddr_t listen, observed;
  parse_addr("/ip4/127.0.0.1/tcp/60000", &listen);
  parse_addr("/ip4/127.0.0.1/tcp/55000", &observed);
  assert_int_equal(info.n_listen_addrs, 1);
  assert_true(ld_multiaddr_equal(&info.listen_addrs[0], &listen));
  assert_true(info.has_observed_addr);
  assert_true(ld_multiaddr_equal(&info.observed_addr, &observed));
  ld_identify_info_clear(&info);
}

static void encodes_digest_vector(void **state) {
  (void)state;
  uint8_t expected[200];
  size_t len = unhex(VECTOR_HEX, expected, sizeof expected);
  ld_pubkey_t pub;
  ld_peerid_t id;
  load_key(ED25519_PUB, &pub, &id);
  ld_multiaddr_t listen, observed;
  parse_addr("/ip4/127.0.0.1/tcp/60000", &listen);
  parse_addr("/ip4/127.0.0.1/tcp/55000", &observed);
  ld_identify_local_t local = {
      .public_key = &pub,
      .listen_addrs = &listen,
      .n_listen_addrs = 1,
      .observed_addr = &observed,
      .protocols = vector_protocols,
      .n_protocols = 3,
      .protocol_version = LD_IDENTIFY_PROTOCOL_VERSION,
      .agent_version = "example/0.1",
  };
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_buf_append(&out, "x", 1), 0); /* appends after existing bytes */
  assert_int_equal(ld_identify_encode(&local, &out), 1);
  assert_int_equal(out.len, 1 + len);
  assert_memory_equal(out.data + 1, expected, len);

  /* A /p2p suffix on a listen address is not sent. */
  char text[LD_MULTIADDR_TEXT_MAX], idtext[LD_PEERID_TEXT_MAX];
  assert_true(ld_peerid_to_text(&id, idtext, sizeof idtext) > 0);
  snprintf(text, sizeof text, "/ip4/127.0.0.1/tcp/60000/p2p/%s", idtext);
  parse_addr(text, &listen);
  ld_buf_reset(&out);
  assert_int_equal(ld_identify_encode(&local, &out), 1);
  assert_int_equal(out.len, len);
  assert_memory_equal(out.data, expected, len);
  ld_buf_clear(&out);
}

static void rejects_key_of_another_peer(void **state) {
  (void)state;
  uint8_t msg[200];
  size_t len = unhex(VECTOR_HEX, msg, sizeof msg);
  ld_pubkey_t other;
  ld_peerid_t other_id;
  load_key(SECP_PUB, &other, &other_id);
  ld_identify_info_t info;
  ld_identify_info_init(&info);
  assert_int_equal(ld_identify_decode(msg, len, &other_id, 0, &info), LD_ERR_PEER_ID_MISMATCH);
  assert_int_equal(ld_identify_decode(msg, len, &other_id, LD_IDENTIFY_KEY_OPTIONAL, &info),
                   LD_ERR_PEER_ID_MISMATCH);
  assert_false(info.has_public_key);
  assert_int_equal(info.n_protocols, 0);
  assert_null(info.protocols);

  /* Without an expected peer the key decides. */
  ld_pubkey_t pub;
  ld_peerid_t id;
  load_key(ED25519_PUB, &pub, &id);
  assert_int_equal(ld_identify_decode(msg, len, NULL, 0, &info), 142);
  assert_true(ld_peerid_equal(&info.peer_id, &id));
  ld_identify_info_clear(&info);
}

static void requires_public_key(void **state) {
  (void)state;
  ld_pubkey_t pub;
  ld_peerid_t id;
  load_key(ED25519_PUB, &pub, &id);
  pb_identify_t m = LD__IDENTIFY__IDENTIFY__INIT;
  ProtobufCBinaryData protos[] = {text("/ipfs/id/1.0.0")};
  m.n_protocols = 1;
  m.protocols = protos;
  m.has_agentversion = 1;
  m.agentversion = text("pushed/1");
  uint8_t buf[256];
  size_t len = pack_framed(&m, buf, sizeof buf);
  ld_identify_info_t info;
  ld_identify_info_init(&info);
  assert_int_equal(ld_identify_decode(buf, len, &id, 0, &info), LD_ERR_BAD_KEY);
  /* A push may leave it out. */
  assert_int_equal(ld_identify_decode(buf, len, &id, LD_IDENTIFY_KEY_OPTIONAL, &info), (int)len);
  assert_false(info.has_public_key);
  assert_true(ld_peerid_equal(&info.peer_id, &id));
  assert_string_equal(info.agent_version, "pushed/1");
  assert_false(info.has_protocol_version);
  assert_false(info.listen_addrs_present);

  /* A key that does not decode. */
  uint8_t junk[] = {0x08, 0x01, 0x12, 0x03, 1, 2, 3};
  m.has_publickey = 1;
  m.publickey = bin(junk, sizeof junk);
  len = pack_framed(&m, buf, sizeof buf);
  assert_int_equal(ld_identify_decode(buf, len, &id, 0, &info), LD_ERR_BAD_KEY);
  assert_int_equal(ld_identify_decode(buf, len, &id, LD_IDENTIFY_KEY_OPTIONAL, &info),
                   LD_ERR_BAD_KEY);
  ld_identify_info_clear(&info);
}

static void rejects_bad_framing(void **state) {
  (void)state;
  uint8_t msg[200];
  size_t len = unhex(VECTOR_HEX, msg, sizeof msg);
  ld_peerid_t id;
  ld_pubkey_t pub;
  load_key(ED25519_PUB, &pub, &id);
  ld_identify_info_t info;
  ld_identify_info_init(&info);
  for (size_t cut = 0; cut < len; cut++)
    assert_int_equal(ld_identify_decode(msg, cut, &id, 0, &info), LD_ERR_TRUNCATED);

  uint8_t big[LD_IDENTIFY_MAX_MSG + 16] = {0};
  size_t pre = ld_varint_encode(LD_IDENTIFY_MAX_MSG + 1, big);
  assert_int_equal(ld_identify_decode(big, pre + LD_IDENTIFY_MAX_MSG + 1, &id, 0, &info),
                   LD_ERR_TOO_LARGE);
  const uint8_t nonminimal[] = {0x81, 0x00};
  assert_int_equal(ld_identify_decode(nonminimal, 2, &id, 0, &info), LD_ERR_VARINT_NONMINIMAL);
  /* A field with wire type 7 is not protobuf. */
  const uint8_t bad_body[] = {0x02, 0x0f, 0x00};
  assert_int_equal(ld_identify_decode(bad_body, 3, &id, 0, &info), LD_ERR_BAD_PROTOBUF);
  /* Trailing bytes after the first message are not consumed. */
  uint8_t two[300];
  memcpy(two, msg, len);
  memcpy(two + len, msg, len);
  assert_int_equal(ld_identify_decode(two, 2 * len, &id, 0, &info), (int)len);
  ld_identify_info_clear(&info);
}

static void skips_unknown_fields_and_signed_record(void **state) {
  (void)state;
  uint8_t msg[300];
  size_t len = unhex(VECTOR_HEX, msg, sizeof msg);
  ld_peerid_t id;
  ld_pubkey_t pub;
  load_key(ED25519_PUB, &pub, &id);
  /* body ‖ field 8 (bytes) ‖ field 7 (varint) ‖ field 100 (fixed32) */
  const uint8_t extra[] = {0x42, 0x03, 0xaa, 0xbb, 0xcc, 0x38, 0x96,
                           0x01, 0xa5, 0x06, 0x01, 0x02, 0x03, 0x04};
  uint8_t framed[320];
  size_t body = len - 2 + sizeof extra;
  size_t pre = ld_varint_encode(body, framed);
  memcpy(framed + pre, msg + 2, len - 2);
  memcpy(framed + pre + len - 2, extra, sizeof extra);
  ld_identify_info_t info;
  ld_identify_info_init(&info);
  assert_int_equal(ld_identify_decode(framed, pre + body, &id, 0, &info), (int)(pre + body));
  assert_int_equal(info.n_protocols, 3);
  assert_string_equal(info.agent_version, "example/0.1");
  ld_identify_info_clear(&info);
}

static void caps_counts_and_strings(void **state) {
  (void)state;
  ld_pubkey_t pub;
  ld_peerid_t id;
  load_key(ED25519_PUB, &pub, &id);
  pb_identify_t m = LD__IDENTIFY__IDENTIFY__INIT;
  m.has_publickey = 1;
  m.publickey = bin(pub.proto, pub.proto_len);

  enum { NP = LD_IDENTIFY_MAX_PROTOCOLS + 20 };
  static char names[NP][16];
  ProtobufCBinaryData protos[NP + 4];
  size_t np = 0;
  protos[np++] = bin("/bad\xc3\x28utf8", 10); /* invalid UTF-8 */
  protos[np++] = bin("/with\0nul", 9);        /* NUL inside */
  protos[np++] = text("/line\nbreak");        /* control character */
  protos[np++] = bin("", 0);                  /* empty */
  for (size_t i = 0; i < NP; i++) {
    snprintf(names[i], sizeof names[i], "/p/%zu", i);
    protos[np++] = text(names[i]);
  }
  m.n_protocols = np;
  m.protocols = protos;

  char long_agent[LD_IDENTIFY_MAX_STRING + 40];
  memset(long_agent, 'a', sizeof long_agent - 1);
  long_agent[sizeof long_agent - 1] = '\0';
  memcpy(long_agent + LD_IDENTIFY_MAX_STRING - 1, "\xc3\xa9", 2); /* é across the cut */
  m.has_agentversion = 1;
  m.agentversion = text(long_agent);
  m.has_protocolversion = 1;
  m.protocolversion = bin("\xff\xfe", 2);

  enum { NA = LD_IDENTIFY_MAX_ADDRS + 5 };
  ld_multiaddr_t ma;
  parse_addr("/ip4/10.0.0.1/tcp/1234", &ma);
  ProtobufCBinaryData addrs[NA];
  const uint8_t junk_addr[] = {0xff, 0xff, 0xff};
  addrs[0] = bin(junk_addr, sizeof junk_addr);
  for (size_t i = 1; i < NA; i++)
    addrs[i] = bin(ma.bytes, ma.len);
  m.n_listenaddrs = NA;
  m.listenaddrs = addrs;
  m.has_observedaddr = 1;
  m.observedaddr = bin(junk_addr, sizeof junk_addr);

  static uint8_t buf[LD_IDENTIFY_MAX_MSG + 16];
  size_t len = pack_framed(&m, buf, sizeof buf);
  ld_identify_info_t info;
  ld_identify_info_init(&info);
  assert_int_equal(ld_identify_decode(buf, len, &id, 0, &info), (int)len);
  assert_int_equal(info.n_protocols, LD_IDENTIFY_MAX_PROTOCOLS); /* invalid ones skipped */
  assert_string_equal(info.protocols[0], "/p/0");
  assert_true(info.has_agent_version);
  assert_int_equal(strlen(info.agent_version), LD_IDENTIFY_MAX_STRING - 1);
  assert_false(info.has_protocol_version);
  assert_int_equal(info.n_listen_addrs, LD_IDENTIFY_MAX_ADDRS); /* junk skipped, rest capped */
  assert_true(ld_multiaddr_equal(&info.listen_addrs[0], &ma));
  assert_false(info.has_observed_addr);
  ld_identify_info_clear(&info);
}

/* 32 DNS addresses of about 200 bytes cannot all fit in 4 KiB. */
static void trims_listen_addrs_to_size_cap(void **state) {
  (void)state;
  ld_pubkey_t pub;
  ld_peerid_t id;
  load_key(SECP_PUB, &pub, &id);
  ld_multiaddr_t addrs[LD_IDENTIFY_MAX_ADDRS + 3];
  char text[300], label[61];
  memset(label, 'x', 60);
  label[60] = '\0';
  for (size_t i = 0; i < LD_IDENTIFY_MAX_ADDRS + 3; i++) {
    snprintf(text, sizeof text, "/dns4/%s.%s.%s.n%02zu.example/tcp/443/wss", label, label, label,
             i);
    parse_addr(text, &addrs[i]);
  }
  ld_identify_local_t local = {
      .public_key = &pub,
      .listen_addrs = addrs,
      .n_listen_addrs = LD_IDENTIFY_MAX_ADDRS + 3,
      .protocols = vector_protocols,
      .n_protocols = 3,
      .protocol_version = LD_IDENTIFY_PROTOCOL_VERSION,
      .agent_version = LD_IDENTIFY_AGENT_VERSION,
  };
  ld_buf_t out;
  ld_buf_init(&out);
  int kept = ld_identify_encode(&local, &out);
  assert_true(kept > 0 && kept < LD_IDENTIFY_MAX_ADDRS);
  assert_true(out.len <= LD_IDENTIFY_MAX_OWN_MSG);
  const ld_multiaddr_t *next = &addrs[kept]; /* one more would not fit */
  assert_true(out.len + 1 + ld_varint_len(next->len) + next->len > LD_IDENTIFY_MAX_OWN_MSG);

  ld_identify_info_t info;
  ld_identify_info_init(&info);
  assert_int_equal(ld_identify_decode(out.data, out.len, &id, 0, &info), (int)out.len);
  assert_int_equal(info.n_listen_addrs, (size_t)kept);
  for (int i = 0; i < kept; i++)
    assert_true(ld_multiaddr_equal(&info.listen_addrs[i], &addrs[i]));
  assert_string_equal(info.agent_version, LD_IDENTIFY_AGENT_VERSION);
  assert_false(info.has_observed_addr);
  ld_identify_info_clear(&info);

  /* Protocols alone beyond the cap: refused, buffer untouched. */
  static char names[200][32];
  const char *many[200];
  for (size_t i = 0; i < 200; i++) {
    snprintf(names[i], sizeof names[i], "/some/protocol/%zu/1.0.0", i);
    many[i] = names[i];
  }
  local.protocols = many;
  local.n_protocols = 200;
  size_t before = out.len;
  assert_int_equal(ld_identify_encode(&local, &out), LD_ERR_TOO_LARGE);
  assert_int_equal(out.len, before);

  local.public_key = NULL;
  assert_int_equal(ld_identify_encode(&local, &out), LD_ERR_INVALID_ARG);
  ld_buf_clear(&out);
}

static void merge_keeps_absent_fields(void **state) {
  (void)state;
  uint8_t msg[200];
  size_t len = unhex(VECTOR_HEX, msg, sizeof msg);
  ld_pubkey_t pub;
  ld_peerid_t id;
  load_key(ED25519_PUB, &pub, &id);
  ld_identify_info_t base, push, copy;
  ld_identify_info_init(&base);
  ld_identify_info_init(&push);
  ld_identify_info_init(&copy);
  assert_int_equal(ld_identify_decode(msg, len, &id, 0, &base), (int)len);

  pb_identify_t m = LD__IDENTIFY__IDENTIFY__INIT;
  ProtobufCBinaryData protos[] = {text("/ipfs/id/push/1.0.0"), text("/vac/waku/store/2.0.0")};
  m.n_protocols = 2;
  m.protocols = protos;
  uint8_t buf[128];
  size_t n = pack_framed(&m, buf, sizeof buf);
  assert_int_equal(ld_identify_decode(buf, n, &id, LD_IDENTIFY_KEY_OPTIONAL, &push), (int)n);

  assert_int_equal(ld_identify_info_copy(&copy, &base), 0);
  assert_int_equal(ld_identify_info_merge(&base, &push), 0);
  assert_int_equal(base.n_protocols, 2);
  assert_string_equal(base.protocols[1], "/vac/waku/store/2.0.0");
  assert_true(base.has_public_key);
  assert_string_equal(base.agent_version, "example/0.1");
  assert_int_equal(base.n_listen_addrs, 1);
  assert_true(base.has_observed_addr);

  /* The copy is independent of the original. */
  assert_int_equal(copy.n_protocols, 3);
  assert_string_equal(copy.protocols[2], "/vac/waku/relay/2.0.0");
  assert_true(ld_multiaddr_equal(&copy.listen_addrs[0], &base.listen_addrs[0]));
  ld_identify_info_clear(&base);
  ld_identify_info_clear(&push);
  ld_identify_info_clear(&copy);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decodes_digest_vector),
      cmocka_unit_test(encodes_digest_vector),
      cmocka_unit_test(rejects_key_of_another_peer),
      cmocka_unit_test(requires_public_key),
      cmocka_unit_test(rejects_bad_framing),
      cmocka_unit_test(skips_unknown_fields_and_signed_record),
      cmocka_unit_test(caps_counts_and_strings),
      cmocka_unit_test(trims_listen_addrs_to_size_cap),
      cmocka_unit_test(merge_keeps_absent_fields),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
