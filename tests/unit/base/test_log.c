#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <regex.h>

#include "base/error.h"
#include "base/log.h"

#define TEXT_TS "[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}\\+00:00"
#define JSON_TS "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z"

typedef struct capture {
  char *text;
  size_t len;
  FILE *f;
} capture_t;

static void capture_start(capture_t *c, ld_log_level_t level, ld_log_format_t format) {
  c->text = NULL;
  c->len = 0;
  c->f = open_memstream(&c->text, &c->len);
  assert_non_null(c->f);
  ld_log_set_output(c->f);
  ld_log_set_level(level);
  ld_log_set_format(format);
}

/* Stops capturing and returns the captured bytes (free them). */
static char *capture_end(capture_t *c) {
  ld_log_set_output(NULL);
  fclose(c->f);
  return c->text;
}

static void assert_matches(const char *text, const char *pattern) {
  regex_t re;
  assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
  int rc = regexec(&re, text, 0, NULL, 0);
  regfree(&re);
  if (rc != 0)
    fail_msg("\"%s\" does not match /%s/", text, pattern);
}

static void text_line_format(void **state) {
  (void)state;
  capture_t c;
  capture_start(&c, LD_LOG_TRACE, LD_LOG_FORMAT_TEXT);
  ld_log(LD_LOG_INFO, "switch", "dialed %d peers", 3);
  char *out = capture_end(&c);
  assert_matches(out, "^INF " TEXT_TS " dialed 3 peers topics=\"switch\"\n$");
  free(out);
}

static void json_line_format(void **state) {
  (void)state;
  capture_t c;
  capture_start(&c, LD_LOG_TRACE, LD_LOG_FORMAT_JSON);
  ld_log(LD_LOG_WARN, "noise", "handshake with %s failed: %s", "peer", ld_errname(-63));
  char *out = capture_end(&c);
  assert_matches(out, "^\\{\"lvl\":\"WRN\",\"ts\":\"" JSON_TS
                      "\",\"msg\":\"handshake with peer failed: HANDSHAKE\","
                      "\"topics\":\"noise\"\\}\n$");
  free(out);
}

static void level_names_match_nwaku(void **state) {
  (void)state;
  const char *names[] = {"TRC", "DBG", "INF", "NTC", "WRN", "ERR", "FTL"};
  for (int lvl = LD_LOG_TRACE; lvl <= LD_LOG_FATAL; lvl++) {
    capture_t c;
    capture_start(&c, LD_LOG_TRACE, LD_LOG_FORMAT_TEXT);
    ld_log((ld_log_level_t)lvl, "t", "m");
    char *out = capture_end(&c);
    assert_memory_equal(out, names[lvl], 3);
    assert_int_equal(out[3], ' ');
    free(out);
  }
}

static void json_escapes_message_and_topic(void **state) {
  (void)state;
  capture_t c;
  capture_start(&c, LD_LOG_TRACE, LD_LOG_FORMAT_JSON);
  ld_log(LD_LOG_ERROR, "to\"pic", "q\"b\\n\nr\rt\t\x01\x1f\x7f|\xc3\xa9|\xff|\xe2\x82|/");
  char *out = capture_end(&c);
  const char *want_msg = "\"msg\":\"q\\\"b\\\\n\\nr\\rt\\t\\u0001\\u001f\\u007f|\xc3\xa9|"
                         "\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|/\"";
  assert_non_null(strstr(out, want_msg));
  assert_non_null(strstr(out, ",\"topics\":\"to\\\"pic\"}\n"));
  assert_int_equal(strchr(out, '\n') - out, (long)strlen(out) - 1); /* exactly one line */
  free(out);
}

static void text_escapes_control_characters(void **state) {
  (void)state;
  capture_t c;
  capture_start(&c, LD_LOG_TRACE, LD_LOG_FORMAT_TEXT);
  ld_log(LD_LOG_NOTICE, "a\"b", "two\nlines\tand \"quotes\"");
  char *out = capture_end(&c);
  assert_matches(out, "^NTC " TEXT_TS " two\\\\nlines\\\\tand \"quotes\" topics=\"a\\\\\"b\"\n$");
  free(out);
}

static void level_filtering(void **state) {
  (void)state;
  capture_t c;
  capture_start(&c, LD_LOG_WARN, LD_LOG_FORMAT_TEXT);
  assert_int_equal(ld_log_get_level(), LD_LOG_WARN);
  LD_INFO("x", "hidden %d", 1);
  ld_log(LD_LOG_DEBUG, "x", "hidden");
  LD_WARN("x", "shown %d", 2);
  LD_ERROR("x", "shown %d", 3);
  assert_false(LD_LOG_ENABLED(LD_LOG_NOTICE));
  assert_true(LD_LOG_ENABLED(LD_LOG_FATAL));
  ld_log_set_level(LD_LOG_NONE);
  ld_log(LD_LOG_FATAL, "x", "hidden");
  ld_log(LD_LOG_NONE, "x", "never a level");
  char *out = capture_end(&c);
  assert_null(strstr(out, "hidden"));
  assert_non_null(strstr(out, "shown 2"));
  assert_non_null(strstr(out, "shown 3"));
  size_t lines = 0;
  for (char *p = out; *p; p++)
    lines += *p == '\n';
  assert_int_equal(lines, 2);
  free(out);
  ld_log_set_level(LD_LOG_INFO);
}

static void long_messages(void **state) {
  (void)state;
  enum { LONG = 5000, HUGE = 40000 };
  char *msg = malloc(HUGE + 1);
  assert_non_null(msg);
  memset(msg, 'a', HUGE);
  msg[HUGE] = '\0';
  capture_t c;
  capture_start(&c, LD_LOG_TRACE, LD_LOG_FORMAT_JSON);
  ld_log(LD_LOG_INFO, "t", "%.*s", LONG, msg);
  char *out = capture_end(&c);
  assert_non_null(strstr(out, "\"msg\":\""));
  assert_int_equal(strspn(strstr(out, "\"msg\":\"") + 7, "a"), LONG);
  free(out);
  capture_start(&c, LD_LOG_TRACE, LD_LOG_FORMAT_TEXT);
  ld_log(LD_LOG_INFO, "t", "%s", msg);
  out = capture_end(&c);
  const char *a = strchr(out, 'a');
  assert_non_null(a);
  assert_int_equal(strspn(a, "a"), 16384); /* cut at the message cap */
  assert_non_null(strstr(out, " topics=\"t\"\n"));
  free(out);
  free(msg);
}

static void parses_levels_and_formats(void **state) {
  (void)state;
  ld_log_level_t lvl;
  ld_log_format_t fmt;
  const char *names[] = {"TRACE", "debug", "Info", "NOTICE", "warn", "ERROR", "fatal", "none"};
  for (int i = 0; i < 8; i++) {
    assert_int_equal(ld_log_parse_level(names[i], &lvl), 0);
    assert_int_equal(lvl, i);
  }
  assert_int_equal(ld_log_parse_level("verbose", &lvl), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_log_parse_level("", &lvl), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_log_parse_level("INFOx", &lvl), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_log_parse_format("json", &fmt), 0);
  assert_int_equal(fmt, LD_LOG_FORMAT_JSON);
  assert_int_equal(ld_log_parse_format("TEXT", &fmt), 0);
  assert_int_equal(fmt, LD_LOG_FORMAT_TEXT);
  assert_int_equal(ld_log_parse_format("xml", &fmt), LD_ERR_INVALID_ARG);
}

enum { THREADS = 4, LINES_PER_THREAD = 400 };

static void *log_worker(void *arg) {
  int id = (int)(intptr_t)arg;
  for (int i = 0; i < LINES_PER_THREAD; i++)
    ld_log(LD_LOG_INFO, "thread", "worker %d line %d %s", id, i,
           "padding-padding-padding-padding-padding-padding-padding-padding");
  return NULL;
}

static void concurrent_lines_do_not_interleave(void **state) {
  (void)state;
  FILE *f = tmpfile();
  assert_non_null(f);
  ld_log_set_output(f);
  ld_log_set_level(LD_LOG_INFO);
  ld_log_set_format(LD_LOG_FORMAT_TEXT);
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, log_worker, (void *)(intptr_t)i), 0);
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  ld_log_set_output(NULL);
  rewind(f);
  regex_t re;
  assert_int_equal(regcomp(&re,
                           "^INF " TEXT_TS " worker [0-3] line [0-9]+ (padding-){7}padding "
                           "topics=\"thread\"\n$",
                           REG_EXTENDED | REG_NOSUB),
                   0);
  char line[512];
  int count = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    assert_int_equal(regexec(&re, line, 0, NULL, 0), 0);
    count++;
  }
  regfree(&re);
  fclose(f);
  assert_int_equal(count, THREADS * LINES_PER_THREAD);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(text_line_format),
      cmocka_unit_test(json_line_format),
      cmocka_unit_test(level_names_match_nwaku),
      cmocka_unit_test(json_escapes_message_and_topic),
      cmocka_unit_test(text_escapes_control_characters),
      cmocka_unit_test(level_filtering),
      cmocka_unit_test(long_messages),
      cmocka_unit_test(parses_levels_and_formats),
      cmocka_unit_test(concurrent_lines_do_not_interleave),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
