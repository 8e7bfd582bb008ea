#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/ping.h"

static void fill(uint8_t *p, size_t n, uint8_t seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)(seed + i * 7);
}

static void echo_waits_for_whole_pings(void **state) {
  (void)state;
  uint8_t in[100];
  fill(in, sizeof in, 3);
  ld_ping_echo_t e = {0};
  ld_buf_t out;
  ld_buf_init(&out);
  /* 31 bytes: nothing yet; 1 more completes the first ping. */
  assert_int_equal(ld_ping_echo_feed(&e, in, 31, &out), 0);
  assert_int_equal(out.len, 0);
  assert_int_equal(ld_ping_echo_feed(&e, in + 31, 1, &out), 32);
  assert_memory_equal(out.data, in, 32);
  /* 68 bytes at once: two more pings, 4 bytes left over. */
  assert_int_equal(ld_ping_echo_feed(&e, in + 32, 68, &out), 64);
  assert_int_equal(out.len, 96);
  assert_memory_equal(out.data, in, 96);
  assert_int_equal(e.fill, 4);
  assert_int_equal(ld_ping_echo_feed(&e, in, 0, &out), 0);
  ld_buf_clear(&out);
}

static void echo_byte_by_byte(void **state) {
  (void)state;
  uint8_t in[64];
  fill(in, sizeof in, 200);
  ld_ping_echo_t e = {0};
  ld_buf_t out;
  ld_buf_init(&out);
  int total = 0;
  for (size_t i = 0; i < sizeof in; i++)
    total += ld_ping_echo_feed(&e, in + i, 1, &out);
  assert_int_equal(total, 64);
  assert_memory_equal(out.data, in, 64);
  ld_buf_clear(&out);
}

static void round_accepts_split_echo(void **state) {
  (void)state;
  uint8_t payload[LD_PING_SIZE];
  fill(payload, sizeof payload, 1);
  ld_ping_round_t r;
  ld_ping_round_start(&r, payload);
  size_t used = 0;
  assert_int_equal(ld_ping_round_feed(&r, payload, 10, &used), 0);
  assert_int_equal(used, 10);
  /* More bytes than the round needs: only the first 22 are taken. */
  uint8_t rest[40];
  memcpy(rest, payload + 10, 22);
  memset(rest + 22, 0xee, sizeof rest - 22);
  assert_int_equal(ld_ping_round_feed(&r, rest, sizeof rest, &used), 1);
  assert_int_equal(used, 22);
}

static void round_detects_mismatch_early(void **state) {
  (void)state;
  uint8_t payload[LD_PING_SIZE], wrong[LD_PING_SIZE];
  fill(payload, sizeof payload, 9);
  memcpy(wrong, payload, sizeof wrong);
  wrong[5] ^= 0x01;
  ld_ping_round_t r;
  ld_ping_round_start(&r, payload);
  size_t used;
  assert_int_equal(ld_ping_round_feed(&r, wrong, 5, &used), 0);
  assert_int_equal(ld_ping_round_feed(&r, wrong + 5, 1, &used), LD_ERR_PROTOCOL);

  ld_ping_round_start(&r, payload);
  wrong[5] ^= 0x01;
  wrong[31] ^= 0x80;
  assert_int_equal(ld_ping_round_feed(&r, wrong, sizeof wrong, &used), LD_ERR_PROTOCOL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(echo_waits_for_whole_pings),
      cmocka_unit_test(echo_byte_by_byte),
      cmocka_unit_test(round_accepts_split_echo),
      cmocka_unit_test(round_detects_mismatch_early),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
