/* The SQLite archive's hash → rowid key map: candidates by tag, growth, staleness, and the
 * states in which it must not be trusted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "waku/archive/sqlite/keymap.h"

#define N_MANY 20000

/* Hash i: a well-spread 32-byte key (a tiny xorshift stream seeded by i). */
static void hash_of(uint32_t i, uint8_t out[LD_WAKU_HASH_LEN]) {
  uint64_t x = 0x9e3779b97f4a7c15ull * (i + 1);
  for (size_t k = 0; k < LD_WAKU_HASH_LEN; k++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    out[k] = (uint8_t)x;
  }
}

/* A complete map holding hashes 0 … n−1 at rowid 10 + i. */
static void complete_map(ld_sq_keymap_t *m, uint32_t n) {
  assert_int_equal(ld_sq_keymap_init(m), 0);
  ld_sq_keytab_t t;
  assert_int_equal(ld_sq_keytab_init(&t, 0), 0);
  uint8_t h[LD_WAKU_HASH_LEN];
  for (uint32_t i = 0; i < n; i++) {
    hash_of(i, h);
    assert_int_equal(ld_sq_keytab_put(&t, h, 10 + (int64_t)i), 0);
  }
  ld_sq_keymap_replace(m, &t);
  assert_null(t.slots);
}

/* The candidates of one hash. */
static size_t find_one(ld_sq_keymap_t *m, const uint8_t h[LD_WAKU_HASH_LEN], int64_t *rowids,
                       size_t max) {
  ld_sq_candidate_t c[8];
  size_t n = 0;
  assert_int_equal(ld_sq_keymap_find(m, (const uint8_t(*)[LD_WAKU_HASH_LEN])h, 1, c, 8, &n), 0);
  assert_true(n <= max);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(c[i].hash_index, 0);
    rowids[i] = c[i].rowid;
  }
  return n;
}

static bool has_rowid(const int64_t *rowids, size_t n, int64_t want) {
  for (size_t i = 0; i < n; i++)
    if (rowids[i] == want)
      return true;
  return false;
}

static void a_new_map_is_not_trusted(void **state) {
  (void)state;
  ld_sq_keymap_t m;
  assert_int_equal(ld_sq_keymap_init(&m), 0);
  uint8_t h[1][LD_WAKU_HASH_LEN] = {{1}};
  ld_sq_candidate_t c[4];
  size_t n = 99;
  assert_int_equal(ld_sq_keymap_find(&m, h, 1, c, 4, &n), LD_ERR_UNSUPPORTED);
  assert_int_equal(n, 0);
  /* additions to an incomplete map are dropped, it stays untrusted */
  ld_sq_keyrow_t row = {h[0], 5};
  assert_int_equal(ld_sq_keymap_put(&m, &row, 1), 0);
  assert_int_equal(ld_sq_keymap_find(&m, h, 1, c, 4, &n), LD_ERR_UNSUPPORTED);
  ld_sq_keymap_destroy(&m);
}

/* Every stored hash leads to its rowid, through the table's growth from 1,024 slots; a hash that
 * was never stored has no candidate (or, rarely, another row's that shares its tag). */
static void finds_every_row_through_growth(void **state) {
  (void)state;
  ld_sq_keymap_t m;
  complete_map(&m, N_MANY);
  assert_true(m.tab.mask + 1 >= (size_t)N_MANY * 4 / 3);
  uint8_t h[LD_WAKU_HASH_LEN];
  int64_t r[8];
  size_t extra = 0;
  for (uint32_t i = 0; i < N_MANY; i++) {
    hash_of(i, h);
    size_t n = find_one(&m, h, r, 8);
    assert_true(has_rowid(r, n, 10 + (int64_t)i));
    extra += n - 1;
  }
  assert_true(extra < 10); /* 28-bit tags: shared by chance about once per 13,000 pairs */
  size_t absent = 0;
  for (uint32_t i = N_MANY; i < 2 * N_MANY; i++) {
    hash_of(i, h);
    absent += find_one(&m, h, r, 8);
  }
  assert_true(absent < 10);
  ld_sq_keymap_destroy(&m);
}

/* Hashes that share their first 28 bits are candidates for one another: all are returned, and
 * the caller tells them apart by the full hash. */
static void shared_tags_give_every_candidate(void **state) {
  (void)state;
  ld_sq_keymap_t m;
  complete_map(&m, 100);
  uint8_t same[3][LD_WAKU_HASH_LEN];
  ld_sq_keyrow_t rows[3];
  for (int i = 0; i < 3; i++) {
    memset(same[i], 0x5a, LD_WAKU_HASH_LEN);
    same[i][3] = (uint8_t)(0xa0 | i); /* the low 4 bits of byte 3 are not in the tag */
    same[i][31] = (uint8_t)i;
    rows[i] = (ld_sq_keyrow_t){same[i], 1000 + i};
  }
  assert_int_equal(ld_sq_keymap_put(&m, rows, 3), 0);
  int64_t r[8];
  size_t n = find_one(&m, same[1], r, 8);
  assert_int_equal(n, 3);
  for (int i = 0; i < 3; i++)
    assert_true(has_rowid(r, n, 1000 + i));
  /* one find for several hashes names which hash each candidate is for */
  ld_sq_candidate_t c[8];
  assert_int_equal(ld_sq_keymap_find(&m, same, 2, c, 8, &n), 0);
  assert_int_equal(n, 6);
  assert_int_equal(c[0].hash_index, 0);
  assert_int_equal(c[5].hash_index, 1);
  /* more candidates than the caller has room for */
  assert_int_equal(ld_sq_keymap_find(&m, same, 3, c, 8, &n), LD_ERR_LIMIT);
  ld_sq_keymap_destroy(&m);
}

/* Additions past 3/4 of the slots double the table; nothing is lost. */
static void additions_grow_the_map(void **state) {
  (void)state;
  ld_sq_keymap_t m;
  complete_map(&m, 10);
  size_t slots = m.tab.mask + 1;
  enum { BATCH = 500 };
  uint8_t h[BATCH][LD_WAKU_HASH_LEN];
  ld_sq_keyrow_t rows[BATCH];
  for (uint32_t b = 0; b < 8; b++) {
    for (uint32_t i = 0; i < BATCH; i++) {
      hash_of(10 + b * BATCH + i, h[i]);
      rows[i] = (ld_sq_keyrow_t){h[i], 10 + 10 + (int64_t)(b * BATCH + i)};
    }
    assert_int_equal(ld_sq_keymap_put(&m, rows, BATCH), 0);
  }
  assert_true(m.tab.mask + 1 > slots);
  assert_true(m.tab.used <= (m.tab.mask + 1) / 4 * 3);
  uint8_t one[LD_WAKU_HASH_LEN];
  int64_t r[8];
  for (uint32_t i = 0; i < 10 + 8 * BATCH; i++) {
    hash_of(i, one);
    size_t n = find_one(&m, one, r, 8);
    assert_true(has_rowid(r, n, 10 + (int64_t)i));
  }
  ld_sq_keymap_destroy(&m);
}

/* A rowid the entries cannot hold makes the map untrusted until it is rebuilt; a table past
 * LD_SQ_KEYMAP_MAX_ENTRIES is not made at all. */
static void unmappable_rows_turn_the_map_off(void **state) {
  (void)state;
  ld_sq_keymap_t m;
  complete_map(&m, 10);
  uint8_t h[1][LD_WAKU_HASH_LEN];
  hash_of(77, h[0]);
  ld_sq_keyrow_t row = {h[0], LD_SQ_KEYMAP_MAX_ROWID + 1};
  assert_int_equal(ld_sq_keymap_put(&m, &row, 1), LD_ERR_INVALID_ARG);
  ld_sq_candidate_t c[4];
  size_t n;
  assert_int_equal(ld_sq_keymap_find(&m, h, 1, c, 4, &n), LD_ERR_UNSUPPORTED);
  row.rowid = 0;
  ld_sq_keytab_t t;
  /* a table too big to keep in memory is refused before it is allocated */
  assert_int_equal(ld_sq_keytab_init(&t, LD_SQ_KEYMAP_MAX_ENTRIES + 1), LD_ERR_LIMIT);
  assert_null(t.slots);
  assert_int_equal(ld_sq_keytab_init(&t, 1), 0);
  assert_int_equal(ld_sq_keytab_put(&t, h[0], 0), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_sq_keytab_put(&t, h[0], LD_SQ_KEYMAP_MAX_ROWID), 0);
  ld_sq_keymap_replace(&m, &t);
  assert_int_equal(ld_sq_keymap_find(&m, h, 1, c, 4, &n), 0);
  assert_int_equal(n, 1);
  assert_true(c[0].rowid == LD_SQ_KEYMAP_MAX_ROWID);
  ld_sq_keymap_destroy(&m);
}

/* Deleted rows leave stale entries; past a quarter of the map the writer is told to rebuild. */
static void stale_entries_ask_for_a_rebuild(void **state) {
  (void)state;
  ld_sq_keymap_t m;
  complete_map(&m, 1000);
  assert_false(ld_sq_keymap_note_deleted(&m, 0));
  assert_false(ld_sq_keymap_note_deleted(&m, 200));
  assert_false(ld_sq_keymap_note_deleted(&m, 50));
  assert_true(ld_sq_keymap_note_deleted(&m, 1));
  /* more deletions than entries (rows the map never had) do not wrap around */
  assert_true(ld_sq_keymap_note_deleted(&m, UINT64_MAX));
  assert_true(m.stale <= m.tab.used);
  ld_sq_keytab_t t;
  assert_int_equal(ld_sq_keytab_init(&t, 0), 0);
  ld_sq_keymap_replace(&m, &t);
  assert_int_equal(m.stale, 0);
  ld_sq_keymap_destroy(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_new_map_is_not_trusted),
      cmocka_unit_test(finds_every_row_through_growth),
      cmocka_unit_test(shared_tags_give_every_candidate),
      cmocka_unit_test(additions_grow_the_map),
      cmocka_unit_test(unmappable_rows_turn_the_map_off),
      cmocka_unit_test(stale_entries_ask_for_a_rebuild),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
