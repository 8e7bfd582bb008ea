/* Retention policy values as --store-message-retention-policy takes them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "waku/archive/archive.h"

#define MIB (1024ull * 1024)
#define GIB (1024ull * MIB)

static int parse(const char *text, ld_archive_policy_t *out, char *why) {
  memset(out, 0, sizeof(ld_archive_policy_t) * LD_ARCHIVE_MAX_POLICIES);
  return ld_archive_policy_parse(text, out, LD_ARCHIVE_MAX_POLICIES, why, 128);
}

static void parses_each_kind(void **state) {
  (void)state;
  ld_archive_policy_t p[LD_ARCHIVE_MAX_POLICIES];
  char why[128];
  assert_int_equal(parse("time:172800", p, why), 1);
  assert_int_equal(p[0].kind, LD_ARCHIVE_POLICY_TIME);
  assert_true(p[0].value == 172800);
  assert_int_equal(parse("capacity:25000", p, why), 1);
  assert_int_equal(p[0].kind, LD_ARCHIVE_POLICY_CAPACITY);
  assert_true(p[0].value == 25000);
  assert_int_equal(parse("size:30gb", p, why), 1);
  assert_int_equal(p[0].kind, LD_ARCHIVE_POLICY_SIZE);
  assert_true(p[0].value == 30 * GIB);
  assert_int_equal(parse("size:512mb", p, why), 1);
  assert_true(p[0].value == 512 * MIB);
}

static void default_policy_is_two_days(void **state) {
  (void)state;
  ld_archive_policy_t p[LD_ARCHIVE_MAX_POLICIES];
  char why[128];
  assert_int_equal(parse(LD_ARCHIVE_DEFAULT_RETENTION, p, why), 1);
  assert_int_equal(p[0].kind, LD_ARCHIVE_POLICY_TIME);
  assert_true(p[0].value == 2 * 24 * 3600);
}

static void sizes_take_fractions_and_any_case(void **state) {
  (void)state;
  ld_archive_policy_t p[LD_ARCHIVE_MAX_POLICIES];
  char why[128];
  assert_int_equal(parse("size:1.5GB", p, why), 1);
  assert_true(p[0].value == GIB + GIB / 2);
  assert_int_equal(parse("SIZE:0.5Mb", p, why), 1);
  assert_true(p[0].value == MIB / 2);
  assert_int_equal(parse("size:.25gb", p, why), 1);
  assert_true(p[0].value == GIB / 4);
  assert_int_equal(parse("Time:60", p, why), 1);
  assert_int_equal(p[0].kind, LD_ARCHIVE_POLICY_TIME);
}

static void several_at_once(void **state) {
  (void)state;
  ld_archive_policy_t p[LD_ARCHIVE_MAX_POLICIES];
  char why[128];
  assert_int_equal(parse("time:3600;capacity:100, size:1gb", p, why), 3);
  assert_int_equal(p[0].kind, LD_ARCHIVE_POLICY_TIME);
  assert_true(p[0].value == 3600);
  assert_int_equal(p[1].kind, LD_ARCHIVE_POLICY_CAPACITY);
  assert_true(p[1].value == 100);
  assert_int_equal(p[2].kind, LD_ARCHIVE_POLICY_SIZE);
  assert_true(p[2].value == GIB);
  assert_int_equal(parse(" time:10 ; ", p, why), 1); /* blanks and a trailing separator */
  assert_int_equal(parse("time:1;time:2;time:3;time:4;time:5", p, why), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(why, "more than"));
  /* out[] smaller than the list */
  assert_int_equal(ld_archive_policy_parse("time:1,time:2", p, 1, NULL, 0), LD_ERR_INVALID_ARG);
}

static void none_and_empty_mean_no_policy(void **state) {
  (void)state;
  ld_archive_policy_t p[LD_ARCHIVE_MAX_POLICIES];
  char why[128];
  assert_int_equal(parse("", p, why), 0);
  assert_int_equal(parse("none", p, why), 0);
  assert_int_equal(parse("  NONE ", p, why), 0);
  assert_int_equal(parse(";", p, why), LD_ERR_INVALID_ARG);
}

static void rejects_malformed_values(void **state) {
  (void)state;
  ld_archive_policy_t p[LD_ARCHIVE_MAX_POLICIES];
  char why[128];
  static const char *const bad[] = {
      "time",
      "time:",
      "time:abc",
      "time:1.5",
      "time:-1",
      "time:0",
      "capacity:0",
      "capacity:1e3",
      "capacity:10mb",
      "size:10",
      "size:10kb",
      "size:mb",
      "size:1.2.3gb",
      "size:0mb",
      "size:0.0000001mb",
      "bytes:10",
      ":10",
      "time:10;x:1",
      "time 10",
      "size:-1gb",
      "time:99999999999999999999",
      "capacity:18446744073709551616",
      "time:9223372037",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    why[0] = 0;
    int rc = parse(bad[i], p, why);
    if (rc != LD_ERR_INVALID_ARG)
      fail_msg("\"%s\" parsed (%d)", bad[i], rc);
    assert_true(why[0] != 0);
  }
  assert_int_equal(ld_archive_policy_parse(NULL, p, 4, why, sizeof why), LD_ERR_INVALID_ARG);
  /* the largest time that fits in nanoseconds */
  assert_int_equal(parse("time:9223372036", p, why), 1);
}

static void reason_is_optional_and_truncated(void **state) {
  (void)state;
  ld_archive_policy_t p[LD_ARCHIVE_MAX_POLICIES];
  assert_int_equal(ld_archive_policy_parse("bogus:1", p, 4, NULL, 0), LD_ERR_INVALID_ARG);
  char tiny[8];
  memset(tiny, 'x', sizeof tiny);
  assert_int_equal(ld_archive_policy_parse("bogus:1", p, 4, tiny, sizeof tiny), LD_ERR_INVALID_ARG);
  assert_int_equal(tiny[7], 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parses_each_kind),
      cmocka_unit_test(default_policy_is_two_days),
      cmocka_unit_test(sizes_take_fractions_and_any_case),
      cmocka_unit_test(several_at_once),
      cmocka_unit_test(none_and_empty_mean_no_policy),
      cmocka_unit_test(rejects_malformed_values),
      cmocka_unit_test(reason_is_optional_and_truncated),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
