#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/hex.h"
#include "p2p/multiaddr.h"

typedef struct {
  const char *text;
  const char *hex;
} vector_t;

static const vector_t vectors[] = {
    /* multiformats/multiaddr multiaddr.feature and go-multiaddr */
    {"/ip4/192.0.2.42/tcp/443", "04c000022a0601bb"},
    {"/ip4/127.0.0.1/udp/1234", "047f000001910204d2"},
    {"/ip4/127.0.0.1/tcp/4321", "047f0000010610e1"},
    {"/ip4/127.0.0.1/udp/1234/ip4/127.0.0.1/tcp/4321", "047f000001910204d2047f0000010610e1"},
    /* checked with js @multiformats/multiaddr 13 */
    {"/ip4/127.0.0.1/tcp/60000", "047f00000106ea60"},
    {"/ip6/::1/tcp/60000", "290000000000000000000000000000000106ea60"},
    {"/ip6/2001:db8::1/udp/4001/quic-v1", "2920010db800000000000000000000000191020fa1cd03"},
    {"/ip4/1.2.3.4/udp/4001/quic-v1", "040102030491020fa1cd03"},
    {"/dns4/example.com/tcp/443/wss", "360b6578616d706c652e636f6d0601bbde03"},
    {"/dns4/example.com/tcp/443/tls/ws", "360b6578616d706c652e636f6d0601bbc003dd03"},
    {"/dns/example.com/tcp/8000/ws", "350b6578616d706c652e636f6d061f40dd03"},
    {"/dns6/example.com/tcp/60000", "370b6578616d706c652e636f6d06ea60"},
    {"/dnsaddr/bootstrap.libp2p.io", "3813626f6f7473747261702e6c69627032702e696f"},
    {"/ip4/127.0.0.1/tcp/60000/p2p/12D3KooWBtg3aaRMjxwedh83aGiUkwSxDwUZkzuJcfaqUmo7R3pq",
     "047f00000106ea60a503260024080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d47"
     "4fce27e"},
    {"/ip4/1.2.3.4/tcp/4001/p2p/QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N/p2p-circuit/p2p/"
     "16Uiu2HAmLhLvBoYaoZfaMUKuibM6ac163GwKY74c5kiSLg5KvLpY",
     "0401020304060fa1a5032212209dff3b17d74cf4d38a50d8b6383e92d181a10395a5e73a726dcccbd21bf6f0b9a2"
     "02a50327002508021221037777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca99"},
    /* other protocols of the table, with their value forms */
    {"/ip6/::ffff:1.2.3.4/tcp/1", "2900000000000000000000ffff010203040600 01"},
    {"/ip6/::102:304/tcp/1", "29000000000000000000000000010203040600 01"},
    {"/ip6zone/eth0/ip6/fe80::1/udp/9", "2a0465746830 29fe800000000000000000000000000001 91020009"},
    {"/ip4/10.0.0.0/ipcidr/8", "040a000000 2b08"},
    {"/dns4/example.com/tcp/443/tls/sni/example.com/http", "360b6578616d706c652e636f6d 0601bb c003"
                                                           "c1030b6578616d706c652e636f6d e003"},
    {"/ip4/1.2.3.4/tcp/443/https", "0401020304 0601bb bb03"},
    {"/ip4/1.2.3.4/tcp/1/noise", "0401020304 060001 c603"},
    {"/ip4/1.2.3.4/udp/1/quic", "0401020304 91020001 cc03"},
    {"/ip4/1.2.3.4/udp/1/webrtc-direct", "0401020304 91020001 9802"},
    {"/ip4/1.2.3.4/udp/1/quic-v1/webtransport/certhash/"
     "uEiAAAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHw",
     "0401020304 91020001 cd03 d103 d20322"
     "1220000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"},
    {"/p2p/QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N/p2p-circuit/webrtc",
     "a5032212209dff3b17d74cf4d38a50d8b6383e92d181a10395a5e73a726dcccbd21bf6f0b9 a202 9902"},
    {"/unix/tmp/node.sock", "9003 0e 2f746d702f6e6f64652e736f636b"},
    {"/ip4/0.0.0.0/tcp/0", "0400000000 060000"},
    {"/ip4/255.255.255.255/tcp/65535", "04ffffffff 06ffff"},
};

typedef struct {
  uint8_t b[LD_MULTIADDR_MAX + 16];
  size_t n;
} bytes_t;

/* Hex with optional spaces for readability. */
static bytes_t hex(const char *text) {
  char compact[2 * (LD_MULTIADDR_MAX + 16) + 1];
  size_t j = 0;
  for (size_t i = 0; text[i] != '\0'; i++)
    if (text[i] != ' ')
      compact[j++] = text[i];
  bytes_t out;
  assert_int_equal(ld_hex_decode(compact, j, out.b, sizeof out.b, &out.n), 0);
  return out;
}

static void parses_text_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    ld_multiaddr_t ma;
    bytes_t want = hex(vectors[i].hex);
    assert_int_equal(ld_multiaddr_parse(&ma, vectors[i].text), 0);
    assert_int_equal(ma.len, want.n);
    assert_memory_equal(ma.bytes, want.b, want.n);
  }
}

static void prints_binary_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    ld_multiaddr_t ma;
    char text[LD_MULTIADDR_TEXT_MAX];
    bytes_t b = hex(vectors[i].hex);
    assert_int_equal(ld_multiaddr_from_bytes(&ma, b.b, b.n), 0);
    assert_int_equal(ld_multiaddr_to_text(&ma, text, sizeof text), strlen(vectors[i].text));
    assert_string_equal(text, vectors[i].text);
  }
}

static void rejects_invalid_text(void **state) {
  (void)state;
  static const char *bad[] = {
      "/ip4",
      "/ip4/::1",
      "/tcp/65536",
      "/ip4/127.0.0.1/quic-v1/1234",
      "/ip4/127.0.0.1/p2p",
      "/",
      "",
      "/p2p/QmxoHT6iViN5xAjoz1VZ553cL31U9F94ht3QvWR1FrEbZY",
      "//",
      "ip4/1.2.3.4",
      "/ip4/1.2.3.4//",
      "/ip4//tcp/1",
      "/ip4/1.2.3",
      "/ip4/01.2.3.4",
      "/ip4/1.2.3.4.5",
      "/ip4/256.1.1.1",
      "/ip6/1.2.3.4",
      "/ip6/::1%eth0",
      "/ip6/:::",
      "/tcp/-1",
      "/tcp/+1",
      "/tcp/",
      "/tcp/1x",
      "/udp/99999999999999999999",
      "/ipcidr/256",
      "/dns4/",
      "/dns4//tcp/1",
      "/dns/a\tb",
      "/sni",
      "/unknown/1",
      "/IP4/1.2.3.4",
      "/ws/1",
      "/quic/1",
      "/p2p/bafkreie5745rpv2m6tjyuugywy4d5ewrqgqqhfnf445he3omzpjbx5xqxe",
      "/p2p/QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N0",
      "/certhash/uEiAAAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0e",
      "/certhash/xyz",
      "/certhash/",
      "/unix",
      "/unix/",
      "/unix//",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ld_multiaddr_t ma;
    if (ld_multiaddr_parse(&ma, bad[i]) != LD_ERR_BAD_MULTIADDR)
      fail_msg("accepted %s", bad[i]);
  }
}

static void rejects_invalid_binary(void **state) {
  (void)state;
  static const char *bad[] = {
      "a503221221c05877cbae039d70a5e600ea02c6f9f2942439285c9e344e26f8d280c850fad6",
      "04c00002",              /* truncated ip4 */
      "04c000022a06",          /* truncated port */
      "ff7f",                  /* unknown code */
      "3700",                  /* empty dns name */
      "35032f6162",            /* '/' in a dns name */
      "3503610062",            /* NUL byte in a dns name */
      "3505616263",            /* length past the end */
      "8000",                  /* non-minimal code */
      "0401020304 d203021205", /* certhash digest shorter than declared */
      "9003022f61 060001",     /* unix path followed by another component */
      "9003022f2f",            /* unix path ending in '/' */
      "90030161",              /* unix path without a leading '/' */
      "a50303000102",          /* p2p value that is not a peer ID */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ld_multiaddr_t ma;
    bytes_t b = hex(bad[i]);
    if (ld_multiaddr_from_bytes(&ma, b.b, b.n) != LD_ERR_BAD_MULTIADDR)
      fail_msg("accepted %s", bad[i]);
  }
  ld_multiaddr_t ma;
  assert_int_equal(ld_multiaddr_from_bytes(&ma, NULL, 0), LD_ERR_BAD_MULTIADDR);
  uint8_t big[LD_MULTIADDR_MAX + 2];
  for (size_t i = 0; i + 1 < sizeof big; i += 2) {
    big[i] = 0xdd; /* ws */
    big[i + 1] = 0x03;
  }
  assert_int_equal(ld_multiaddr_from_bytes(&ma, big, LD_MULTIADDR_MAX), 0);
  assert_int_equal(ld_multiaddr_from_bytes(&ma, big, sizeof big), LD_ERR_BAD_MULTIADDR);
}

static void text_is_normalised(void **state) {
  (void)state;
  static const struct {
    const char *in;
    const char *out;
  } cases[] = {
      {"/ip4/127.0.0.1/tcp/1234/", "/ip4/127.0.0.1/tcp/1234"},
      {"/ipfs/QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N",
       "/p2p/QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N"},
      {"/p2p/bafzbeie5745rpv2m6tjyuugywy4d5ewrqgqqhfnf445he3omzpjbx5xqxe",
       "/p2p/QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N"},
      {"/ip4/1.2.3.4/tcp/00080", "/ip4/1.2.3.4/tcp/80"},
      {"/ip6/0:0:0:0:0:0:0:1/tcp/1", "/ip6/::1/tcp/1"},
      {"/ip6/2001:DB8:0:0:1:0:0:1/tcp/1", "/ip6/2001:db8::1:0:0:1/tcp/1"},
      {"/ip6/::1.2.3.4/tcp/1", "/ip6/::102:304/tcp/1"},
      {"/ip6/::ffff:102:304/tcp/1", "/ip6/::ffff:1.2.3.4/tcp/1"},
      {"/unix/a/b/", "/unix/a/b"},
      {"/certhash/f1220000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
       "/certhash/uEiAAAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHw"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ld_multiaddr_t ma;
    char text[LD_MULTIADDR_TEXT_MAX];
    assert_int_equal(ld_multiaddr_parse(&ma, cases[i].in), 0);
    assert_true(ld_multiaddr_to_text(&ma, text, sizeof text) > 0);
    assert_string_equal(text, cases[i].out);
  }
  ld_multiaddr_t a, b;
  assert_int_equal(ld_multiaddr_parse(&a, "/ipfs/QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N"),
                   0);
  assert_int_equal(
      ld_multiaddr_parse(&b, "/p2p/bafzbeie5745rpv2m6tjyuugywy4d5ewrqgqqhfnf445he3omzpjbx5xqxe"),
      0);
  assert_true(ld_multiaddr_equal(&a, &b));
}

static void iterates_components(void **state) {
  (void)state;
  ld_multiaddr_t ma;
  assert_int_equal(ld_multiaddr_parse(&ma, vectors[14].text), 0);
  static const uint32_t codes[] = {LD_MA_IP4, LD_MA_TCP, LD_MA_P2P, LD_MA_P2P_CIRCUIT, LD_MA_P2P};
  static const size_t lens[] = {4, 2, 34, 0, 39};
  size_t off = 0, n = 0;
  ld_multiaddr_component_t comp;
  while (ld_multiaddr_next(&ma, &off, &comp) == 1) {
    assert_true(n < 5);
    assert_int_equal(comp.code, codes[n]);
    assert_int_equal(comp.value_len, lens[n]);
    n++;
  }
  assert_int_equal(n, 5);
  assert_int_equal(off, ma.len);
  assert_int_equal(ld_multiaddr_next(&ma, &off, &comp), 0);
  off = 0;
  assert_int_equal(ld_multiaddr_next(&ma, &off, &comp), 1);
  const uint8_t ip[] = {1, 2, 3, 4};
  assert_memory_equal(comp.value, ip, 4);
}

static void pushes_components(void **state) {
  (void)state;
  ld_multiaddr_t ma = {0}, want;
  const uint8_t ip[] = {127, 0, 0, 1};
  const uint8_t port[] = {0xea, 0x60};
  assert_int_equal(ld_multiaddr_push(&ma, LD_MA_IP4, ip, 4), 0);
  assert_int_equal(ld_multiaddr_push(&ma, LD_MA_TCP, port, 2), 0);
  bytes_t id = hex("0024080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e");
  assert_int_equal(ld_multiaddr_push(&ma, LD_MA_P2P, id.b, id.n), 0);
  assert_int_equal(ld_multiaddr_parse(&want, vectors[13].text), 0);
  assert_true(ld_multiaddr_equal(&ma, &want));

  size_t len = ma.len;
  assert_int_equal(ld_multiaddr_push(&ma, LD_MA_IP4, ip, 3), LD_ERR_BAD_MULTIADDR);
  assert_int_equal(ld_multiaddr_push(&ma, LD_MA_WS, ip, 1), LD_ERR_BAD_MULTIADDR);
  assert_int_equal(ld_multiaddr_push(&ma, 12345, NULL, 0), LD_ERR_BAD_MULTIADDR);
  assert_int_equal(ld_multiaddr_push(&ma, LD_MA_DNS, NULL, 0), LD_ERR_BAD_MULTIADDR);
  assert_int_equal(ld_multiaddr_push(&ma, LD_MA_P2P, id.b, id.n - 1), LD_ERR_BAD_MULTIADDR);
  assert_int_equal(ma.len, len);

  ld_multiaddr_t full = {0};
  uint8_t name[200];
  memset(name, 'a', sizeof name);
  assert_int_equal(ld_multiaddr_push(&full, LD_MA_DNS, name, sizeof name), 0);
  assert_int_equal(ld_multiaddr_push(&full, LD_MA_DNS, name, sizeof name), 0);
  assert_int_equal(ld_multiaddr_push(&full, LD_MA_DNS, name, sizeof name), LD_ERR_LIMIT);
  assert_int_equal(full.len, 2 * (1 + 2 + sizeof name));

  ld_multiaddr_t unix_ma;
  assert_int_equal(ld_multiaddr_parse(&unix_ma, "/unix/tmp/s"), 0);
  assert_int_equal(ld_multiaddr_push(&unix_ma, LD_MA_WS, NULL, 0), LD_ERR_BAD_MULTIADDR);
}

static void converts_socket_addresses(void **state) {
  (void)state;
  struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(60000)};
  inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
  ld_multiaddr_t ma;
  char text[LD_MULTIADDR_TEXT_MAX];
  assert_int_equal(ld_multiaddr_from_sockaddr(&ma, &sin), 0);
  assert_true(ld_multiaddr_to_text(&ma, text, sizeof text) > 0);
  assert_string_equal(text, "/ip4/127.0.0.1/tcp/60000");

  struct sockaddr_storage ss;
  assert_int_equal(ld_multiaddr_to_sockaddr(&ma, &ss), 0);
  assert_int_equal(ss.ss_family, AF_INET);
  assert_memory_equal(&ss, &sin, sizeof sin);

  struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_port = htons(443)};
  inet_pton(AF_INET6, "2001:db8::1", &sin6.sin6_addr);
  assert_int_equal(ld_multiaddr_from_sockaddr(&ma, &sin6), 0);
  assert_true(ld_multiaddr_to_text(&ma, text, sizeof text) > 0);
  assert_string_equal(text, "/ip6/2001:db8::1/tcp/443");

  assert_int_equal(ld_multiaddr_parse(&ma, "/ip6/2001:db8::1/tcp/443/ws/p2p/"
                                           "12D3KooWBtg3aaRMjxwedh83aGiUkwSxDwUZkzuJcfaqUmo7R3pq"),
                   0);
  assert_int_equal(ld_multiaddr_to_sockaddr(&ma, &ss), 0);
  struct sockaddr_in6 got;
  memcpy(&got, &ss, sizeof got);
  assert_int_equal(got.sin6_family, AF_INET6);
  assert_int_equal(ntohs(got.sin6_port), 443);
  assert_memory_equal(&got.sin6_addr, &sin6.sin6_addr, 16);

  static const char *unsupported[] = {"/dns4/example.com/tcp/443", "/ip4/1.2.3.4/udp/1",
                                      "/ip4/1.2.3.4", "/tcp/1/ip4/1.2.3.4"};
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal(ld_multiaddr_parse(&ma, unsupported[i]), 0);
    assert_int_equal(ld_multiaddr_to_sockaddr(&ma, &ss), LD_ERR_UNSUPPORTED);
  }
  struct sockaddr un = {.sa_family = AF_UNIX};
  assert_int_equal(ld_multiaddr_from_sockaddr(&ma, &un), LD_ERR_UNSUPPORTED);
}

static void splits_trailing_peer_id(void **state) {
  (void)state;
  ld_multiaddr_t ma, base;
  ld_peerid_t id, want;
  assert_int_equal(ld_multiaddr_parse(&ma, vectors[13].text), 0);
  assert_int_equal(ld_peerid_parse(&want, "12D3KooWBtg3aaRMjxwedh83aGiUkwSxDwUZkzuJcfaqUmo7R3pq"),
                   0);
  assert_true(ld_multiaddr_peerid(&ma, &id, false));
  assert_true(ld_peerid_equal(&id, &want));
  assert_int_equal(ma.len, hex(vectors[13].hex).n);
  assert_true(ld_multiaddr_peerid(&ma, NULL, true));
  assert_int_equal(ld_multiaddr_parse(&base, "/ip4/127.0.0.1/tcp/60000"), 0);
  assert_true(ld_multiaddr_equal(&ma, &base));
  assert_false(ld_multiaddr_peerid(&ma, &id, true));
  assert_true(ld_multiaddr_equal(&ma, &base));

  /* relay address: only the last /p2p/ is the destination */
  assert_int_equal(ld_multiaddr_parse(&ma, vectors[14].text), 0);
  assert_int_equal(ld_peerid_parse(&want, "16Uiu2HAmLhLvBoYaoZfaMUKuibM6ac163GwKY74c5kiSLg5KvLpY"),
                   0);
  assert_true(ld_multiaddr_peerid(&ma, &id, true));
  assert_true(ld_peerid_equal(&id, &want));
  char text[LD_MULTIADDR_TEXT_MAX];
  assert_true(ld_multiaddr_to_text(&ma, text, sizeof text) > 0);
  assert_string_equal(
      text, "/ip4/1.2.3.4/tcp/4001/p2p/QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N/p2p-circuit");
}

static void text_output_respects_capacity(void **state) {
  (void)state;
  ld_multiaddr_t ma;
  const char *t = vectors[0].text;
  char text[64];
  assert_int_equal(ld_multiaddr_parse(&ma, t), 0);
  assert_int_equal(ld_multiaddr_to_text(&ma, text, strlen(t) + 1), strlen(t));
  assert_int_equal(ld_multiaddr_to_text(&ma, text, strlen(t)), LD_ERR_LIMIT);
  assert_int_equal(ld_multiaddr_to_text(&ma, text, 1), LD_ERR_LIMIT);

  /* 256 × /webrtc-direct fits the binary cap but not LD_MULTIADDR_TEXT_MAX */
  ld_multiaddr_t wide = {0};
  for (int i = 0; i < LD_MULTIADDR_MAX / 2; i++)
    assert_int_equal(ld_multiaddr_push(&wide, LD_MA_WEBRTC_DIRECT, NULL, 0), 0);
  char big[LD_MULTIADDR_TEXT_MAX];
  assert_int_equal(ld_multiaddr_to_text(&wide, big, sizeof big), LD_ERR_LIMIT);
}

static void equality_compares_bytes(void **state) {
  (void)state;
  ld_multiaddr_t a, b;
  assert_int_equal(ld_multiaddr_parse(&a, "/ip4/1.2.3.4/tcp/1"), 0);
  assert_int_equal(ld_multiaddr_parse(&b, "/ip4/1.2.3.4/tcp/1/"), 0);
  assert_true(ld_multiaddr_equal(&a, &b));
  assert_int_equal(ld_multiaddr_parse(&b, "/ip4/1.2.3.4/tcp/2"), 0);
  assert_false(ld_multiaddr_equal(&a, &b));
  assert_int_equal(ld_multiaddr_parse(&b, "/ip4/1.2.3.4/udp/1"), 0);
  assert_false(ld_multiaddr_equal(&a, &b));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parses_text_vectors),     cmocka_unit_test(prints_binary_vectors),
      cmocka_unit_test(rejects_invalid_text),    cmocka_unit_test(rejects_invalid_binary),
      cmocka_unit_test(text_is_normalised),      cmocka_unit_test(iterates_components),
      cmocka_unit_test(pushes_components),       cmocka_unit_test(converts_socket_addresses),
      cmocka_unit_test(splits_trailing_peer_id), cmocka_unit_test(text_output_respects_capacity),
      cmocka_unit_test(equality_compares_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
