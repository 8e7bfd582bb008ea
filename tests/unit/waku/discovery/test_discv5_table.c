/* The discv5 routing table: distances, buckets and their replacement caches, IP limits,
 * bits-per-hop, the closest-node and distance queries, and its bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "waku/discovery/discv5_table.h"

static uint8_t g_local[32];

/* A node ID at distance d from g_local whose following bits are `tail` (repeated). */
static void id_at(uint8_t out[32], int d, uint8_t tail) {
  memcpy(out, g_local, 32);
  int bit = 256 - d; /* position of the first differing bit, from the most significant */
  out[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
  for (int pos = bit + 1; pos < 256; pos++) {
    int v = tail >> (7 - (pos - bit - 1) % 8) & 1;
    out[pos / 8] = (uint8_t)((out[pos / 8] & ~(0x80 >> (pos % 8))) | (v << (7 - pos % 8)));
  }
}

static ld_discv5_node_t node_at(int d, uint8_t tail, uint8_t ip0, uint8_t ip3) {
  ld_discv5_node_t n;
  memset(&n, 0, sizeof n);
  id_at(n.id, d, tail);
  n.addr.ip_len = 4;
  n.addr.ip[0] = ip0;
  n.addr.ip[1] = 1;
  n.addr.ip[2] = 2;
  n.addr.ip[3] = ip3;
  n.addr.port = 9000;
  n.seq = 1;
  return n;
}

static ld_discv5_table_t *new_table(int bits_per_hop) {
  ld_discv5_table_config_t cfg;
  ld_discv5_table_config_default(&cfg);
  cfg.bits_per_hop = bits_per_hop;
  memset(g_local, 0x5a, sizeof g_local);
  return ld_discv5_table_new(g_local, &cfg);
}

static void distances(void **state) {
  (void)state;
  uint8_t a[32] = {0}, b[32] = {0};
  assert_int_equal(ld_discv5_log_distance(a, b), 0);
  b[31] = 1;
  assert_int_equal(ld_discv5_log_distance(a, b), 1);
  b[31] = 0x80;
  assert_int_equal(ld_discv5_log_distance(a, b), 8);
  b[0] = 0x80;
  assert_int_equal(ld_discv5_log_distance(a, b), 256);
  b[0] = 0x01;
  assert_int_equal(ld_discv5_log_distance(a, b), 249);
  memset(g_local, 0x5a, 32);
  for (int d = 1; d <= 256; d++) {
    uint8_t id[32];
    id_at(id, d, 0xa5);
    assert_int_equal(ld_discv5_log_distance(g_local, id), d);
  }
  uint8_t t[32] = {0}, x[32] = {0}, y[32] = {0};
  x[31] = 1;
  y[31] = 2;
  assert_int_equal(ld_discv5_distance_cmp(t, x, y), -1);
  assert_int_equal(ld_discv5_distance_cmp(t, y, x), 1);
  assert_int_equal(ld_discv5_distance_cmp(t, x, x), 0);
}

static void addresses(void **state) {
  (void)state;
  ld_discv5_addr_t a = {.ip_len = 4, .ip = {127, 0, 0, 1}};
  assert_true(ld_discv5_addr_is_loopback(&a));
  assert_false(ld_discv5_addr_is_public(&a));
  uint8_t site[][4] = {
      {10, 1, 2, 3}, {172, 16, 0, 1}, {172, 31, 255, 1}, {192, 168, 1, 1}, {100, 64, 0, 1}};
  for (size_t i = 0; i < sizeof site / sizeof site[0]; i++) {
    memcpy(a.ip, site[i], 4);
    assert_true(ld_discv5_addr_is_site_local(&a));
    assert_false(ld_discv5_addr_is_public(&a));
  }
  uint8_t pub[][4] = {{1, 2, 3, 4}, {172, 32, 0, 1}, {8, 8, 8, 8}, {100, 128, 0, 1}};
  for (size_t i = 0; i < sizeof pub / sizeof pub[0]; i++) {
    memcpy(a.ip, pub[i], 4);
    assert_true(ld_discv5_addr_is_public(&a));
  }
  uint8_t other[][4] = {{169, 254, 1, 1}, {0, 0, 0, 0}, {224, 0, 0, 1}};
  for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
    memcpy(a.ip, other[i], 4);
    assert_false(ld_discv5_addr_is_public(&a));
  }
  ld_discv5_addr_t six = {.ip_len = 16, .ip = {0}};
  six.ip[15] = 1;
  assert_true(ld_discv5_addr_is_loopback(&six));
  six.ip[0] = 0xfd;
  assert_true(ld_discv5_addr_is_site_local(&six));
  six.ip[0] = 0x20;
  six.ip[1] = 0x01;
  assert_true(ld_discv5_addr_is_public(&six));
  char text[64];
  a.port = 30303;
  memcpy(a.ip, pub[0], 4);
  assert_string_equal(ld_discv5_addr_text(&a, text, sizeof text), "1.2.3.4:30303");
}

/* Full buckets spill into the replacement cache; a failed member is replaced by the latest
 * replacement; bootstrap members stay. */
static void buckets_and_replacements(void **state) {
  (void)state;
  ld_discv5_table_t *t = new_table(1);
  for (int i = 0; i < LD_DISCV5_BUCKET_SIZE; i++) {
    ld_discv5_node_t n = node_at(256, (uint8_t)i, 10, (uint8_t)i);
    n.bootstrap = i == 0;
    assert_int_equal(ld_discv5_table_add(t, &n), LD_DISCV5_ADDED);
  }
  for (int i = 0; i < LD_DISCV5_REPLACEMENTS + 2; i++) {
    ld_discv5_node_t n = node_at(256, (uint8_t)(100 + i), 10, (uint8_t)(100 + i));
    assert_int_equal(ld_discv5_table_add(t, &n), LD_DISCV5_REPLACEMENT);
  }
  assert_int_equal(ld_discv5_table_size(t), LD_DISCV5_BUCKET_SIZE);
  assert_int_equal(ld_discv5_table_replacements(t), LD_DISCV5_REPLACEMENTS);
  /* Replacements are not members. */
  ld_discv5_node_t r = node_at(256, 109, 10, 109);
  assert_null(ld_discv5_table_get(t, r.id));
  /* Member 3 fails: the latest replacement (109) takes its place. */
  ld_discv5_node_t m3 = node_at(256, 3, 10, 3);
  assert_true(ld_discv5_table_replace(t, m3.id));
  assert_null(ld_discv5_table_get(t, m3.id));
  assert_non_null(ld_discv5_table_get(t, r.id));
  assert_int_equal(ld_discv5_table_size(t), LD_DISCV5_BUCKET_SIZE);
  assert_int_equal(ld_discv5_table_replacements(t), LD_DISCV5_REPLACEMENTS - 1);
  /* The oldest replacements (100, 101) were pushed out. */
  ld_discv5_node_t r100 = node_at(256, 100, 10, 100);
  assert_int_equal(ld_discv5_table_remove(t, r100.id), LD_ERR_NOT_FOUND);
  /* The bootstrap member is not replaced. */
  ld_discv5_node_t m0 = node_at(256, 0, 10, 0);
  assert_false(ld_discv5_table_replace(t, m0.id));
  assert_non_null(ld_discv5_table_get(t, m0.id));
  /* Our own ID. */
  ld_discv5_node_t self;
  memset(&self, 0, sizeof self);
  memcpy(self.id, g_local, 32);
  assert_int_equal(ld_discv5_table_add(t, &self), LD_DISCV5_LOCAL);
  ld_discv5_table_free(t);
}

/* Liveness order: new members at the tail, answering members to the head; revalidation picks
 * the tail. A newer record replaces the stored one and keeps `seen`. */
static void seen_order_and_updates(void **state) {
  (void)state;
  ld_discv5_table_t *t = new_table(1);
  for (int i = 0; i < 3; i++) {
    ld_discv5_node_t n = node_at(200, (uint8_t)i, 10, (uint8_t)i);
    assert_int_equal(ld_discv5_table_add(t, &n), LD_DISCV5_ADDED);
  }
  ld_discv5_node_t n0 = node_at(200, 0, 10, 0), n2 = node_at(200, 2, 10, 2);
  assert_memory_equal(ld_discv5_table_revalidation_pick(t, 7)->id, n2.id, 32);
  ld_discv5_table_set_seen(t, n2.id);
  assert_true(ld_discv5_table_get(t, n2.id)->seen);
  ld_discv5_node_t n1 = node_at(200, 1, 10, 1);
  assert_memory_equal(ld_discv5_table_revalidation_pick(t, 7)->id, n1.id, 32);
  ld_discv5_node_t newer = n2;
  newer.seq = 5;
  newer.addr.ip[3] = 77;
  assert_int_equal(ld_discv5_table_add(t, &newer), LD_DISCV5_UPDATED);
  assert_int_equal(ld_discv5_table_get(t, n2.id)->seq, 5);
  assert_int_equal(ld_discv5_table_get(t, n2.id)->addr.ip[3], 77);
  assert_true(ld_discv5_table_get(t, n2.id)->seen);
  newer.seq = 4;
  assert_int_equal(ld_discv5_table_add(t, &newer), LD_DISCV5_EXISTING);
  assert_int_equal(ld_discv5_table_get(t, n2.id)->seq, 5);
  /* Walk order: head first. */
  ld_discv5_node_t *out[4];
  uint16_t d200 = 200;
  assert_int_equal(ld_discv5_table_at_distances(t, &d200, 1, 4, false, out), 3);
  assert_memory_equal(out[0]->id, n2.id, 32);
  assert_memory_equal(out[1]->id, n0.id, 32);
  assert_int_equal(ld_discv5_table_at_distances(t, &d200, 1, 4, true, out), 1);
  ld_discv5_table_free(t);
}

/* nim-eth's defaults: 2 entries of one public IP per bucket, 10 in the table; members and
 * replacements count alike; private addresses are exempt. */
static void ip_limits(void **state) {
  (void)state;
  ld_discv5_table_t *t = new_table(1);
  /* Bucket limit: a third node of 1.1.2.3 at distance 256 is refused. */
  ld_discv5_node_t a = node_at(256, 1, 1, 3), b = node_at(256, 2, 1, 3), c = node_at(256, 3, 1, 3);
  assert_int_equal(ld_discv5_table_add(t, &a), LD_DISCV5_ADDED);
  assert_int_equal(ld_discv5_table_add(t, &b), LD_DISCV5_ADDED);
  assert_int_equal(ld_discv5_table_add(t, &c), LD_DISCV5_IP_LIMIT);
  /* Same IP in other buckets, up to 10 in all. */
  for (int d = 255; d > 251; d--) {
    ld_discv5_node_t x = node_at(d, 1, 1, 3), y = node_at(d, 2, 1, 3);
    assert_int_equal(ld_discv5_table_add(t, &x), LD_DISCV5_ADDED);
    assert_int_equal(ld_discv5_table_add(t, &y), LD_DISCV5_ADDED);
  }
  ld_discv5_node_t eleventh = node_at(240, 1, 1, 3);
  assert_int_equal(ld_discv5_table_add(t, &eleventh), LD_DISCV5_IP_LIMIT);
  /* Replacements count: fill bucket 256 with other IPs, then one more 1.1.2.3 node would be a
   * replacement but is over the bucket limit. */
  for (int i = 0; i < LD_DISCV5_BUCKET_SIZE - 2; i++) {
    ld_discv5_node_t n = node_at(256, (uint8_t)(10 + i), 2, (uint8_t)i);
    assert_int_equal(ld_discv5_table_add(t, &n), LD_DISCV5_ADDED);
  }
  assert_int_equal(ld_discv5_table_add(t, &c), LD_DISCV5_IP_LIMIT);
  /* Removing one frees a slot. */
  assert_int_equal(ld_discv5_table_remove(t, a.id), 0);
  assert_int_equal(ld_discv5_table_add(t, &c), LD_DISCV5_ADDED);
  /* A newer record moving to a full IP is refused and the old one kept. */
  ld_discv5_node_t moved = node_at(256, 200, 2, 99);
  assert_int_equal(ld_discv5_table_add(t, &moved), LD_DISCV5_REPLACEMENT);
  moved.seq = 2;
  memcpy(moved.addr.ip, (uint8_t[]){1, 1, 2, 3}, 4);
  assert_int_equal(ld_discv5_table_add(t, &moved), LD_DISCV5_IP_LIMIT);
  /* Private and loopback addresses are exempt. */
  for (int i = 0; i < 12; i++) {
    ld_discv5_node_t p = node_at(230 - i, 1, 10, 1), l = node_at(230 - i, 2, 127, 1);
    assert_int_equal(ld_discv5_table_add(t, &p), LD_DISCV5_ADDED);
    assert_int_equal(ld_discv5_table_add(t, &l), LD_DISCV5_ADDED);
  }
  ld_discv5_table_free(t);
  /* Other limits. */
  ld_discv5_table_config_t cfg;
  ld_discv5_table_config_default(&cfg);
  cfg.bucket_ip_limit = 1;
  cfg.table_ip_limit = 3;
  t = ld_discv5_table_new(g_local, &cfg);
  assert_int_equal(ld_discv5_table_add(t, &a), LD_DISCV5_ADDED);
  assert_int_equal(ld_discv5_table_add(t, &b), LD_DISCV5_IP_LIMIT);
  ld_discv5_table_free(t);
}

/* bits-per-hop b > 1 splits the far buckets as nim-eth's table does: distance 256 (prefix 1)
 * holds 2^(b−1) sub-buckets of 16. */
static void bits_per_hop(void **state) {
  (void)state;
  for (int b = 1; b <= 5; b++) {
    ld_discv5_table_t *t = new_table(b);
    size_t added = 0;
    for (int i = 0; i < 256; i++) {
      ld_discv5_node_t n = node_at(256, (uint8_t)i, 10, (uint8_t)i);
      if (ld_discv5_table_add(t, &n) == LD_DISCV5_ADDED)
        added++;
    }
    size_t subs = (size_t)1 << (b - 1);
    assert_int_equal(added, subs * LD_DISCV5_BUCKET_SIZE);
    /* Distance 256 - (b - 1) has a prefix of b bits: one bucket. */
    size_t at_d = 0;
    for (int i = 0; i < 256; i++) {
      ld_discv5_node_t n = node_at(256 - (b - 1) - (b > 1 ? 0 : 1), (uint8_t)i, 10, (uint8_t)i);
      if (ld_discv5_table_add(t, &n) == LD_DISCV5_ADDED)
        at_d++;
    }
    assert_int_equal(at_d, LD_DISCV5_BUCKET_SIZE);
    ld_discv5_table_free(t);
  }
  ld_discv5_table_config_t cfg;
  ld_discv5_table_config_default(&cfg);
  cfg.bits_per_hop = 0;
  assert_null(ld_discv5_table_new(g_local, &cfg));
  cfg.bits_per_hop = LD_DISCV5_BITS_PER_HOP_MAX + 1;
  assert_null(ld_discv5_table_new(g_local, &cfg));
}

/* The closest members to a target, checked against sorting them all. */
static void neighbours_are_the_closest(void **state) {
  (void)state;
  ld_discv5_table_t *t = new_table(1);
  ld_discv5_node_t all[300];
  size_t n = 0;
  uint64_t x = 88172645463325252u;
  for (int i = 0; i < 300; i++) {
    ld_discv5_node_t node;
    memset(&node, 0, sizeof node);
    for (int j = 0; j < 32; j++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      node.id[j] = (uint8_t)x;
    }
    node.addr.ip_len = 4;
    node.addr.ip[0] = 10;
    node.seen = i % 3 == 0;
    if (ld_discv5_table_add(t, &node) == LD_DISCV5_ADDED)
      all[n++] = *ld_discv5_table_get(t, node.id);
  }
  assert_int_equal(ld_discv5_table_size(t), n);
  uint8_t target[32];
  memset(target, 0x33, 32);
  ld_discv5_node_t *out[16];
  size_t got = ld_discv5_table_neighbours(t, target, 16, false, out);
  assert_int_equal(got, 16);
  for (size_t i = 1; i < got; i++)
    assert_true(ld_discv5_distance_cmp(target, out[i - 1]->id, out[i]->id) < 0);
  /* No member outside the result is closer than the farthest inside. */
  for (size_t i = 0; i < n; i++) {
    bool inside = false;
    for (size_t j = 0; j < got; j++)
      inside |= memcmp(out[j]->id, all[i].id, 32) == 0;
    if (!inside)
      assert_true(ld_discv5_distance_cmp(target, all[i].id, out[got - 1]->id) > 0);
  }
  got = ld_discv5_table_neighbours(t, target, 16, true, out);
  for (size_t i = 0; i < got; i++)
    assert_true(out[i]->seen);
  /* Random members: distinct. */
  uint64_t rnd = 42;
  ld_discv5_node_t *pick[10];
  assert_int_equal(ld_discv5_table_random(t, &rnd, pick, 10), 10);
  for (int i = 0; i < 10; i++)
    for (int j = i + 1; j < 10; j++)
      assert_true(pick[i] != pick[j]);
  ld_discv5_table_free(t);
}

static void max_nodes_bound(void **state) {
  (void)state;
  ld_discv5_table_config_t cfg;
  ld_discv5_table_config_default(&cfg);
  cfg.max_nodes = 20;
  memset(g_local, 0x5a, 32);
  ld_discv5_table_t *t = ld_discv5_table_new(g_local, &cfg);
  size_t ok = 0, limited = 0;
  for (int d = 256; d > 200; d--) {
    ld_discv5_node_t n = node_at(d, 1, 10, 1);
    int rc = ld_discv5_table_add(t, &n);
    if (rc == LD_DISCV5_ADDED)
      ok++;
    else if (rc == LD_ERR_LIMIT)
      limited++;
  }
  assert_int_equal(ok, 20);
  assert_int_equal(limited, 56 - 20);
  assert_int_equal(ld_discv5_table_size(t) + ld_discv5_table_replacements(t), 20);
  ld_discv5_table_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(distances),
      cmocka_unit_test(addresses),
      cmocka_unit_test(buckets_and_replacements),
      cmocka_unit_test(seen_order_and_updates),
      cmocka_unit_test(ip_limits),
      cmocka_unit_test(bits_per_hop),
      cmocka_unit_test(neighbours_are_the_closest),
      cmocka_unit_test(max_nodes_bound),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
