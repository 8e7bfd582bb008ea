/* The channel store (channels/channel_store.h): the deletion of an INCOMING row that was never
 * written costs no SQL write, while a buffered message's row, written in the session or restored
 * from the one before, is deleted on delivery; what a closed store leaves in its file restores
 * the engine. Real SQLite files in a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "base/buf.h"
#include "base/error.h"
#include "channels/channel_store.h"
#include "channels/sds.h"

#define CHANNEL "room"
#define SENDER "alice"
#define NOW 1700000000000ull

typedef struct fixture {
  char dir[64];
  char path[128];
} fixture_t;

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  snprintf(f->dir, sizeof f->dir, "/tmp/ld_channel_store_XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  snprintf(f->path, sizeof f->path, "%s/%s", f->dir, LD_CHANNEL_STORE_FILE);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
  assert_int_equal(system(cmd), 0);
  free(f);
  return 0;
}

static ld_channel_store_t *open_store(const fixture_t *f) {
  ld_channel_store_t *st = NULL;
  char why[256] = "";
  assert_int_equal(ld_channel_store_open(f->path, &st, why, sizeof why), 0);
  return st;
}

/* Rows of `kind` in the file (read through a connection of its own); the ord of the row `key`
 * in *ord when it is there (-1 when not). */
static int count_rows(const fixture_t *f, int kind, const char *key, long long *ord) {
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_stmt *s = NULL;
  assert_int_equal(
      sqlite3_prepare_v2(db, "SELECT key, ord FROM state WHERE kind = ?1", -1, &s, NULL),
      SQLITE_OK);
  sqlite3_bind_int(s, 1, kind);
  int n = 0;
  if (ord != NULL)
    *ord = -1;
  while (sqlite3_step(s) == SQLITE_ROW) {
    n++;
    if (key != NULL && ord != NULL && strcmp((const char *)sqlite3_column_text(s, 0), key) == 0)
      *ord = sqlite3_column_int64(s, 1);
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return n;
}

/* An own content message as the channel persists it: its ID and the SDS bytes without the
 * bloom filter. */
static void own_message(ld_sds_t *sds, const char *content, char id[65], ld_buf_t *stripped) {
  ld_sds_message_id(SENDER, NOW * 1000000u + strlen(content), (const uint8_t *)content,
                    strlen(content), id);
  assert_int_equal(ld_sds_send(sds, NOW, id, (const uint8_t *)content, strlen(content)), 0);
  ld_sds_event_t ev;
  bool sent = false;
  while (ld_sds_next_event(sds, &ev)) {
    if (ev.type == LD_SDS_EV_SEND && ev.send_kind == LD_SDS_SEND_CONTENT) {
      ld_buf_init(stripped);
      assert_int_equal(ld_sds_strip_bloom(ev.data, ev.len, stripped), 0);
      sent = true;
    }
    ld_sds_event_clear(&ev);
  }
  assert_true(sent);
}

static ld_sds_t *engine(void) {
  ld_sds_t *sds = NULL;
  assert_int_equal(ld_sds_new(NULL, CHANNEL, SENDER, NOW, &sds), 0);
  return sds;
}

typedef struct restored {
  int n;
  char message_id[65];
  char request_id[LD_CHANNEL_STORE_MAX_REQUEST_ID + 1];
} restored_t;

static void on_restored(void *ud, const char *message_id, const char *request_id) {
  restored_t *r = ud;
  r->n++;
  snprintf(r->message_id, sizeof r->message_id, "%s", message_id);
  snprintf(r->request_id, sizeof r->request_id, "%s", request_id);
}

/* Restores the channel from the file into a fresh engine. */
static ld_sds_t *restore(const fixture_t *f, restored_t *r) {
  ld_channel_store_t *st = open_store(f);
  ld_sds_t *sds = engine();
  ld_channel_restore_fns_t fns = {.outgoing = on_restored};
  char why[256] = "";
  memset(r, 0, sizeof *r);
  assert_int_equal(ld_channel_store_load(st, CHANNEL, SENDER, sds, NOW, &fns, r, why, sizeof why),
                   1);
  ld_channel_store_close(st);
  return sds;
}

static const uint8_t k_hint[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                   17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

/* Two content messages of "bob", the second naming the first in its causal history: the
 * second's SDS bytes (what an engine buffers while the first is missing) and its ID. */
static void dependent_message(ld_buf_t *wire, char id[65]) {
  ld_sds_t *bob = NULL;
  assert_int_equal(ld_sds_new(NULL, CHANNEL, "bob", NOW, &bob), 0);
  char first[65];
  ld_sds_message_id("bob", 1, (const uint8_t *)"first", 5, first);
  ld_sds_message_id("bob", 2, (const uint8_t *)"second", 6, id);
  assert_int_equal(ld_sds_send(bob, NOW, first, (const uint8_t *)"first", 5), 0);
  assert_int_equal(ld_sds_send(bob, NOW, id, (const uint8_t *)"second", 6), 0);
  ld_sds_event_t ev;
  ld_buf_init(wire);
  while (ld_sds_next_event(bob, &ev)) {
    if (ev.type == LD_SDS_EV_SEND && ev.message_id != NULL && strcmp(ev.message_id, id) == 0)
      assert_int_equal(ld_buf_append(wire, ev.data, ev.len), 0);
    ld_sds_event_clear(&ev);
  }
  assert_true(wire->len > 0);
  ld_sds_free(bob);
}

/* A message delivered without ever being buffered has no INCOMING row: the delete the channel
 * layer asks for on delivery costs no SQL write. */
static void deleting_an_incoming_row_never_written_writes_nothing(void **state) {
  fixture_t *f = *state;
  ld_channel_store_t *st = open_store(f);
  ld_channel_store_put_channel(st, CHANNEL, "/t/1/c/proto", SENDER, 1);
  ld_channel_store_commit(st);
  uint64_t before = ld_channel_store_writes(st);
  ld_channel_store_delete(st, CHANNEL, LD_CHANNEL_RECORD_INCOMING, "never-buffered");
  ld_channel_store_commit(st);
  assert_int_equal(ld_channel_store_writes(st) - before, 0);
  ld_channel_store_counts_t n;
  ld_channel_store_counts(st, &n);
  assert_int_equal(n.deletes[LD_CHANNEL_RECORD_INCOMING], 0);
  /* other kinds are deleted as asked */
  ld_channel_store_delete(st, CHANNEL, LD_CHANNEL_RECORD_OUTGOING, "never-sent");
  ld_channel_store_commit(st);
  assert_int_equal(ld_channel_store_writes(st) - before, 1);
  ld_channel_store_close(st);
}

/* A buffered message's row, written in this session or restored from the file of the one
 * before, is deleted when the message is delivered. */
static void a_buffered_row_is_deleted_in_its_session_and_after_a_restart(void **state) {
  fixture_t *f = *state;
  ld_buf_t wire;
  char id[65];
  dependent_message(&wire, id);
  ld_channel_store_t *st = open_store(f);
  ld_channel_store_put_channel(st, CHANNEL, "/t/1/c/proto", SENDER, 1);
  ld_channel_store_put_incoming(st, CHANNEL, "same-session", wire.data, wire.len, NULL, 0);
  ld_channel_store_commit(st);
  assert_int_equal(count_rows(f, LD_CHANNEL_RECORD_INCOMING, NULL, NULL), 1);
  ld_channel_store_delete(st, CHANNEL, LD_CHANNEL_RECORD_INCOMING, "same-session");
  ld_channel_store_commit(st);
  assert_int_equal(count_rows(f, LD_CHANNEL_RECORD_INCOMING, NULL, NULL), 0);
  ld_channel_store_put_incoming(st, CHANNEL, id, wire.data, wire.len, k_hint, sizeof k_hint);
  ld_channel_store_close(st);
  assert_int_equal(count_rows(f, LD_CHANNEL_RECORD_INCOMING, NULL, NULL), 1);

  /* the next session restores it (buffered: its dependency is missing), then delivers it */
  st = open_store(f);
  ld_sds_t *sds = engine();
  char why[256] = "";
  assert_int_equal(
      ld_channel_store_load(st, CHANNEL, SENDER, sds, NOW, NULL, NULL, why, sizeof why), 1);
  ld_sds_stats_t stats;
  ld_sds_get_stats(sds, &stats);
  assert_int_equal(stats.incoming_len, 1);
  ld_channel_store_delete(st, CHANNEL, LD_CHANNEL_RECORD_INCOMING, id);
  ld_channel_store_close(st);
  assert_int_equal(count_rows(f, LD_CHANNEL_RECORD_INCOMING, NULL, NULL), 0);
  ld_sds_free(sds);
  ld_buf_clear(&wire);
}

/* A context closed after its writes: the channel resumes with its own message logged (with its
 * hint) and still outgoing, its retransmission counted; the acknowledgement in the next session
 * deletes the row. */
static void a_closed_store_resumes_what_it_wrote(void **state) {
  fixture_t *f = *state;
  ld_channel_store_t *st = open_store(f);
  ld_sds_t *sds = engine();
  char id[65];
  ld_buf_t wire;
  own_message(sds, "resume me", id, &wire);
  ld_sds_stats_t stats;
  ld_sds_get_stats(sds, &stats);
  ld_channel_store_put_outgoing(st, CHANNEL, id, "req-7", wire.data, wire.len);
  ld_channel_store_put_log(st, CHANNEL, id, stats.lamport, SENDER, k_hint, sizeof k_hint);
  ld_channel_store_count_retransmission(st, CHANNEL, id);
  ld_channel_store_put_channel(st, CHANNEL, "/t/1/c/proto", SENDER, stats.lamport);
  ld_channel_store_close(st);
  ld_sds_free(sds);
  ld_buf_clear(&wire);

  long long ord = 0;
  assert_int_equal(count_rows(f, LD_CHANNEL_RECORD_OUTGOING, id, &ord), 1);
  assert_int_equal(ord, 1);
  restored_t r;
  sds = restore(f, &r);
  assert_true(ld_sds_in_log(sds, id));
  assert_true(ld_sds_has_retrieval_hint(sds, id, k_hint, sizeof k_hint));
  assert_int_equal(r.n, 1);
  assert_string_equal(r.message_id, id);
  assert_string_equal(r.request_id, "req-7");
  ld_sds_get_stats(sds, &stats);
  assert_int_equal(stats.outgoing_len, 1);
  ld_sds_free(sds);

  st = open_store(f);
  ld_channel_store_delete(st, CHANNEL, LD_CHANNEL_RECORD_OUTGOING, id);
  ld_channel_store_close(st);
  assert_int_equal(count_rows(f, LD_CHANNEL_RECORD_OUTGOING, NULL, NULL), 0);
  sds = restore(f, &r);
  assert_int_equal(r.n, 0);
  assert_true(ld_sds_in_log(sds, id));
  ld_sds_free(sds);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(deleting_an_incoming_row_never_written_writes_nothing, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(a_buffered_row_is_deleted_in_its_session_and_after_a_restart,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(a_closed_store_resumes_what_it_wrote, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
