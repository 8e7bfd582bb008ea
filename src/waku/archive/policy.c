/* --store-message-retention-policy values: "time:<s>", "capacity:<n>", "size:<x>mb|gb". */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "waku/archive/archive.h"

/* Longest policy entry we look at. */
#define POLICY_ENTRY_MAX 64
/* time:<s> must fit in nanoseconds; capacity:<n> must leave room for n·1.3. */
#define POLICY_MAX_SECONDS (INT64_MAX / 1000000000ll)
#define POLICY_MAX_CAPACITY (UINT64_C(1) << 48)

/* Parses a positive decimal integer of the whole string. */
static int parse_count(const char *s, uint64_t max, uint64_t *out) {
  if (*s == 0)
    return LD_ERR_INVALID_ARG;
  uint64_t v = 0;
  for (; *s; s++) {
    if (!isdigit((unsigned char)*s))
      return LD_ERR_INVALID_ARG;
    v = v * 10 + (uint64_t)(*s - '0');
    if (v > max)
      return LD_ERR_INVALID_ARG;
  }
  if (v == 0)
    return LD_ERR_INVALID_ARG;
  *out = v;
  return 0;
}

/* "<digits>[.<digits>](mb|gb)" → bytes (1024-based), truncated; must be > 0. */
static int parse_size(const char *s, uint64_t *out) {
  size_t n = strlen(s);
  if (n < 3)
    return LD_ERR_INVALID_ARG;
  double mult;
  if (strcasecmp(s + n - 2, "mb") == 0)
    mult = 1024.0 * 1024.0;
  else if (strcasecmp(s + n - 2, "gb") == 0)
    mult = 1024.0 * 1024.0 * 1024.0;
  else
    return LD_ERR_INVALID_ARG;
  double v = 0, scale = 1;
  bool dot = false, digits = false;
  for (size_t i = 0; i < n - 2; i++) {
    if (s[i] == '.' && !dot) {
      dot = true;
    } else if (isdigit((unsigned char)s[i])) {
      digits = true;
      if (dot)
        v += (s[i] - '0') * (scale /= 10);
      else
        v = v * 10 + (s[i] - '0');
    } else {
      return LD_ERR_INVALID_ARG;
    }
  }
  double bytes = v * mult;
  if (!digits || bytes < 1 || bytes > 9.0e18)
    return LD_ERR_INVALID_ARG;
  *out = (uint64_t)bytes;
  return 0;
}

static int parse_entry(const char *entry, ld_archive_policy_t *p, char *why, size_t why_len) {
  const char *colon = strchr(entry, ':');
  if (colon == NULL)
    return ld_error_fmt(why, why_len, LD_ERR_INVALID_ARG, "invalid retention policy format: %s",
                        entry);
  size_t klen = (size_t)(colon - entry);
  const char *arg = colon + 1;
  if (klen == 4 && strncasecmp(entry, "time", 4) == 0) {
    p->kind = LD_ARCHIVE_POLICY_TIME;
    if (parse_count(arg, POLICY_MAX_SECONDS, &p->value) != 0)
      return ld_error_fmt(why, why_len, LD_ERR_INVALID_ARG,
                          "invalid time retention policy argument: %s", arg);
  } else if (klen == 8 && strncasecmp(entry, "capacity", 8) == 0) {
    p->kind = LD_ARCHIVE_POLICY_CAPACITY;
    if (parse_count(arg, POLICY_MAX_CAPACITY, &p->value) != 0)
      return ld_error_fmt(why, why_len, LD_ERR_INVALID_ARG,
                          "invalid capacity retention policy argument: %s", arg);
  } else if (klen == 4 && strncasecmp(entry, "size", 4) == 0) {
    p->kind = LD_ARCHIVE_POLICY_SIZE;
    if (parse_size(arg, &p->value) != 0)
      return ld_error_fmt(why, why_len, LD_ERR_INVALID_ARG,
                          "invalid size retention policy argument: %s", arg);
  } else {
    return ld_error_fmt(why, why_len, LD_ERR_INVALID_ARG, "unknown retention policy: %s", entry);
  }
  return 0;
}

/* Copies text[0..len) without surrounding blanks into out (POLICY_ENTRY_MAX + 1 bytes). */
static int trimmed(const char *text, size_t len, char *out) {
  while (len > 0 && isspace((unsigned char)text[0])) {
    text++;
    len--;
  }
  while (len > 0 && isspace((unsigned char)text[len - 1]))
    len--;
  if (len > POLICY_ENTRY_MAX)
    return LD_ERR_INVALID_ARG;
  memcpy(out, text, len);
  out[len] = 0;
  return 0;
}

int ld_archive_policy_parse(const char *text, ld_archive_policy_t *out, size_t max, char *why,
                            size_t why_len) {
  if (why != NULL && why_len > 0)
    why[0] = 0;
  if (text == NULL || (out == NULL && max > 0))
    return ld_error_fmt(why, why_len, LD_ERR_INVALID_ARG, "no retention policy text");
  char entry[POLICY_ENTRY_MAX + 1];
  if (trimmed(text, strlen(text), entry) == 0 && (entry[0] == 0 || strcasecmp(entry, "none") == 0))
    return 0;
  size_t n = 0;
  for (const char *p = text;;) {
    size_t len = strcspn(p, ";,");
    if (trimmed(p, len, entry) != 0)
      return ld_error_fmt(why, why_len, LD_ERR_INVALID_ARG, "retention policy entry too long");
    if (entry[0] != 0) {
      if (n == max)
        return ld_error_fmt(why, why_len, LD_ERR_INVALID_ARG, "more than %zu retention policies",
                            max);
      int rc = parse_entry(entry, &out[n], why, why_len);
      if (rc != 0)
        return rc;
      n++;
    }
    if (p[len] == 0)
      break;
    p += len + 1;
  }
  if (n == 0)
    return ld_error_fmt(why, why_len, LD_ERR_INVALID_ARG, "empty retention policy list");
  return (int)n;
}
