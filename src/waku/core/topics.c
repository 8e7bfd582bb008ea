#include "waku/core/topics.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

#define PREFIX_LEN (sizeof LD_WAKU_STATIC_SHARD_PREFIX - 1)

static const struct {
  const char *name;
  const char *text;
} k_reasons[] = {
    [LD_TOPIC_OK] = {"OK", "valid topic"},
    [LD_TOPIC_ERR_NO_LEADING_SLASH] = {"NO_LEADING_SLASH",
                                       "invalid format: content-topic must start with slash"},
    [LD_TOPIC_ERR_STRUCTURE] = {"STRUCTURE",
                                "invalid format: Invalid content topic structure. Expected either "
                                "/<application>/<version>/<topic-name>/<encoding> or "
                                "/<gen>/<application>/<version>/<topic-name>/<encoding>"},
    [LD_TOPIC_ERR_MISSING_GENERATION] = {"MISSING_GENERATION", "missing part: generation"},
    [LD_TOPIC_ERR_BAD_GENERATION] = {"BAD_GENERATION",
                                     "invalid format: generation should be a numeric value"},
    [LD_TOPIC_ERR_MISSING_APPLICATION] = {"MISSING_APPLICATION", "missing part: application"},
    [LD_TOPIC_ERR_MISSING_VERSION] = {"MISSING_VERSION", "missing part: version"},
    [LD_TOPIC_ERR_MISSING_NAME] = {"MISSING_NAME", "missing part: topic-name"},
    [LD_TOPIC_ERR_MISSING_ENCODING] = {"MISSING_ENCODING", "missing part: encoding"},
    [LD_TOPIC_ERR_GENERATION_UNSUPPORTED] = {"GENERATION_UNSUPPORTED",
                                             "Generation > 0 are not supported yet"},
    [LD_TOPIC_ERR_NOT_STATIC_SHARD] = {"NOT_STATIC_SHARD", "invalid format: must start with "
                                                           "/waku/2/rs"},
    [LD_TOPIC_ERR_PUBSUB_STRUCTURE] = {"PUBSUB_STRUCTURE",
                                       "invalid format: invalid topic structure"},
    [LD_TOPIC_ERR_MISSING_CLUSTER] = {"MISSING_CLUSTER", "missing part: cluster_id"},
    [LD_TOPIC_ERR_MISSING_SHARD] = {"MISSING_SHARD", "missing part: shard_number"},
    [LD_TOPIC_ERR_BAD_CLUSTER] = {"BAD_CLUSTER", "invalid format: cluster id must be a decimal "
                                                 "number 0..65535 without leading zeros"},
    [LD_TOPIC_ERR_BAD_SHARD] = {"BAD_SHARD", "invalid format: shard number must be a decimal "
                                             "number 0..65535 without leading zeros"},
};

#define N_REASONS (sizeof k_reasons / sizeof k_reasons[0])

const char *ld_topic_strerror(ld_topic_error_t why) {
  return (unsigned)why < N_REASONS ? k_reasons[why].text : "unknown topic error";
}

const char *ld_topic_errname(ld_topic_error_t why) {
  return (unsigned)why < N_REASONS ? k_reasons[why].name : "UNKNOWN";
}

static void set_why(ld_topic_error_t *why, ld_topic_error_t reason) {
  if (why != NULL)
    *why = reason;
}

/* Splits s[0..len) on '/' into at most `max` parts; returns the number of parts there are. */
static size_t split_parts(const char *s, size_t len, ld_topic_part_t *parts, size_t max) {
  size_t n = 0, start = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && s[i] != '/')
      continue;
    if (n < max) {
      parts[n].data = s + start;
      parts[n].len = i - start;
    }
    n++;
    start = i + 1;
  }
  return n;
}

/* Decimal digits only, at most `max`. */
static bool parse_decimal(ld_topic_part_t p, uint64_t max, uint64_t *out) {
  uint64_t v = 0;
  if (p.len == 0)
    return false;
  for (size_t i = 0; i < p.len; i++) {
    if (p.data[i] < '0' || p.data[i] > '9')
      return false;
    v = v * 10 + (uint64_t)(p.data[i] - '0');
    if (v > max)
      return false;
  }
  *out = v;
  return true;
}

/* ---- content topics ------------------------------------------------------------------------- */

static ld_topic_error_t parse_content(const char *text, size_t len, ld_content_topic_t *t) {
  static const ld_topic_error_t missing[4] = {
      LD_TOPIC_ERR_MISSING_APPLICATION, LD_TOPIC_ERR_MISSING_VERSION, LD_TOPIC_ERR_MISSING_NAME,
      LD_TOPIC_ERR_MISSING_ENCODING};
  if (len == 0 || text[0] != '/')
    return LD_TOPIC_ERR_NO_LEADING_SLASH;
  ld_topic_part_t p[5];
  size_t n = split_parts(text + 1, len - 1, p, 5);
  if (n != 4 && n != 5)
    return LD_TOPIC_ERR_STRUCTURE;
  memset(t, 0, sizeof *t);
  const ld_topic_part_t *rest = p;
  if (n == 5) {
    uint64_t gen;
    if (p[0].len == 0)
      return LD_TOPIC_ERR_MISSING_GENERATION;
    if (!parse_decimal(p[0], UINT32_MAX, &gen))
      return LD_TOPIC_ERR_BAD_GENERATION;
    t->has_generation = true;
    t->generation = (uint32_t)gen;
    rest = p + 1;
  }
  for (int i = 0; i < 4; i++)
    if (rest[i].len == 0)
      return missing[i];
  t->application = rest[0];
  t->version = rest[1];
  t->name = rest[2];
  t->encoding = rest[3];
  return LD_TOPIC_OK;
}

int ld_content_topic_parse(const char *text, size_t len, ld_content_topic_t *out,
                           ld_topic_error_t *why) {
  if (out == NULL || (text == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  ld_content_topic_t t;
  ld_topic_error_t reason = parse_content(text, len, &t);
  set_why(why, reason);
  if (reason != LD_TOPIC_OK)
    return LD_ERR_BAD_CONTENT_TOPIC;
  *out = t;
  return 0;
}

bool ld_content_topic_valid(const char *text, size_t len) {
  ld_content_topic_t t;
  return ld_content_topic_parse(text, len, &t, NULL) == 0;
}

static char *put_part(char *p, const char *data, size_t len) {
  *p++ = '/';
  if (len > 0)
    memcpy(p, data, len);
  return p + len;
}

int ld_content_topic_format(const ld_content_topic_t *topic, char *out, size_t cap) {
  if (topic == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  const ld_topic_part_t *parts[4] = {&topic->application, &topic->version, &topic->name,
                                     &topic->encoding};
  char gen[16] = "";
  size_t glen =
      topic->has_generation ? (size_t)snprintf(gen, sizeof gen, "%" PRIu32, topic->generation) : 0;
  size_t need = topic->has_generation ? 1 + glen : 0;
  for (int i = 0; i < 4; i++) {
    if (parts[i]->data == NULL && parts[i]->len > 0)
      return LD_ERR_INVALID_ARG;
    need += 1 + parts[i]->len;
  }
  if (need >= cap || need > INT_MAX)
    return LD_ERR_LIMIT;
  char *p = out;
  if (topic->has_generation)
    p = put_part(p, gen, glen);
  for (int i = 0; i < 4; i++)
    p = put_part(p, parts[i]->data, parts[i]->len);
  *p = '\0';
  return (int)need;
}

/* ---- pubsub topics -------------------------------------------------------------------------- */

static ld_topic_error_t parse_pubsub(const char *text, size_t len, ld_relay_shard_t *s) {
  if (len < PREFIX_LEN || memcmp(text, LD_WAKU_STATIC_SHARD_PREFIX, PREFIX_LEN) != 0)
    return LD_TOPIC_ERR_NOT_STATIC_SHARD;
  ld_topic_part_t p[2];
  uint64_t cluster, shard;
  if (split_parts(text + PREFIX_LEN, len - PREFIX_LEN, p, 2) != 2)
    return LD_TOPIC_ERR_PUBSUB_STRUCTURE;
  if (p[0].len == 0)
    return LD_TOPIC_ERR_MISSING_CLUSTER;
  if ((p[0].len > 1 && p[0].data[0] == '0') || !parse_decimal(p[0], UINT16_MAX, &cluster))
    return LD_TOPIC_ERR_BAD_CLUSTER;
  if (p[1].len == 0)
    return LD_TOPIC_ERR_MISSING_SHARD;
  if ((p[1].len > 1 && p[1].data[0] == '0') || !parse_decimal(p[1], UINT16_MAX, &shard))
    return LD_TOPIC_ERR_BAD_SHARD;
  s->cluster_id = (uint16_t)cluster;
  s->shard_id = (uint16_t)shard;
  return LD_TOPIC_OK;
}

int ld_pubsub_topic_parse(const char *text, size_t len, ld_relay_shard_t *out,
                          ld_topic_error_t *why) {
  if (out == NULL || (text == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  ld_relay_shard_t s;
  ld_topic_error_t reason = parse_pubsub(text, len, &s);
  set_why(why, reason);
  if (reason != LD_TOPIC_OK)
    return LD_ERR_BAD_PUBSUB_TOPIC;
  *out = s;
  return 0;
}

bool ld_pubsub_topic_valid(const char *text, size_t len) {
  ld_relay_shard_t s;
  return ld_pubsub_topic_parse(text, len, &s, NULL) == 0;
}

int ld_pubsub_topic_format(ld_relay_shard_t shard, char *out, size_t cap) {
  if (out == NULL || cap == 0)
    return out == NULL ? LD_ERR_INVALID_ARG : LD_ERR_LIMIT;
  int n = snprintf(out, cap, LD_WAKU_STATIC_SHARD_PREFIX "%u/%u", (unsigned)shard.cluster_id,
                   (unsigned)shard.shard_id);
  return n < 0 || (size_t)n >= cap ? LD_ERR_LIMIT : n;
}
