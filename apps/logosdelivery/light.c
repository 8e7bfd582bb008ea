/* What the commands print (one JSON line per message) and the store query made from the query
 * flags. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/error.h"
#include "logosdelivery/client.h"

/* ---- output --------------------------------------------------------------------------------- */

/* Printable: no control characters other than tab, CR and LF (jansson checks the UTF-8). */
static bool printable(const uint8_t *p, size_t len) {
  for (size_t i = 0; i < len; i++)
    if ((p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r') || p[i] == 0x7f)
      return false;
  return true;
}

static json_t *base64_json(const uint8_t *data, size_t len) {
  size_t cap = LD_BASE64_ENCODED_LEN(len) + 1;
  char *text = malloc(cap);
  if (text == NULL || ld_base64_encode(data, len, text, cap) < 0) {
    free(text);
    return json_null();
  }
  json_t *s = json_string(text);
  free(text);
  return s;
}

static json_t *hash_json(const uint8_t hash[LD_WAKU_HASH_LEN]) {
  char hex[LD_WAKU_HASH_HEX_LEN + 1];
  ld_waku_hash_to_hex(hash, hex);
  return json_string(hex);
}

json_t *ld_client_message_json(const char *pubsub_topic, const ld_waku_message_t *msg,
                               const uint8_t hash[LD_WAKU_HASH_LEN]) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  json_object_set_new(o, "pubsubTopic", json_string(pubsub_topic));
  json_object_set_new(o, "contentTopic", json_stringn(msg->content_topic, msg->content_topic_len));
  json_object_set_new(o, "payload", base64_json(msg->payload, msg->payload_len));
  json_t *text = printable(msg->payload, msg->payload_len)
                     ? json_stringn((const char *)msg->payload, msg->payload_len)
                     : NULL;
  if (text != NULL)
    json_object_set_new(o, "text", text);
  json_object_set_new(o, "timestamp", json_integer(msg->timestamp));
  json_object_set_new(o, "ephemeral", json_boolean(msg->ephemeral));
  if (msg->meta_len > 0)
    json_object_set_new(o, "meta", base64_json(msg->meta, msg->meta_len));
  json_object_set_new(o, "hash", hash_json(hash));
  return o;
}

static void print_json(json_t *o) {
  char *line = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
  json_decref(o);
  if (line == NULL) {
    fprintf(stderr, "out of memory printing a message\n");
    return;
  }
  printf("%s\n", line);
  fflush(stdout);
  free(line);
}

void ld_client_print_message(const char *pubsub_topic, const ld_waku_message_t *msg,
                             const uint8_t hash[LD_WAKU_HASH_LEN]) {
  print_json(ld_client_message_json(pubsub_topic, msg, hash));
}

void ld_client_print_hash(const char *key, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  json_t *o = json_object();
  if (o != NULL)
    json_object_set_new(o, key, hash_json(hash));
  print_json(o);
}

/* ---- the store query ------------------------------------------------------------------------ */

static int parse_hash(const char *flag, const char *text, uint8_t out[LD_WAKU_HASH_LEN], char *err,
                      size_t errlen) {
  if (ld_waku_hash_from_hex(text, strlen(text), out) != 0) {
    snprintf(err, errlen,
             "--%s '%.200s': expected 64 hex digits (0x optional); copy the whole %s as "
             "send or query printed it",
             flag, text, strcmp(flag, "cursor") == 0 ? "cursor" : "message hash");
    return LD_ERR_INVALID_ARG;
  }
  return 0;
}

static int build_hashes(const ld_client_opts_t *o, ld_client_query_t *out, char *err,
                        size_t errlen) {
  if (o->hashes.count > LD_STORE_MAX_HASHES) {
    snprintf(err, errlen, "--hash: at most %d values; split the hashes over several queries",
             LD_STORE_MAX_HASHES);
    return LD_ERR_INVALID_ARG;
  }
  for (size_t i = 0; i < o->hashes.count; i++)
    if (parse_hash("hash", o->hashes.items[i], out->hashes[i], err, errlen) != 0)
      return LD_ERR_INVALID_ARG;
  out->q.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])out->hashes;
  out->q.n_hashes = o->hashes.count;
  return 0;
}

static int build_topics(const ld_client_opts_t *o, ld_client_query_t *out, char *err,
                        size_t errlen) {
  if (o->content_topics.count > LD_STORE_MAX_CONTENT_TOPICS) {
    snprintf(err, errlen,
             "--content-topic: at most %d values; split the topics over several queries",
             LD_STORE_MAX_CONTENT_TOPICS);
    return LD_ERR_INVALID_ARG;
  }
  for (size_t i = 0; i < o->content_topics.count; i++) {
    if (o->content_topics.items[i][0] == '\0') {
      snprintf(err, errlen,
               "--content-topic: empty topic; write /<app>/<version>/<topic>/<encoding>, or leave "
               "the flag out");
      return LD_ERR_INVALID_ARG;
    }
    out->topics[i] = o->content_topics.items[i];
  }
  out->q.content_topics = out->topics;
  out->q.n_content_topics = o->content_topics.count;
  if (o->pubsub_topic[0] != '\0')
    out->q.pubsub_topic = o->pubsub_topic;
  return 0;
}

static int build_cursor(const ld_client_opts_t *o, ld_client_query_t *out, char *err,
                        size_t errlen) {
  static const uint8_t zero[LD_WAKU_HASH_LEN];
  if (o->cursor[0] == '\0')
    return 0;
  if (parse_hash("cursor", o->cursor, out->q.cursor, err, errlen) != 0)
    return LD_ERR_INVALID_ARG;
  if (memcmp(out->q.cursor, zero, sizeof zero) == 0) {
    snprintf(err, errlen,
             "--cursor: an all-zero cursor is invalid; give the cursor the previous page printed, "
             "or leave --cursor out for the first page");
    return LD_ERR_INVALID_ARG;
  }
  out->q.has_cursor = true;
  return 0;
}

static int build_times(const ld_client_opts_t *o, ld_client_query_t *out, char *err,
                       size_t errlen) {
  if (o->start_time >= 0 && o->end_time >= 0 && o->start_time > o->end_time) {
    snprintf(err, errlen,
             "--start-time %lld is after --end-time %lld; swap them (both in nanoseconds since "
             "1970)",
             (long long)o->start_time, (long long)o->end_time);
    return LD_ERR_INVALID_ARG;
  }
  out->q.has_time_start = o->start_time >= 0;
  out->q.time_start = o->start_time >= 0 ? o->start_time : 0;
  out->q.has_time_end = o->end_time >= 0;
  out->q.time_end = o->end_time >= 0 ? o->end_time : 0;
  return 0;
}

int ld_client_query_build(const ld_client_opts_t *o, ld_client_query_t *out, char *err,
                          size_t errlen) {
  memset(out, 0, sizeof *out);
  ld_store_query_init(&out->q);
  out->q.include_data = !o->no_data;
  out->q.forward = !o->backward;
  out->q.has_limit = o->page_size > 0;
  out->q.limit = o->page_size > 0 ? (uint64_t)o->page_size : 0;
  int rc = build_topics(o, out, err, errlen);
  if (rc == 0)
    rc = build_hashes(o, out, err, errlen);
  if (rc == 0)
    rc = build_cursor(o, out, err, errlen);
  if (rc == 0)
    rc = build_times(o, out, err, errlen);
  return rc;
}
