/* Store at start-up only: the resume range from the last-online time (within 6 h, older, in the
 * future, unknown), the file's text, and writing it through a rename at most every 10 s. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/error.h"
#include "messaging/resume.h"

#define HOUR (3600ull * 1000)
static const uint64_t NOW = 1764600000000ull;

static void the_range_starts_at_last_online_within_six_hours(void **state) {
  (void)state;
  ld_resume_t r;
  ld_resume_init(&r, NULL);
  assert_int_equal(ld_resume_since_ms(&r, NOW), NOW - 6 * HOUR); /* unknown */
  r.last_online_ms = NOW - HOUR;
  assert_int_equal(ld_resume_since_ms(&r, NOW), NOW - HOUR);
  r.last_online_ms = NOW - 7 * HOUR;
  assert_int_equal(ld_resume_since_ms(&r, NOW), NOW - 6 * HOUR);
  r.last_online_ms = NOW + HOUR; /* a clock that went back */
  assert_int_equal(ld_resume_since_ms(&r, NOW), NOW - 6 * HOUR);
}

static void the_text(void **state) {
  (void)state;
  assert_int_equal(ld_resume_parse("1764600000000\n", 14), NOW);
  assert_int_equal(ld_resume_parse("1764600000000", 13), NOW);
  assert_int_equal(ld_resume_parse("", 0), 0);
  assert_int_equal(ld_resume_parse("\n", 1), 0);
  assert_int_equal(ld_resume_parse("12x", 3), 0);
  assert_int_equal(ld_resume_parse("12\n\n", 4), 0);
  assert_int_equal(ld_resume_parse("-12", 3), 0);
  assert_int_equal(ld_resume_parse("18446744073709551615", 20), UINT64_MAX);
  assert_int_equal(ld_resume_parse("18446744073709551616", 20), 0);
}

static void written_at_most_every_ten_seconds(void **state) {
  (void)state;
  char dir[] = "/tmp/ld-resume-XXXXXX";
  assert_non_null(mkdtemp(dir));
  ld_resume_t r;
  ld_resume_init(&r, dir);
  assert_int_equal(r.last_online_ms, 0);
  char path[96];
  snprintf(path, sizeof path, "%s/%s", dir, LD_RESUME_FILE);
  assert_int_equal(ld_resume_touch(&r, NOW, false), 0);
  assert_int_equal(ld_resume_read(path), NOW);
  assert_int_equal(ld_resume_touch(&r, NOW + 5000, false), 0); /* too soon: not written */
  assert_int_equal(ld_resume_read(path), NOW);
  assert_int_equal(ld_resume_touch(&r, NOW + 5000, true), 0);
  assert_int_equal(ld_resume_read(path), NOW + 5000);
  assert_int_equal(ld_resume_touch(&r, NOW + 15000, false), 0);
  assert_int_equal(ld_resume_read(path), NOW + 15000);
  ld_resume_t again;
  ld_resume_init(&again, dir);
  assert_int_equal(again.last_online_ms, NOW + 15000);
  remove(path);
  assert_int_equal(rmdir(dir), 0); /* no temporary file left behind */
  ld_resume_t nowhere;
  ld_resume_init(&nowhere, "/nonexistent-dir/for/sure");
  assert_int_equal(ld_resume_touch(&nowhere, NOW, true), LD_ERR_IO);
  ld_resume_t none;
  ld_resume_init(&none, "");
  assert_int_equal(ld_resume_touch(&none, NOW, true), 0); /* nothing kept */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_range_starts_at_last_online_within_six_hours),
      cmocka_unit_test(the_text),
      cmocka_unit_test(written_at_most_every_ten_seconds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
