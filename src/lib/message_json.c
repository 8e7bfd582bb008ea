#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base64.h"
#include "base/error.h"
#include "lib/message_json.h"

#define SEND_PARSE "Failed to parse message JSON: "
#define KERNEL_PARSE "Error parsing json message: "
#define KERNEL_BUILD "Problem building the WakuMessage: "

/* ---- base64 with optional padding ----------------------------------------------------------- */

/* Decoded size of `n` base64 characters, or SIZE_MAX when no base64 text has that length. */
static size_t b64_decoded_len(const char *text, size_t n) {
  if (n % 4 == 1)
    return SIZE_MAX;
  if (n % 4 != 0)
    return n / 4 * 3 + n % 4 - 1;
  size_t pads = 0;
  while (pads < 2 && pads < n && text[n - 1 - pads] == '=')
    pads++;
  return n / 4 * 3 - pads;
}

/* Decodes `text[0..n)` into a new buffer (NULL when empty). Returns 0, LD_ERR_BAD_ENCODING,
 * LD_ERR_TOO_LARGE (more than `max` bytes) or LD_ERR_NOMEM. */
static int b64_decode(const char *text, size_t n, size_t max, uint8_t **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  size_t want = b64_decoded_len(text, n);
  if (want == SIZE_MAX)
    return LD_ERR_BAD_ENCODING;
  if (want > max)
    return LD_ERR_TOO_LARGE;
  if (n == 0)
    return 0;
  uint8_t *buf = malloc(want + 3);
  if (buf == NULL)
    return LD_ERR_NOMEM;
  size_t bulk = n - n % 4, got = 0, tail_got = 0;
  int rc = bulk > 0 ? ld_base64_decode(text, bulk, buf, want + 3, &got) : 0;
  if (rc == 0 && n % 4 != 0) {
    char tail[4] = {'=', '=', '=', '='};
    memcpy(tail, text + bulk, n % 4);
    rc = memchr(text, '=', bulk) != NULL ? LD_ERR_BAD_ENCODING
                                         : ld_base64_decode(tail, 4, buf + got, 3, &tail_got);
  }
  if (rc != 0) {
    free(buf);
    return LD_ERR_BAD_ENCODING;
  }
  *out = buf;
  *out_len = got + tail_got;
  return 0;
}

static const char *b64_why(int rc) {
  return rc == LD_ERR_BAD_ENCODING ? "invalid base64 encoding" : ld_strerror(rc);
}

/* ---- JSON helpers --------------------------------------------------------------------------- */

/* Loads an object; NULL with the reason in `why` otherwise. */
static json_t *load_object(const char *json, size_t len, char *why, size_t cap) {
  if (len > LD_LIB_MESSAGE_JSON_MAX) {
    snprintf(why, cap, "input longer than %u bytes", LD_LIB_MESSAGE_JSON_MAX);
    return NULL;
  }
  json_error_t e;
  json_t *root = json_loadb(json != NULL ? json : "", json != NULL ? len : 0, JSON_DECODE_ANY, &e);
  if (root == NULL) {
    snprintf(why, cap, "%s (line %d, column %d)", e.text, e.line, e.column);
    return NULL;
  }
  if (!json_is_object(root)) {
    json_decref(root);
    snprintf(why, cap, "not a JSON object");
    return NULL;
  }
  return root;
}

/* The text of a string value; "" for any other value (as the Nim library reads it). */
static const char *str_of(const json_t *v, size_t *len) {
  if (json_is_string(v)) {
    *len = json_string_length(v);
    return json_string_value(v);
  }
  *len = 0;
  return "";
}

static char *dup_text(const char *s, size_t n) {
  char *out = malloc(n + 1);
  if (out != NULL) {
    memcpy(out, s, n);
    out[n] = '\0';
  }
  return out;
}

/* The content topic under `key` (present): a string of at most LD_LIB_CONTENT_TOPIC_MAX bytes
 * without NUL, copied. Returns 0, LD_ERR_MALFORMED with `why`, or LD_ERR_NOMEM. */
static int topic_of(const json_t *v, char **out, char *why, size_t cap) {
  size_t n;
  const char *s = str_of(v, &n);
  if (n > LD_LIB_CONTENT_TOPIC_MAX || memchr(s, '\0', n) != NULL) {
    snprintf(why, cap, "contentTopic %s",
             n > LD_LIB_CONTENT_TOPIC_MAX ? "longer than 255 bytes" : "holds a NUL character");
    return LD_ERR_MALFORMED;
  }
  *out = dup_text(s, n);
  return *out != NULL ? 0 : LD_ERR_NOMEM;
}

/* ---- logosdelivery_send ---------------------------------------------------------------------- */

static int send_fields(json_t *root, size_t max_payload, ld_lib_send_message_t *out, char *err,
                       size_t errlen) {
  json_t *ct = json_object_get(root, "contentTopic");
  if (ct == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_MISSING_FIELD, "Missing contentTopic field");
  json_t *pl = json_object_get(root, "payload");
  if (pl == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_MISSING_FIELD, "Missing payload field");
  char why[128];
  int rc = topic_of(ct, &out->content_topic, why, sizeof why);
  if (rc != 0)
    return ld_error_fmt(err, errlen, rc, SEND_PARSE "%s",
                        rc == LD_ERR_NOMEM ? "out of memory" : why);
  size_t n;
  const char *text = str_of(pl, &n);
  rc = b64_decode(text, n, max_payload, &out->payload, &out->payload_len);
  if (rc == LD_ERR_TOO_LARGE)
    return ld_error_fmt(err, errlen, rc, "invalid payload format: payload larger than %zu bytes",
                        max_payload);
  if (rc != 0)
    return ld_error_fmt(err, errlen, rc, "invalid payload format: %s", b64_why(rc));
  out->ephemeral = json_is_true(json_object_get(root, "ephemeral"));
  return 0;
}

int ld_lib_send_message_parse(const char *json, size_t len, size_t max_payload,
                              ld_lib_send_message_t *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  char why[256];
  json_t *root = load_object(json, len, why, sizeof why);
  if (root == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, SEND_PARSE "%s", why);
  int rc = send_fields(root, max_payload, out, err, errlen);
  json_decref(root);
  if (rc != 0)
    ld_lib_send_message_clear(out);
  return rc;
}

void ld_lib_send_message_clear(ld_lib_send_message_t *m) {
  free(m->content_topic);
  free(m->payload);
  memset(m, 0, sizeof *m);
}

/* ---- jsonWakuMessage ------------------------------------------------------------------------ */

/* A decimal int64 with an optional sign, nothing else. */
static bool parse_i64(const char *s, size_t n, int64_t *out) {
  if (n == 0 || n > 20 || memchr(s, '\0', n) != NULL)
    return false;
  char buf[24];
  memcpy(buf, s, n);
  buf[n] = '\0';
  size_t i = buf[0] == '-' || buf[0] == '+' ? 1 : 0;
  if (buf[i] == '\0')
    return false;
  for (; buf[i] != '\0'; i++)
    if (buf[i] < '0' || buf[i] > '9')
      return false;
  errno = 0;
  long long v = strtoll(buf, NULL, 10);
  if (errno == ERANGE)
    return false;
  *out = (int64_t)v;
  return true;
}

static int timestamp_of(const json_t *v, int64_t *out) {
  *out = 0;
  if (v == NULL || json_is_null(v))
    return 0;
  if (json_is_integer(v)) {
    *out = (int64_t)json_integer_value(v);
    return 0;
  }
  if (json_is_string(v) && parse_i64(json_string_value(v), json_string_length(v), out))
    return 0;
  return LD_ERR_MALFORMED;
}

static int version_of(const json_t *v, uint32_t *out) {
  *out = 0;
  if (!json_is_integer(v))
    return 0;
  json_int_t x = json_integer_value(v);
  if (x < 0 || x > (json_int_t)UINT32_MAX)
    return LD_ERR_MALFORMED;
  *out = (uint32_t)x;
  return 0;
}

/* The checks that come before any decoding: presence, topic, version, timestamp. */
static int kernel_scalars(json_t *root, ld_lib_json_message_t *out, char *err, size_t errlen) {
  if (json_object_get(root, "payload") == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_MISSING_FIELD,
                        KERNEL_PARSE "Missing required field in WakuMessage: payload");
  json_t *ct = json_object_get(root, "contentTopic");
  if (ct == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_MISSING_FIELD,
                        KERNEL_PARSE "Missing required field in WakuMessage: contentTopic");
  char why[128];
  int rc = topic_of(ct, &out->content_topic, why, sizeof why);
  if (rc != 0)
    return ld_error_fmt(err, errlen, rc, KERNEL_PARSE "%s",
                        rc == LD_ERR_NOMEM ? "out of memory" : why);
  if (version_of(json_object_get(root, "version"), &out->msg.version) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED,
                        KERNEL_PARSE "Invalid uint32 value in `version`");
  if (timestamp_of(json_object_get(root, "timestamp"), &out->msg.timestamp) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED,
                        KERNEL_PARSE "Invalid int64 value in `timestamp`");
  out->msg.ephemeral = json_is_true(json_object_get(root, "ephemeral"));
  return 0;
}

/* Decodes the base64 field `key` (absent: empty) into `*buf`. */
static int kernel_bytes(json_t *root, const char *key, size_t max, uint8_t **buf, size_t *len,
                        char *err, size_t errlen) {
  size_t n;
  const char *text = str_of(json_object_get(root, key), &n);
  int rc = b64_decode(text, n, max, buf, len);
  if (rc == LD_ERR_TOO_LARGE)
    return ld_error_fmt(err, errlen, rc, KERNEL_BUILD "invalid %s format: %s larger than %zu bytes",
                        key, key, max);
  if (rc != 0)
    return ld_error_fmt(err, errlen, rc, KERNEL_BUILD "invalid %s format: %s", key, b64_why(rc));
  return 0;
}

static int kernel_fields(json_t *root, size_t max_size, ld_lib_json_message_t *out, char *err,
                         size_t errlen) {
  int rc = kernel_scalars(root, out, err, errlen);
  ld_waku_message_t *m = &out->msg;
  if (rc == 0)
    rc = kernel_bytes(root, "payload", max_size, &out->payload, &m->payload_len, err, errlen);
  if (rc == 0) {
    rc = kernel_bytes(root, "meta", LD_WAKU_MAX_META_LEN, &out->meta, &m->meta_len, err, errlen);
    rc = rc == LD_ERR_TOO_LARGE ? LD_ERR_FIELD_TOO_LONG : rc;
  }
  if (rc == 0)
    rc = kernel_bytes(root, "proof", max_size, &out->proof, &m->proof_len, err, errlen);
  return rc;
}

static void kernel_views(ld_lib_json_message_t *out) {
  ld_waku_message_t *m = &out->msg;
  m->payload = out->payload;
  m->content_topic = out->content_topic;
  m->content_topic_len = strlen(out->content_topic);
  m->meta = out->meta;
  m->proof = out->proof;
  m->fields = LD_WAKU_FIELD_PAYLOAD | LD_WAKU_FIELD_CONTENT_TOPIC | LD_WAKU_FIELD_VERSION |
              LD_WAKU_FIELD_TIMESTAMP | LD_WAKU_FIELD_META | LD_WAKU_FIELD_PROOF |
              LD_WAKU_FIELD_EPHEMERAL;
}

int ld_lib_json_message_parse(const char *json, size_t len, size_t max_size,
                              ld_lib_json_message_t *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  ld_waku_message_init(&out->msg);
  char why[256];
  json_t *root = load_object(json, len, why, sizeof why);
  if (root == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, KERNEL_PARSE "%s", why);
  int rc = kernel_fields(root, max_size, out, err, errlen);
  json_decref(root);
  if (rc != 0) {
    ld_lib_json_message_clear(out);
    return rc;
  }
  kernel_views(out);
  return 0;
}

void ld_lib_json_message_clear(ld_lib_json_message_t *m) {
  free(m->content_topic);
  free(m->payload);
  free(m->meta);
  free(m->proof);
  memset(m, 0, sizeof *m);
  ld_waku_message_init(&m->msg);
}
