/* The containers drivers use: query rows (data packed in shared chunks, sorted and cut in
 * place), write batches and job queues. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "waku/archive/driver.h"

#define BIG_PAYLOAD 40000 /* larger than a chunk */

typedef struct sample {
  char pubsub[32], topic[32];
  uint8_t *payload;
  size_t payload_len;
  uint8_t meta[4];
  uint8_t hash[LD_WAKU_HASH_LEN];
  ld_waku_message_t m;
} sample_t;

/* Row i: timestamps out of order, payload bytes a function of i, row 7 with a big payload. */
static void make(sample_t *s, int i) {
  snprintf(s->pubsub, sizeof s->pubsub, "/waku/2/rs/1/%d", i % 8);
  snprintf(s->topic, sizeof s->topic, "/app/1/t%d/proto", i);
  s->payload_len = i == 7 ? BIG_PAYLOAD : (size_t)(100 + i % 150);
  s->payload = malloc(s->payload_len);
  for (size_t k = 0; k < s->payload_len; k++)
    s->payload[k] = (uint8_t)(i * 31 + (int)k);
  memset(s->meta, i, sizeof s->meta);
  memset(s->hash, 0, sizeof s->hash);
  s->hash[0] = (uint8_t)(i >> 8);
  s->hash[1] = (uint8_t)i;
  ld_waku_message_init(&s->m);
  s->m.content_topic = s->topic;
  s->m.content_topic_len = strlen(s->topic);
  s->m.payload = s->payload;
  s->m.payload_len = s->payload_len;
  s->m.meta = i % 3 == 0 ? s->meta : NULL;
  s->m.meta_len = i % 3 == 0 ? sizeof s->meta : 0;
  s->m.version = (uint32_t)(i % 2);
  s->m.timestamp = (int64_t)((i * 7919) % 1000) * 1000 + i; /* distinct */
}

/* The row holds an intact copy of sample i. */
static void assert_row_is(const ld_archive_row_t *row, const sample_t *s) {
  assert_memory_equal(row->hash, s->hash, LD_WAKU_HASH_LEN);
  assert_string_equal(row->pubsub_topic, s->pubsub);
  assert_int_equal(row->msg.content_topic_len, strlen(s->topic));
  assert_string_equal(row->msg.content_topic, s->topic);
  assert_int_equal(row->msg.payload_len, s->payload_len);
  assert_memory_equal(row->msg.payload, s->payload, s->payload_len);
  assert_int_equal(row->msg.meta_len, s->m.meta_len);
  if (s->m.meta_len > 0)
    assert_memory_equal(row->msg.meta, s->meta, s->m.meta_len);
  assert_int_equal(row->msg.version, s->m.version);
  assert_int_equal(row->msg.timestamp, s->m.timestamp);
}

static int by_key(const void *x, const void *y) {
  const sample_t *a = *(const sample_t *const *)x, *b = *(const sample_t *const *)y;
  return ld_archive_key_cmp(a->m.timestamp, a->hash, b->m.timestamp, b->hash);
}

enum { N = 300 };

static void rows_keep_their_data_through_sort_and_cut(void **state) {
  (void)state;
  static sample_t s[N];
  ld_archive_rows_t rows = {0};
  for (int i = 0; i < N; i++) {
    make(&s[i], i);
    assert_int_equal(
        ld_archive_rows_add(&rows, s[i].hash, true, s[i].pubsub, strlen(s[i].pubsub), &s[i].m), 0);
  }
  assert_int_equal(rows.n, N);
  for (int i = 0; i < N; i++)
    assert_row_is(&rows.rows[i], &s[i]);

  const sample_t *order[N];
  for (int i = 0; i < N; i++)
    order[i] = &s[i];
  qsort(order, N, sizeof order[0], by_key);
  assert_int_equal(ld_archive_rows_sort(&rows, true, N), 0);
  for (int i = 0; i < N; i++)
    assert_row_is(&rows.rows[i], order[i]);
  assert_int_equal(ld_archive_rows_sort(&rows, false, 101), 0);
  assert_int_equal(rows.n, 101);
  for (int i = 0; i < 101; i++)
    assert_row_is(&rows.rows[i], order[N - 1 - i]);

  ld_archive_rows_clear(&rows);
  assert_int_equal(rows.n, 0);
  assert_null(rows.rows);
  assert_null(rows.chunks);
  for (int i = 0; i < N; i++)
    free(s[i].payload);
}

static void rows_without_data_keep_hashes_only(void **state) {
  (void)state;
  sample_t s;
  make(&s, 5);
  ld_archive_rows_t rows = {0};
  assert_int_equal(ld_archive_rows_add(&rows, s.hash, false, NULL, 0, NULL), 0);
  assert_int_equal(rows.n, 1);
  assert_memory_equal(rows.rows[0].hash, s.hash, LD_WAKU_HASH_LEN);
  assert_int_equal(rows.rows[0].msg.payload_len, 0);
  assert_null(rows.chunks);
  ld_archive_rows_clear(&rows);
  free(s.payload);
}

static void batch_rows_own_their_copies(void **state) {
  (void)state;
  sample_t s[3];
  ld_archive_batch_t b = {0};
  for (int i = 0; i < 3; i++) {
    make(&s[i], 6 + i);
    assert_int_equal(ld_archive_batch_add(&b, s[i].pubsub, &s[i].m, s[i].hash, NULL, NULL), 0);
  }
  size_t bytes = 0;
  for (int i = 0; i < 3; i++) {
    assert_string_equal(b.rows[i].pubsub_topic, s[i].pubsub);
    assert_memory_equal(b.rows[i].msg.payload, s[i].payload, s[i].payload_len);
    assert_memory_equal(b.rows[i].hash, s[i].hash, LD_WAKU_HASH_LEN);
    bytes += b.rows[i].bytes;
    memset(s[i].payload, 0, s[i].payload_len); /* the batch does not look at the original */
    free(s[i].payload);
  }
  assert_int_equal(b.bytes, bytes);
  assert_true(b.rows[1].msg.payload_len == BIG_PAYLOAD);
  ld_archive_batch_clear(&b);
}

static void job_queue_is_first_in_first_out(void **state) {
  (void)state;
  ld_archive_job_t jobs[5];
  memset(jobs, 0, sizeof jobs);
  ld_archive_jobq_t q = {0};
  assert_null(ld_archive_jobq_pop(&q));
  for (int i = 0; i < 3; i++)
    ld_archive_jobq_push(&q, &jobs[i]);
  assert_int_equal(q.n, 3);
  assert_ptr_equal(ld_archive_jobq_pop(&q), &jobs[0]);
  ld_archive_jobq_push(&q, &jobs[3]);
  assert_ptr_equal(ld_archive_jobq_pop(&q), &jobs[1]);
  assert_ptr_equal(ld_archive_jobq_pop(&q), &jobs[2]);
  assert_ptr_equal(ld_archive_jobq_pop(&q), &jobs[3]);
  assert_int_equal(q.n, 0);
  assert_null(ld_archive_jobq_pop(&q));
  ld_archive_jobq_push(&q, &jobs[4]); /* usable again once emptied */
  assert_ptr_equal(ld_archive_jobq_pop(&q), &jobs[4]);
  assert_null(q.head);
  assert_null(q.tail);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rows_keep_their_data_through_sort_and_cut),
      cmocka_unit_test(rows_without_data_keep_hashes_only),
      cmocka_unit_test(batch_rows_own_their_copies),
      cmocka_unit_test(job_queue_is_first_in_first_out),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
