/* Logging: levels as nwaku names them, text or JSON lines, one line per call, to stderr by
 * default. Thread-safe: each line is written with a single call. */
#ifndef LD_BASE_LOG_H
#define LD_BASE_LOG_H

#include <stdarg.h>
#include <stdio.h>

typedef enum ld_log_level {
  LD_LOG_TRACE = 0,
  LD_LOG_DEBUG,
  LD_LOG_INFO,
  LD_LOG_NOTICE,
  LD_LOG_WARN,
  LD_LOG_ERROR,
  LD_LOG_FATAL,
  LD_LOG_NONE, /* disables logging */
} ld_log_level_t;

typedef enum ld_log_format {
  LD_LOG_FORMAT_TEXT = 0,
  LD_LOG_FORMAT_JSON,
} ld_log_format_t;

void ld_log_set_level(ld_log_level_t level);
ld_log_level_t ld_log_get_level(void);
void ld_log_set_format(ld_log_format_t format);

/* Redirects output (stderr by default). The stream must outlive its use. */
void ld_log_set_output(FILE *out);

/* Parses "TRACE", "DEBUG", "INFO", "NOTICE", "WARN", "ERROR", "FATAL", "NONE" (any case).
 * Returns 0 or LD_ERR_INVALID_ARG. */
int ld_log_parse_level(const char *text, ld_log_level_t *level);

/* Parses "TEXT" or "JSON" (any case). Returns 0 or LD_ERR_INVALID_ARG. */
int ld_log_parse_format(const char *text, ld_log_format_t *format);

/* Writes one line when `level` is enabled. `topic` names the module ("switch", "noise"); `fmt` is
 * printf-style and forms the message.
 * Text:  `INF 2026-11-30 09:04:28.123+00:00 <message> topics="<topic>"`
 * JSON:  `{"lvl":"INF","ts":"2026-11-30T09:04:28.123Z","msg":"<message>","topics":"<topic>"}` */
void ld_log(ld_log_level_t level, const char *topic, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ld_logv(ld_log_level_t level, const char *topic, const char *fmt, va_list ap);

#define LD_LOG_ENABLED(lvl) ((lvl) >= ld_log_get_level())
#define LD_LOG_(lvl, topic, ...)                                                                   \
  do {                                                                                             \
    if (LD_LOG_ENABLED(lvl))                                                                       \
      ld_log((lvl), (topic), __VA_ARGS__);                                                         \
  } while (0)
#define LD_TRACE(topic, ...) LD_LOG_(LD_LOG_TRACE, topic, __VA_ARGS__)
#define LD_DEBUG(topic, ...) LD_LOG_(LD_LOG_DEBUG, topic, __VA_ARGS__)
#define LD_INFO(topic, ...) LD_LOG_(LD_LOG_INFO, topic, __VA_ARGS__)
#define LD_NOTICE(topic, ...) LD_LOG_(LD_LOG_NOTICE, topic, __VA_ARGS__)
#define LD_WARN(topic, ...) LD_LOG_(LD_LOG_WARN, topic, __VA_ARGS__)
#define LD_ERROR(topic, ...) LD_LOG_(LD_LOG_ERROR, topic, __VA_ARGS__)

#endif
