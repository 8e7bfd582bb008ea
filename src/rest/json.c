#include "rest/json.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/error.h"
#include "base/utf8.h"
#include "waku/core/topics.h"

bool ld_rest_is_blank(const char *s, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (!isspace((unsigned char)s[i]))
      return false;
  return true;
}

/* "application/json; charset=utf-8" → true when the media type is one of ours. */
static bool acceptable_content_type(const char *ct) {
  while (*ct == ' ' || *ct == '\t')
    ct++;
  size_t len = strcspn(ct, ";");
  while (len > 0 && (ct[len - 1] == ' ' || ct[len - 1] == '\t'))
    len--;
  return (len == 16 && strncasecmp(ct, "application/json", 16) == 0) ||
         (len == 10 && strncasecmp(ct, "text/plain", 10) == 0);
}

int ld_rest_json_parse(const uint8_t *body, size_t len, const char *content_type, json_t **out,
                       char *err, size_t errcap) {
  if (body == NULL || len == 0)
    return ld_error_fmt(err, errcap, LD_ERR_INVALID_ARG, "%s", "Missing content body");
  if (content_type != NULL && !acceptable_content_type(content_type))
    return ld_error_fmt(err, errcap, LD_ERR_UNSUPPORTED, "%s",
                        "Wrong Content-Type, expected application/json or text/plain");
  json_error_t jerr;
  json_t *j = json_loadb((const char *)body, len, JSON_REJECT_DUPLICATES, &jerr);
  if (j == NULL)
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "Invalid content body, could not decode: %s",
                        jerr.text);
  *out = j;
  return 0;
}

int ld_rest_json_strings(const json_t *json, const char ***out, size_t *n, char *err,
                         size_t errcap) {
  if (!json_is_array(json))
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "%s", "Expected a JSON array of strings");
  size_t count = json_array_size(json);
  if (count > LD_REST_MAX_LIST)
    return ld_error_fmt(err, errcap, LD_ERR_LIMIT, "%s", "Too many entries in the list");
  const char **list = count > 0 ? calloc(count, sizeof *list) : NULL;
  if (count > 0 && list == NULL)
    return ld_error_fmt(err, errcap, LD_ERR_NOMEM, "%s", "Out of memory");
  for (size_t i = 0; i < count; i++) {
    const json_t *v = json_array_get(json, i);
    if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
      free(list);
      return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "%s", "Expected a JSON array of strings");
    }
    list[i] = json_string_value(v);
  }
  *out = list;
  *n = count;
  return 0;
}

/* ---- RelayWakuMessage ------------------------------------------------------------------------ */

int ld_rest_base64_decode(const char *text, size_t len, uint8_t **out, size_t *outlen) {
  size_t padded = (len + 3) / 4 * 4;
  char *tmp = malloc(padded + 1);
  uint8_t *buf = malloc(padded / 4 * 3 + 1);
  int rc = tmp != NULL && buf != NULL ? 0 : LD_ERR_NOMEM;
  if (rc == 0 && len % 4 == 1)
    rc = LD_ERR_BAD_ENCODING;
  if (rc == 0) {
    memcpy(tmp, text, len);
    memset(tmp + len, '=', padded - len);
    rc = ld_base64_decode(tmp, padded, buf, padded / 4 * 3 + 1, outlen);
  }
  free(tmp);
  if (rc != 0) {
    free(buf);
    return rc == LD_ERR_NOMEM ? rc : LD_ERR_BAD_ENCODING;
  }
  *out = buf;
  return 0;
}

typedef struct parsed {
  const char *payload, *content_topic, *meta, *proof;
  size_t payload_len, content_topic_len, meta_len, proof_len;
  json_int_t version, timestamp;
  bool ephemeral;
} parsed_t;

/* Reads an optional string field; false when present but not a string. */
static bool opt_string(const json_t *obj, const char *key, const char **s, size_t *len) {
  const json_t *v = json_object_get(obj, key);
  if (v == NULL)
    return true;
  if (!json_is_string(v))
    return false;
  *s = json_string_value(v);
  *len = json_string_length(v);
  return true;
}

static int read_fields(const json_t *j, parsed_t *p, bool require_ct, char *err, size_t cap) {
  if (!json_is_object(j))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s", "Expected a JSON object");
  if (!opt_string(j, "payload", &p->payload, &p->payload_len) || p->payload == NULL ||
      ld_rest_is_blank(p->payload, p->payload_len))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s", "Field `payload` is missing or empty");
  if (!opt_string(j, "contentTopic", &p->content_topic, &p->content_topic_len) ||
      (p->content_topic == NULL && require_ct) ||
      (p->content_topic != NULL && ld_rest_is_blank(p->content_topic, p->content_topic_len)))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s",
                        "Field `contentTopic` is missing or empty");
  if (!opt_string(j, "meta", &p->meta, &p->meta_len))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s", "Field `meta` must be a base64 string");
  if (!opt_string(j, "proof", &p->proof, &p->proof_len))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s", "Field `proof` must be a base64 string");
  const json_t *v = json_object_get(j, "version");
  if (v != NULL && (!json_is_integer(v) || json_integer_value(v) < 0 ||
                    json_integer_value(v) > (json_int_t)UINT32_MAX))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s",
                        "Field `version` must be an unsigned 32-bit integer");
  p->version = v != NULL ? json_integer_value(v) : 0;
  v = json_object_get(j, "timestamp");
  if (v != NULL && !json_is_integer(v))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s", "Field `timestamp` must be an int64");
  p->timestamp = v != NULL ? json_integer_value(v) : 0;
  v = json_object_get(j, "ephemeral");
  if (v != NULL && !json_is_boolean(v))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s", "Field `ephemeral` must be a boolean");
  p->ephemeral = v != NULL && json_is_true(v);
  return 0;
}

typedef struct decoded {
  uint8_t *payload, *meta, *proof;
  size_t payload_len, meta_len, proof_len;
} decoded_t;

static int decode_fields(const parsed_t *p, size_t max_payload, decoded_t *d, char *err,
                         size_t cap) {
  static const char bad[] = "Incorrect base64 string in field `%s`";
  int rc = ld_rest_base64_decode(p->payload, p->payload_len, &d->payload, &d->payload_len);
  if (rc != 0)
    return ld_error_fmt(err, cap, rc, bad, "payload");
  if (max_payload > 0 && d->payload_len > max_payload)
    return ld_error_fmt(err, cap, LD_ERR_TOO_LARGE, "%s", "Field `payload` is too large");
  if (p->meta != NULL &&
      (rc = ld_rest_base64_decode(p->meta, p->meta_len, &d->meta, &d->meta_len)) != 0)
    return ld_error_fmt(err, cap, rc, bad, "meta");
  if (d->meta_len > LD_WAKU_MAX_META_LEN)
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s", "Field `meta` is longer than 64 bytes");
  if (p->proof != NULL &&
      (rc = ld_rest_base64_decode(p->proof, p->proof_len, &d->proof, &d->proof_len)) != 0)
    return ld_error_fmt(err, cap, rc, bad, "proof");
  return 0;
}

int ld_rest_message_from_json(const json_t *json, int64_t now_ns, bool require_content_topic,
                              size_t max_payload, ld_waku_message_t *out, char *err,
                              size_t errcap) {
  parsed_t p = {0};
  decoded_t d = {0};
  ld_waku_message_clear(out);
  int rc = read_fields(json, &p, require_content_topic, err, errcap);
  if (rc == 0)
    rc = decode_fields(&p, max_payload, &d, err, errcap);
  if (rc == 0) {
    ld_waku_message_t m;
    ld_waku_message_init(&m);
    m.payload = d.payload;
    m.payload_len = d.payload_len;
    m.content_topic = p.content_topic != NULL ? p.content_topic : LD_WAKU_DEFAULT_CONTENT_TOPIC;
    m.content_topic_len =
        p.content_topic != NULL ? p.content_topic_len : strlen(LD_WAKU_DEFAULT_CONTENT_TOPIC);
    m.version = (uint32_t)p.version;
    m.timestamp = p.timestamp != 0 ? (int64_t)p.timestamp : now_ns;
    m.meta = d.meta;
    m.meta_len = d.meta_len;
    m.proof = d.proof;
    m.proof_len = d.proof_len;
    m.ephemeral = p.ephemeral;
    if (ld_waku_message_copy(out, &m) != 0)
      rc = ld_error_fmt(err, errcap, LD_ERR_NOMEM, "%s", "Out of memory");
  }
  free(d.payload);
  free(d.meta);
  free(d.proof);
  return rc;
}

json_t *ld_rest_json_base64(const uint8_t *data, size_t len) {
  size_t cap = LD_BASE64_ENCODED_LEN(len) + 1;
  char *text = malloc(cap);
  if (text == NULL)
    return NULL;
  int n = ld_base64_encode(data, len, text, cap);
  json_t *j = n >= 0 ? json_stringn(text, (size_t)n) : NULL;
  free(text);
  return j;
}

json_t *ld_rest_json_hash(const uint8_t hash[LD_WAKU_HASH_LEN]) {
  char hex[LD_WAKU_HASH_HEX_LEN + 1];
  ld_waku_hash_to_hex(hash, hex);
  return json_string(hex);
}

int ld_rest_json_set(json_t *obj, const char *key, json_t *value) {
  return value != NULL ? json_object_set_new(obj, key, value) : -1;
}

/* `sparse`: version, timestamp, ephemeral and proof only when set (meta is always so). */
static json_t *message_json(const ld_waku_message_t *msg, bool sparse) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  int rc = ld_rest_json_set(o, "payload", ld_rest_json_base64(msg->payload, msg->payload_len));
  rc |= ld_rest_json_set(o, "contentTopic",
                         ld_rest_json_string(msg->content_topic, msg->content_topic_len));
  if (!sparse || msg->version != 0)
    rc |= ld_rest_json_set(o, "version", json_integer(msg->version));
  if (!sparse || msg->timestamp != 0)
    rc |= ld_rest_json_set(o, "timestamp", json_integer(msg->timestamp));
  if (msg->meta_len > 0)
    rc |= ld_rest_json_set(o, "meta", ld_rest_json_base64(msg->meta, msg->meta_len));
  if (!sparse || msg->ephemeral)
    rc |= ld_rest_json_set(o, "ephemeral", json_boolean(msg->ephemeral));
  if (!sparse || msg->proof_len > 0)
    rc |= ld_rest_json_set(o, "proof", ld_rest_json_base64(msg->proof, msg->proof_len));
  if (rc != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

json_t *ld_rest_message_to_json(const ld_waku_message_t *msg) {
  return message_json(msg, false);
}

json_t *ld_rest_message_to_sparse_json(const ld_waku_message_t *msg) {
  return message_json(msg, true);
}

/* ---- strings --------------------------------------------------------------------------------- */

json_t *ld_rest_json_string(const char *text, size_t len) {
  if (text == NULL)
    return json_string("");
  json_t *j = json_stringn(text, len);
  if (j != NULL || len == 0)
    return j;
  char *clean = malloc(len * 3 + 1);
  if (clean == NULL)
    return NULL;
  size_t o = 0;
  const unsigned char *s = (const unsigned char *)text;
  for (size_t i = 0; i < len;) {
    size_t n = ld_utf8_char_len(s + i, len - i);
    if (n == 0) {
      memcpy(clean + o, "\xEF\xBF\xBD", 3);
      o += 3;
      i++;
      continue;
    }
    memcpy(clean + o, s + i, n);
    o += n;
    i += n;
  }
  j = json_stringn(clean, o);
  free(clean);
  return j;
}
