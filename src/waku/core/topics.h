/* Waku topics (23/WAKU2-TOPICS, RELAY-SHARDING): content topics with an optional generation, and
 * static-shard pubsub topics `/waku/2/rs/<cluster>/<shard>`.
 *
 * Content topics parse as nwaku's NsContentTopic.parse: `/{application}/{version}/{name}/
 * {encoding}` (short form) or `/{generation}/{application}/{version}/{name}/{encoding}`, every
 * part non-empty, the generation a decimal number. Nothing else about the characters is checked.
 *
 * Pubsub topics parse as nwaku's RelayShard.parseStaticSharding, with cluster and shard each a
 * decimal uint16, and one restriction more: the numbers must be written canonically (no sign, no
 * leading zero), so that every topic we accept formats back to the same string (gossipsub matches
 * topics as strings). Named pubsub topics are not understood.
 *
 * A failing parse returns an LD_ERR_* code and, through `why` (may be NULL), the precise reason
 * with nwaku's wording from ld_topic_strerror, for REST answers and logs.
 *
 * Pure functions: no allocation, no global state, any thread. */
#ifndef LD_WAKU_CORE_TOPICS_H
#define LD_WAKU_CORE_TOPICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LD_WAKU_DEFAULT_CONTENT_TOPIC "/waku/2/default-content/proto"
/* nwaku's DefaultPubsubTopic (cluster 0, shard 0). */
#define LD_WAKU_DEFAULT_PUBSUB_TOPIC "/waku/2/rs/0/0"
#define LD_WAKU_STATIC_SHARD_PREFIX "/waku/2/rs/"
/* Longest static-shard pubsub topic text, "/waku/2/rs/65535/65535", without the NUL. */
#define LD_WAKU_PUBSUB_TOPIC_MAX_LEN 22

/* Why a topic was refused. */
typedef enum ld_topic_error {
  LD_TOPIC_OK = 0,
  /* content topics (LD_ERR_BAD_CONTENT_TOPIC) */
  LD_TOPIC_ERR_NO_LEADING_SLASH, /* does not start with '/' */
  LD_TOPIC_ERR_STRUCTURE,        /* neither 4 nor 5 '/'-separated parts */
  LD_TOPIC_ERR_MISSING_GENERATION,
  LD_TOPIC_ERR_BAD_GENERATION, /* not a decimal number that fits 32 bits */
  LD_TOPIC_ERR_MISSING_APPLICATION,
  LD_TOPIC_ERR_MISSING_VERSION,
  LD_TOPIC_ERR_MISSING_NAME,
  LD_TOPIC_ERR_MISSING_ENCODING,
  /* autosharding (LD_ERR_UNSUPPORTED) */
  LD_TOPIC_ERR_GENERATION_UNSUPPORTED, /* generation > 0 */
  /* pubsub topics (LD_ERR_BAD_PUBSUB_TOPIC) */
  LD_TOPIC_ERR_NOT_STATIC_SHARD, /* does not start with "/waku/2/rs/" */
  LD_TOPIC_ERR_PUBSUB_STRUCTURE, /* not exactly <cluster>/<shard> after the prefix */
  LD_TOPIC_ERR_MISSING_CLUSTER,
  LD_TOPIC_ERR_MISSING_SHARD,
  LD_TOPIC_ERR_BAD_CLUSTER, /* not a canonical decimal 0..65535 */
  LD_TOPIC_ERR_BAD_SHARD,   /* not a canonical decimal 0..65535 */
} ld_topic_error_t;

/* A static, human-readable reason ("missing part: application"); never NULL. */
const char *ld_topic_strerror(ld_topic_error_t why);

/* The symbolic name without the prefix ("MISSING_APPLICATION"), or "UNKNOWN". */
const char *ld_topic_errname(ld_topic_error_t why);

/* A counted view into someone else's text (not NUL-terminated). */
typedef struct ld_topic_part {
  const char *data;
  size_t len;
} ld_topic_part_t;

/* A parsed content topic. The parts are views into the parsed text and live as long as it. */
typedef struct ld_content_topic {
  bool has_generation;
  uint32_t generation;
  ld_topic_part_t application;
  ld_topic_part_t version;
  ld_topic_part_t name;
  ld_topic_part_t encoding;
} ld_content_topic_t;

/* Parses `text[0..len)`. Returns 0, or LD_ERR_BAD_CONTENT_TOPIC with the reason in *why
 * (LD_TOPIC_ERR_NO_LEADING_SLASH … LD_TOPIC_ERR_MISSING_ENCODING), or LD_ERR_INVALID_ARG (NULL
 * text with a nonzero length, NULL out). `out` is written only on success. */
int ld_content_topic_parse(const char *text, size_t len, ld_content_topic_t *out,
                           ld_topic_error_t *why);

/* True when `text[0..len)` parses as a content topic. */
bool ld_content_topic_valid(const char *text, size_t len);

/* Writes `"/" [generation "/"] application "/" version "/" name "/" encoding` and a NUL to `out`
 * (room for `cap` chars). Returns the text length, LD_ERR_LIMIT when it does not fit (nothing
 * guaranteed about `out` then), or LD_ERR_INVALID_ARG (NULL arguments). */
int ld_content_topic_format(const ld_content_topic_t *topic, char *out, size_t cap);

/* A static shard: a cluster and a shard index within it. Plain value type. */
typedef struct ld_relay_shard {
  uint16_t cluster_id;
  uint16_t shard_id;
} ld_relay_shard_t;

/* Parses a static-shard pubsub topic `text[0..len)`. Returns 0, or LD_ERR_BAD_PUBSUB_TOPIC with
 * the reason in *why (LD_TOPIC_ERR_NOT_STATIC_SHARD … LD_TOPIC_ERR_BAD_SHARD), or
 * LD_ERR_INVALID_ARG. `out` is written only on success. */
int ld_pubsub_topic_parse(const char *text, size_t len, ld_relay_shard_t *out,
                          ld_topic_error_t *why);

/* True when `text[0..len)` parses as a static-shard pubsub topic. */
bool ld_pubsub_topic_valid(const char *text, size_t len);

/* Writes "/waku/2/rs/<cluster>/<shard>" and a NUL to `out` (room for `cap` chars; cap >
 * LD_WAKU_PUBSUB_TOPIC_MAX_LEN always suffices). Returns the text length, LD_ERR_LIMIT or
 * LD_ERR_INVALID_ARG. */
int ld_pubsub_topic_format(ld_relay_shard_t shard, char *out, size_t cap);

#endif
