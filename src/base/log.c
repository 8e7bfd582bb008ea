#include "base/log.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hex.h"

/* Longest message kept from one call; longer messages are cut (in JSON a split UTF-8 sequence
 * shows as U+FFFD). */
#define LD_LOG_MAX_MESSAGE 16384
#define LOG_STACK_LINE 1024

static _Atomic int log_level = LD_LOG_INFO;
static _Atomic int log_format = LD_LOG_FORMAT_TEXT;
static _Atomic(FILE *) log_output = NULL;

static const char *const level_short[] = {"TRC", "DBG", "INF", "NTC", "WRN", "ERR", "FTL"};
static const char *const level_names[] = {"TRACE", "DEBUG", "INFO",  "NOTICE",
                                          "WARN",  "ERROR", "FATAL", "NONE"};

void ld_log_set_level(ld_log_level_t level) {
  atomic_store(&log_level, (int)level);
}

ld_log_level_t ld_log_get_level(void) {
  return (ld_log_level_t)atomic_load_explicit(&log_level, memory_order_relaxed);
}

void ld_log_set_format(ld_log_format_t format) {
  atomic_store(&log_format, (int)format);
}

void ld_log_set_output(FILE *out) {
  atomic_store(&log_output, out);
}

int ld_log_parse_level(const char *text, ld_log_level_t *level) {
  for (int i = 0; text != NULL && i <= LD_LOG_NONE; i++) {
    if (strcasecmp(text, level_names[i]) == 0) {
      *level = (ld_log_level_t)i;
      return 0;
    }
  }
  return LD_ERR_INVALID_ARG;
}

int ld_log_parse_format(const char *text, ld_log_format_t *format) {
  if (text != NULL && strcasecmp(text, "TEXT") == 0)
    *format = LD_LOG_FORMAT_TEXT;
  else if (text != NULL && strcasecmp(text, "JSON") == 0)
    *format = LD_LOG_FORMAT_JSON;
  else
    return LD_ERR_INVALID_ARG;
  return 0;
}

/* ---- line builder: stack storage first, heap when a line outgrows it ----------------------- */

typedef struct line {
  char *p;
  size_t len;
  size_t cap;
  bool failed;
  char stack[LOG_STACK_LINE];
} line_t;

static void line_init(line_t *l) {
  l->p = l->stack;
  l->len = 0;
  l->cap = sizeof l->stack;
  l->failed = false;
}

static void line_free(line_t *l) {
  if (l->p != l->stack)
    free(l->p);
}

static bool line_reserve(line_t *l, size_t extra) {
  if (l->failed)
    return false;
  if (l->len + extra <= l->cap)
    return true;
  size_t cap = l->cap * 2;
  while (cap < l->len + extra)
    cap *= 2;
  char *p = l->p == l->stack ? malloc(cap) : realloc(l->p, cap);
  if (p == NULL) {
    l->failed = true;
    return false;
  }
  if (l->p == l->stack)
    memcpy(p, l->stack, l->len);
  l->p = p;
  l->cap = cap;
  return true;
}

static void line_put(line_t *l, const char *s, size_t n) {
  if (line_reserve(l, n)) {
    memcpy(l->p + l->len, s, n);
    l->len += n;
  }
}

static void line_puts(line_t *l, const char *s) {
  line_put(l, s, strlen(s));
}

/* ---- escaping -------------------------------------------------------------------------------- */

static void put_escape(line_t *l, unsigned char c) {
  char buf[7] = "\\u00";
  ld_hex_encode(&c, 1, buf + 4);
  switch (c) {
  case '"':
    line_puts(l, "\\\"");
    return;
  case '\\':
    line_puts(l, "\\\\");
    return;
  case '\n':
    line_puts(l, "\\n");
    return;
  case '\r':
    line_puts(l, "\\r");
    return;
  case '\t':
    line_puts(l, "\\t");
    return;
  case '\b':
    line_puts(l, "\\b");
    return;
  case '\f':
    line_puts(l, "\\f");
    return;
  default:
    line_put(l, buf, 6);
  }
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when it is not one. */
static size_t utf8_seq_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  uint32_t cp;
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    len = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef)
    len = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4)
    len = 4, cp = c & 0x07;
  else
    return 0;
  if (n < len)
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
      (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return len;
}

/* JSON string body: quotes, backslashes and control chars escaped; invalid UTF-8 → U+FFFD. */
static void put_json_string(line_t *l, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    size_t k = utf8_seq_len(u + i, n - i);
    if (k == 0) {
      line_puts(l, "\xef\xbf\xbd");
      i++;
    } else if (k == 1 && (u[i] < 0x20 || u[i] == '"' || u[i] == '\\' || u[i] == 0x7f)) {
      put_escape(l, u[i]);
      i++;
    } else {
      line_put(l, s + i, k);
      i += k;
    }
  }
}

/* Text message: control chars escaped so that one call is one line; other bytes kept. */
static void put_text(line_t *l, const char *s, size_t n, bool quoted) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == 0x7f || (quoted && (c == '"' || c == '\\')))
      put_escape(l, c);
    else
      line_put(l, s + i, 1);
  }
}

/* ---- formatting ------------------------------------------------------------------------------ */

static void put_timestamp(line_t *l, bool json) {
  uint64_t ns = ld_wall_ns();
  time_t secs = (time_t)(ns / 1000000000ULL);
  unsigned ms = (unsigned)(ns / 1000000ULL % 1000);
  struct tm tm;
  char buf[64];
  gmtime_r(&secs, &tm);
  size_t n = strftime(buf, sizeof buf, json ? "%Y-%m-%dT%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tm);
  snprintf(buf + n, sizeof buf - n, json ? ".%03uZ" : ".%03u+00:00", ms);
  line_puts(l, buf);
}

/* Formats the message into `stack` when it fits, else into a heap copy stored in *heap. */
static const char *format_message(char *stack, size_t cap, char **heap, size_t *len,
                                  const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(stack, cap, fmt, ap);
  *heap = NULL;
  if (n < 0) {
    va_end(ap2);
    *len = 0;
    return "";
  }
  size_t want = (size_t)n < LD_LOG_MAX_MESSAGE ? (size_t)n : LD_LOG_MAX_MESSAGE;
  if (want < cap || (*heap = malloc(want + 1)) == NULL) {
    va_end(ap2);
    *len = want < cap ? want : cap - 1;
    return stack;
  }
  vsnprintf(*heap, want + 1, fmt, ap2);
  va_end(ap2);
  *len = want;
  return *heap;
}

static void build_text(line_t *l, ld_log_level_t level, const char *topic, const char *msg,
                       size_t mlen) {
  line_puts(l, level_short[level]);
  line_puts(l, " ");
  put_timestamp(l, false);
  line_puts(l, " ");
  put_text(l, msg, mlen, false);
  if (topic != NULL) {
    line_puts(l, " topics=\"");
    put_text(l, topic, strlen(topic), true);
    line_puts(l, "\"");
  }
  line_puts(l, "\n");
}

static void build_json(line_t *l, ld_log_level_t level, const char *topic, const char *msg,
                       size_t mlen) {
  line_puts(l, "{\"lvl\":\"");
  line_puts(l, level_short[level]);
  line_puts(l, "\",\"ts\":\"");
  put_timestamp(l, true);
  line_puts(l, "\",\"msg\":\"");
  put_json_string(l, msg, mlen);
  line_puts(l, "\"");
  if (topic != NULL) {
    line_puts(l, ",\"topics\":\"");
    put_json_string(l, topic, strlen(topic));
    line_puts(l, "\"");
  }
  line_puts(l, "}\n");
}

void ld_logv(ld_log_level_t level, const char *topic, const char *fmt, va_list ap) {
  if ((int)level < 0 || level >= LD_LOG_NONE || level < ld_log_get_level())
    return;
  char stack[LOG_STACK_LINE];
  char *heap;
  size_t mlen;
  const char *msg = format_message(stack, sizeof stack, &heap, &mlen, fmt, ap);
  line_t l;
  line_init(&l);
  if (atomic_load(&log_format) == LD_LOG_FORMAT_JSON)
    build_json(&l, level, topic, msg, mlen);
  else
    build_text(&l, level, topic, msg, mlen);
  FILE *out = atomic_load(&log_output);
  if (out == NULL)
    out = stderr;
  if (!l.failed) {
    fwrite(l.p, 1, l.len, out); /* one locked stdio call per line */
    fflush(out);
  }
  line_free(&l);
  free(heap);
}

void ld_log(ld_log_level_t level, const char *topic, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ld_logv(level, topic, fmt, ap);
  va_end(ap);
}
