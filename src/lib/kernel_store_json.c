#include "lib/kernel_store_json.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/error.h"
#include "rest/json.h"

/* ---- parsing ----------------------------------------------------------------------------------
 */

/* The value of `key`, or NULL when it is absent or null. */
static const json_t *field(const json_t *obj, const char *key) {
  const json_t *v = json_object_get(obj, key);
  return json_is_null(v) ? NULL : v;
}

/* A copy of a JSON string without embedded NUL bytes; NULL with *rc set otherwise. */
static char *copy_string(const json_t *v, int *rc) {
  size_t n = json_string_length(v);
  const char *s = json_string_value(v);
  if (s == NULL || strlen(s) != n) {
    *rc = LD_ERR_MALFORMED;
    return NULL;
  }
  char *out = malloc(n + 1);
  if (out == NULL) {
    *rc = LD_ERR_NOMEM;
    return NULL;
  }
  memcpy(out, s, n + 1);
  return out;
}

static int required(const json_t *obj, const char *key, bool want_bool, const json_t **out,
                    char *err, size_t cap) {
  const json_t *v = field(obj, key);
  if (v == NULL)
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "key not found: %s", key);
  if (want_bool ? !json_is_boolean(v) : !json_is_string(v))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s must be a %s", key,
                        want_bool ? "bool" : "string");
  *out = v;
  return 0;
}

/* A JSON integer, or a decimal string with an optional sign, that fits int64. */
static int parse_int64(const json_t *obj, const char *key, bool *has, int64_t *out, char *err,
                       size_t cap) {
  const json_t *v = field(obj, key);
  *has = false;
  if (v == NULL)
    return 0;
  if (json_is_integer(v)) {
    *out = (int64_t)json_integer_value(v);
    *has = true;
    return 0;
  }
  const char *s = json_string_value(v);
  size_t n = json_string_length(v);
  size_t digits = s != NULL && n > 0 && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  char *end = NULL;
  errno = 0;
  long long x = 0;
  if (s != NULL && n > digits && n <= 20 && strlen(s) == n && isdigit((unsigned char)s[digits]))
    x = strtoll(s, &end, 10);
  if (end == NULL || *end != '\0' || errno != 0)
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "Invalid int64 value in `%s`", key);
  *out = (int64_t)x;
  *has = true;
  return 0;
}

static int parse_hash(const json_t *v, const char *what, uint8_t out[LD_WAKU_HASH_LEN], char *err,
                      size_t cap) {
  const char *s = json_string_value(v);
  if (s == NULL || ld_waku_hash_from_hex(s, json_string_length(v), out) != 0)
    return ld_error_fmt(err, cap, LD_ERR_BAD_ENCODING,
                        "Failed converting %s hex string to bytes: expected 0x and 64 hex digits",
                        what);
  return 0;
}

static int parse_ids(const json_t *obj, ld_kernel_store_query_t *kq, char *err, size_t cap) {
  const json_t *v = NULL;
  int rc = required(obj, "requestId", false, &v, err, cap);
  if (rc != 0)
    return rc;
  if (json_string_length(v) > LD_STORE_MAX_REQUEST_ID_LEN)
    return ld_error_fmt(err, cap, LD_ERR_LIMIT, "requestId longer than %d bytes",
                        LD_STORE_MAX_REQUEST_ID_LEN);
  kq->request_id = copy_string(v, &rc);
  if (kq->request_id == NULL)
    return ld_error_fmt(err, cap, rc, "invalid requestId");
  /* an empty ID makes the client generate one, as nwaku's does */
  kq->q.request_id = kq->request_id[0] != '\0' ? kq->request_id : NULL;
  const json_t *b = NULL;
  if ((rc = required(obj, "includeData", true, &b, err, cap)) != 0)
    return rc;
  kq->q.include_data = json_is_true(b);
  if ((rc = required(obj, "paginationForward", true, &b, err, cap)) != 0)
    return rc;
  kq->q.forward = json_is_true(b);
  kq->q.has_forward = true;
  return 0;
}

static int parse_pubsub_topic(const json_t *obj, ld_kernel_store_query_t *kq, char *err,
                              size_t cap) {
  const json_t *v = field(obj, "pubsubTopic");
  if (v == NULL)
    return 0;
  int rc = LD_ERR_MALFORMED;
  kq->pubsub_topic = json_is_string(v) ? copy_string(v, &rc) : NULL;
  if (kq->pubsub_topic == NULL)
    return ld_error_fmt(err, cap, rc, "pubsubTopic must be a string");
  kq->q.pubsub_topic = kq->pubsub_topic;
  return 0;
}

static int parse_content_topics(const json_t *obj, ld_kernel_store_query_t *kq, char *err,
                                size_t cap) {
  const json_t *v = field(obj, "contentTopics");
  if (v == NULL)
    return 0;
  if (!json_is_array(v))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "contentTopics must be an array of strings");
  size_t n = json_array_size(v);
  if (n > LD_STORE_MAX_CONTENT_TOPICS)
    return ld_error_fmt(err, cap, LD_ERR_LIMIT, "more than %d contentTopics",
                        LD_STORE_MAX_CONTENT_TOPICS);
  kq->content_topics = calloc(n > 0 ? n : 1, sizeof *kq->content_topics);
  if (kq->content_topics == NULL)
    return ld_error_fmt(err, cap, LD_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    const json_t *t = json_array_get(v, i);
    int rc = LD_ERR_MALFORMED;
    kq->content_topics[i] = json_is_string(t) ? copy_string(t, &rc) : NULL;
    if (kq->content_topics[i] == NULL)
      return ld_error_fmt(err, cap, rc, "contentTopics must be an array of strings");
    kq->n_content_topics = i + 1;
  }
  kq->q.content_topics = (const char *const *)kq->content_topics;
  kq->q.n_content_topics = n;
  return 0;
}

static int parse_hashes(const json_t *obj, ld_kernel_store_query_t *kq, char *err, size_t cap) {
  const json_t *v = field(obj, "messageHashes");
  if (v == NULL)
    return 0;
  if (!json_is_array(v))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "messageHashes must be an array of strings");
  size_t n = json_array_size(v);
  if (n > LD_STORE_MAX_HASHES)
    return ld_error_fmt(err, cap, LD_ERR_LIMIT, "more than %d messageHashes", LD_STORE_MAX_HASHES);
  kq->hashes = calloc(n > 0 ? n : 1, sizeof *kq->hashes);
  if (kq->hashes == NULL)
    return ld_error_fmt(err, cap, LD_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    int rc = parse_hash(json_array_get(v, i), "message hash", kq->hashes[i], err, cap);
    if (rc != 0)
      return rc;
  }
  kq->q.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])kq->hashes;
  kq->q.n_hashes = n;
  return 0;
}

static int parse_paging(const json_t *obj, ld_kernel_store_query_t *kq, char *err, size_t cap) {
  const json_t *c = field(obj, "paginationCursor");
  if (c != NULL) {
    int rc = parse_hash(c, "paginationCursor", kq->q.cursor, err, cap);
    if (rc != 0)
      return rc;
    kq->q.has_cursor = true;
    kq->q.cursor_len = LD_WAKU_HASH_LEN;
  }
  const json_t *l = field(obj, "paginationLimit");
  if (l == NULL)
    return 0;
  if (!json_is_integer(l) || json_integer_value(l) < 0)
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED,
                        "paginationLimit must be a non-negative integer");
  kq->q.has_limit = true;
  kq->q.limit = (uint64_t)json_integer_value(l);
  return 0;
}

static int parse_object(const json_t *obj, ld_kernel_store_query_t *kq, char *err, size_t cap) {
  int rc = parse_ids(obj, kq, err, cap);
  if (rc == 0)
    rc = parse_pubsub_topic(obj, kq, err, cap);
  if (rc == 0)
    rc = parse_content_topics(obj, kq, err, cap);
  if (rc == 0)
    rc = parse_int64(obj, "timeStart", &kq->q.has_time_start, &kq->q.time_start, err, cap);
  if (rc == 0)
    rc = parse_int64(obj, "timeEnd", &kq->q.has_time_end, &kq->q.time_end, err, cap);
  if (rc == 0)
    rc = parse_hashes(obj, kq, err, cap);
  return rc != 0 ? rc : parse_paging(obj, kq, err, cap);
}

int ld_kernel_store_query_parse(const char *json, size_t len, ld_kernel_store_query_t *out,
                                char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  ld_store_query_init(&out->q);
  if (json == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "no query");
  if (len > LD_KERNEL_STORE_MAX_QUERY_JSON)
    return ld_error_fmt(err, errlen, LD_ERR_TOO_LARGE, "query longer than %u bytes",
                        LD_KERNEL_STORE_MAX_QUERY_JSON);
  json_error_t je;
  json_t *root = json_loadb(json, len, 0, &je);
  if (root == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "%s (line %d, column %d)", je.text, je.line,
                        je.column);
  int rc = json_is_object(root)
               ? parse_object(root, out, err, errlen)
               : ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "expected a JSON object");
  json_decref(root);
  if (rc != 0)
    ld_kernel_store_query_clear(out);
  return rc;
}

void ld_kernel_store_query_clear(ld_kernel_store_query_t *kq) {
  free(kq->request_id);
  free(kq->pubsub_topic);
  for (size_t i = 0; i < kq->n_content_topics; i++)
    free(kq->content_topics[i]);
  free(kq->content_topics);
  free(kq->hashes);
  memset(kq, 0, sizeof *kq);
  ld_store_query_init(&kq->q);
}

/* ---- rendering --------------------------------------------------------------------------------
 */

static json_t *bytes_array(const uint8_t *p, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; a != NULL && i < n; i++)
    if (json_array_append_new(a, json_integer(p[i])) != 0) {
      json_decref(a);
      a = NULL;
    }
  return a;
}

static json_t *message_json(const ld_waku_message_t *m) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  int bad = ld_rest_json_set(o, "payload", bytes_array(m->payload, m->payload_len));
  bad |= ld_rest_json_set(o, "contentTopic",
                          ld_rest_json_string(m->content_topic, m->content_topic_len));
  bad |= ld_rest_json_set(o, "meta", bytes_array(m->meta, m->meta_len));
  bad |= ld_rest_json_set(o, "version", json_integer(m->version));
  bad |= ld_rest_json_set(o, "timestamp", json_integer(m->timestamp));
  bad |= ld_rest_json_set(o, "ephemeral", json_boolean(m->ephemeral));
  bad |= ld_rest_json_set(o, "proof", bytes_array(m->proof, m->proof_len));
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static json_t *entry_json(const ld_store_entry_t *e) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  int bad = ld_rest_json_set(o, "messageHash", ld_rest_json_hash(e->hash));
  if (e->pubsub_topic != NULL) {
    bad |= ld_rest_json_set(o, "message", message_json(&e->message));
    bad |= ld_rest_json_set(o, "pubsubTopic",
                            ld_rest_json_string(e->pubsub_topic, strlen(e->pubsub_topic)));
  }
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static json_t *entries_json(const ld_store_response_t *res) {
  json_t *a = json_array();
  for (size_t i = 0; a != NULL && i < res->n_entries; i++)
    if (json_array_append_new(a, entry_json(&res->entries[i])) != 0) {
      json_decref(a);
      a = NULL;
    }
  return a;
}

static json_t *reply_object(const ld_store_response_t *res) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  const char *id = res->request_id != NULL ? res->request_id : "";
  const char *desc = res->status_desc != NULL ? res->status_desc : "";
  int bad = ld_rest_json_set(o, "requestId", ld_rest_json_string(id, strlen(id)));
  bad |= ld_rest_json_set(o, "statusCode", json_integer(res->status_code));
  bad |= ld_rest_json_set(o, "statusDesc", ld_rest_json_string(desc, strlen(desc)));
  bad |= ld_rest_json_set(o, "messages", entries_json(res));
  if (res->has_cursor)
    bad |= ld_rest_json_set(o, "paginationCursor", ld_rest_json_hash(res->cursor));
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

char *ld_kernel_store_reply_json(const ld_store_response_t *res) {
  json_t *o = reply_object(res);
  if (o == NULL)
    return NULL;
  char *text = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return text;
}
