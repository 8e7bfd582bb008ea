#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/ring.h"

static void fifo_order_and_partial_reads(void **state) {
  (void)state;
  ld_ring_t r;
  ld_ring_init(&r, 1024);
  assert_int_equal(ld_ring_len(&r), 0);
  assert_int_equal(ld_ring_write(&r, "hello ", 6), 0);
  assert_int_equal(ld_ring_write(&r, "world", 5), 0);
  assert_int_equal(ld_ring_len(&r), 11);
  char out[16];
  assert_int_equal(ld_ring_peek(&r, out, 4), 4);
  assert_memory_equal(out, "hell", 4);
  assert_int_equal(ld_ring_read(&r, out, 6), 6);
  assert_memory_equal(out, "hello ", 6);
  assert_int_equal(ld_ring_read(&r, out, sizeof out), 5);
  assert_memory_equal(out, "world", 5);
  assert_int_equal(ld_ring_read(&r, out, sizeof out), 0);
  assert_int_equal(ld_ring_peek(&r, out, sizeof out), 0);
  ld_ring_clear(&r);
}

static void limit_is_all_or_nothing(void **state) {
  (void)state;
  ld_ring_t r;
  ld_ring_init(&r, 10);
  assert_int_equal(ld_ring_write(&r, "0123456", 7), 0);
  assert_int_equal(ld_ring_space(&r), 3);
  assert_int_equal(ld_ring_write(&r, "abcd", 4), LD_ERR_LIMIT);
  assert_int_equal(ld_ring_len(&r), 7);
  assert_int_equal(ld_ring_write(&r, "abc", 3), 0);
  assert_int_equal(ld_ring_write(&r, "x", 1), LD_ERR_LIMIT);
  assert_int_equal(ld_ring_write(&r, NULL, 0), 0);
  assert_true(r.cap <= 10);
  char out[10];
  assert_int_equal(ld_ring_read(&r, out, 10), 10);
  assert_memory_equal(out, "0123456abc", 10);
  ld_ring_clear(&r);
  ld_ring_t z;
  ld_ring_init(&z, 0);
  assert_int_equal(ld_ring_write(&z, "a", 1), LD_ERR_LIMIT);
  ld_ring_clear(&z);
}

static void spans_cover_wrapped_data(void **state) {
  (void)state;
  ld_ring_t r;
  ld_ring_init(&r, 64);
  ld_ring_span_t sp[2];
  assert_int_equal(ld_ring_spans(&r, sp), 0);
  uint8_t buf[64];
  for (int i = 0; i < 64; i++)
    buf[i] = (uint8_t)i;
  assert_int_equal(ld_ring_write(&r, buf, 60), 0);
  assert_int_equal(ld_ring_consume(&r, 50), 50);
  assert_int_equal(ld_ring_write(&r, buf, 20), 0); /* wraps: 10 at the end, 20 ... */
  assert_int_equal(ld_ring_len(&r), 30);
  int n = ld_ring_spans(&r, sp);
  assert_true(n == 1 || n == 2);
  uint8_t joined[64];
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    assert_true(sp[i].len > 0);
    memcpy(joined + total, sp[i].data, sp[i].len);
    total += sp[i].len;
  }
  assert_int_equal(total, 30);
  assert_memory_equal(joined, buf + 50, 10);
  assert_memory_equal(joined + 10, buf, 20);
  if (r.cap == 64)
    assert_int_equal(n, 2); /* no growth happened, so the data really wraps */
  assert_int_equal(ld_ring_consume(&r, 100), 30);
  assert_int_equal(ld_ring_spans(&r, sp), 0);
  ld_ring_clear(&r);
}

static void grows_while_wrapped(void **state) {
  (void)state;
  ld_ring_t r;
  ld_ring_init(&r, 1 << 20);
  uint8_t chunk[100], out[300];
  for (int i = 0; i < 100; i++)
    chunk[i] = (uint8_t)(i * 3);
  /* head moves forward, then a write forces growth while the data wraps */
  assert_int_equal(ld_ring_write(&r, chunk, 50), 0);
  size_t cap0 = r.cap;
  assert_int_equal(ld_ring_read(&r, out, 40), 40);
  while (ld_ring_len(&r) + 30 <= cap0)
    assert_int_equal(ld_ring_write(&r, chunk, 30), 0);
  size_t before = ld_ring_len(&r);
  assert_int_equal(ld_ring_write(&r, chunk, 100), 0);
  assert_true(r.cap > cap0);
  assert_int_equal(ld_ring_len(&r), before + 100);
  assert_int_equal(ld_ring_read(&r, out, 10), 10);
  assert_memory_equal(out, chunk + 40, 10);
  ld_ring_clear(&r);
}

static void random_stream_matches_reference(void **state) {
  (void)state;
  enum { MAX = 5000, TOTAL = 2000000 };
  ld_ring_t r;
  ld_ring_init(&r, MAX);
  uint8_t *tmp = malloc(MAX);
  assert_non_null(tmp);
  uint64_t wrote = 0, read = 0;
  int refused = 0;
  srand(99);
  while (read < TOTAL) {
    size_t n = (size_t)(rand() % 700);
    if (rand() % 2 == 0) {
      for (size_t i = 0; i < n; i++)
        tmp[i] = (uint8_t)((wrote + i) * 2654435761u >> 13);
      bool fits = n <= MAX - ld_ring_len(&r);
      int rc = ld_ring_write(&r, tmp, n);
      if (!fits) {
        assert_int_equal(rc, LD_ERR_LIMIT);
        refused++;
      } else {
        assert_int_equal(rc, 0);
        wrote += n;
      }
    } else {
      bool peek = rand() % 4 == 0;
      size_t got = peek ? ld_ring_peek(&r, tmp, n) : ld_ring_read(&r, tmp, n);
      assert_int_equal(got, n < wrote - read ? n : wrote - read);
      for (size_t i = 0; i < got; i++)
        assert_int_equal(tmp[i], (uint8_t)((read + i) * 2654435761u >> 13));
      if (!peek)
        read += got;
    }
    assert_true(ld_ring_len(&r) == wrote - read);
    assert_true(r.cap <= MAX);
  }
  assert_true(refused > 0);
  free(tmp);
  ld_ring_clear(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fifo_order_and_partial_reads),    cmocka_unit_test(limit_is_all_or_nothing),
      cmocka_unit_test(spans_cover_wrapped_data),        cmocka_unit_test(grows_while_wrapped),
      cmocka_unit_test(random_stream_matches_reference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
