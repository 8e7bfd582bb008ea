#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "logosdelivery/progress.h"

typedef struct capture {
  char *buf;
  size_t len;
  FILE *f;
} capture_t;

static void capture_open(capture_t *c) {
  memset(c, 0, sizeof *c);
  c->f = open_memstream(&c->buf, &c->len);
  assert_non_null(c->f);
}

static char *capture_close(capture_t *c) {
  fclose(c->f);
  return c->buf;
}

/* Not a terminal: one plain line per page, no control characters, then the summary. */
static void plain_lines_when_not_a_terminal(void **state) {
  (void)state;
  capture_t c;
  capture_open(&c);
  ld_progress_t p;
  ld_progress_init(&p, c.f, false, "query", "messages");
  p.start_ms = 1000;
  ld_progress_page(&p, 100, 1500);
  ld_progress_page(&p, 100, 2000);
  ld_progress_page(&p, 50, 2001);
  ld_progress_done(&p, 3500);
  char *out = capture_close(&c);
  assert_string_equal(out, "query: page 1: 100 messages (100 in all, 200 messages/s)\n"
                           "query: page 2: 100 messages (200 in all, 200 messages/s)\n"
                           "query: page 3: 50 messages (250 in all, 250 messages/s)\n"
                           "query: 3 pages, 250 messages in 2.5 s (100 messages/s)\n");
  free(out);
}

/* A terminal: one line redrawn in place, at most every LD_PROGRESS_REDRAW_MS, cleared before
 * the summary. */
static void one_line_redrawn_on_a_terminal(void **state) {
  (void)state;
  capture_t c;
  capture_open(&c);
  ld_progress_t p;
  ld_progress_init(&p, c.f, true, "query", "messages");
  p.start_ms = 1000;
  ld_progress_page(&p, 10, 1100);                             /* drawn */
  ld_progress_page(&p, 10, 1100 + LD_PROGRESS_REDRAW_MS - 1); /* too soon: skipped */
  ld_progress_page(&p, 10, 1100 + LD_PROGRESS_REDRAW_MS);     /* drawn */
  ld_progress_done(&p, 2000);
  char *out = capture_close(&c);
  assert_string_equal(out, "\r\033[Kquery: 1 pages, 10 messages, 100 messages/s"
                           "\r\033[Kquery: 3 pages, 30 messages, 150 messages/s"
                           "\r\033[Kquery: 3 pages, 30 messages in 1.0 s (30 messages/s)\n");
  free(out);
}

/* Other output on the same terminal first clears the status line; nothing to clear: nothing. */
static void clear_only_what_is_drawn(void **state) {
  (void)state;
  capture_t c;
  capture_open(&c);
  ld_progress_t p;
  ld_progress_init(&p, c.f, true, "query", "messages");
  p.start_ms = 1;
  ld_progress_clear(&p);
  ld_progress_page(&p, 5, 1001);
  ld_progress_clear(&p);
  ld_progress_clear(&p);
  char *out = capture_close(&c);
  assert_string_equal(out, "\r\033[Kquery: 1 pages, 5 messages, 5 messages/s\r\033[K");
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plain_lines_when_not_a_terminal),
      cmocka_unit_test(one_line_redrawn_on_a_terminal),
      cmocka_unit_test(clear_only_what_is_drawn),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
