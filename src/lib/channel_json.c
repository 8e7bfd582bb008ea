#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base64.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/log.h"
#include "base/utf8.h"
#include "channels/channel_store.h"
#include "channels/channels_rest.h"
#include "channels/segment.h"
#include "lib/channel_json.h"
#include "lib/context.h"
#include "node/config.h"
#include "rest/json.h"

#define PARSE_PREFIX "Failed to parse channel message JSON: "
#define MAX_ACK_TIMEOUT_MS 86400000
#define MAX_RETRANSMISSIONS 1000
#define MIN_SEGMENT_SIZE 128
#define MAX_EPOCH_SEC 86400
#define MAX_PER_EPOCH 1000000
#define MAX_REPAIR_MS 3600000
#define MAX_ACK_SYNC_EVERY 1000000

/* ---- configuration -------------------------------------------------------------------------- */

static int out_of_range(char *why, size_t cap, const char *key, int64_t v, int64_t lo, int64_t hi) {
  return ld_error_fmt(why, cap, LD_ERR_INVALID_ARG,
                      "channelsOverrides '%s' is %lld, expected %lld..%lld", key, (long long)v,
                      (long long)lo, (long long)hi);
}

/* Our extension keys: the SDS-R window (a store fetch follows once it has passed), the idle
 * sync interval (0: no periodic sync), the bloom filter's interval on content messages and the
 * count of content messages received that brings an acknowledgement sync at once (0: only the
 * acknowledgement sync timer). */
static int apply_sds_timing(const ld_lib_channels_config_t *in, ld_channels_config_t *out,
                            char *why, size_t why_cap) {
  if (in->has_repair_t_min) {
    if (in->repair_t_min_ms < 1 || in->repair_t_min_ms > MAX_REPAIR_MS)
      return out_of_range(why, why_cap, "sdsRepairTMinMs", in->repair_t_min_ms, 1, MAX_REPAIR_MS);
    out->sds.repair_t_min_ms = (uint64_t)in->repair_t_min_ms;
  }
  if (in->has_repair_t_max) {
    if (in->repair_t_max_ms < 2 || in->repair_t_max_ms > MAX_REPAIR_MS)
      return out_of_range(why, why_cap, "sdsRepairTMaxMs", in->repair_t_max_ms, 2, MAX_REPAIR_MS);
    out->sds.repair_t_max_ms = (uint64_t)in->repair_t_max_ms;
  }
  if (out->sds.repair_t_min_ms >= out->sds.repair_t_max_ms)
    return ld_error_fmt(why, why_cap, LD_ERR_INVALID_ARG,
                        "channelsOverrides 'sdsRepairTMinMs' (%llu) must be below "
                        "'sdsRepairTMaxMs' (%llu)",
                        (unsigned long long)out->sds.repair_t_min_ms,
                        (unsigned long long)out->sds.repair_t_max_ms);
  if (in->has_repair_t_min || in->has_repair_t_max)
    out->sds.fetch_delay_ms = out->sds.repair_t_max_ms + out->sds.repair_t_min_ms;
  if (in->has_sync_interval) {
    if (in->sync_interval_ms < 0 || in->sync_interval_ms > MAX_REPAIR_MS)
      return out_of_range(why, why_cap, "sdsSyncIntervalMs", in->sync_interval_ms, 0,
                          MAX_REPAIR_MS);
    out->sds.sync_interval_ms = (uint64_t)in->sync_interval_ms;
  }
  if (in->has_bloom_interval) {
    if (in->bloom_interval_ms < 0 || in->bloom_interval_ms > MAX_REPAIR_MS)
      return out_of_range(why, why_cap, "sdsBloomIntervalMs", in->bloom_interval_ms, 0,
                          MAX_REPAIR_MS);
    out->sds.bloom_interval_ms = (uint64_t)in->bloom_interval_ms;
  }
  if (in->has_ack_sync_every) {
    if (in->ack_sync_every < 0 || in->ack_sync_every > MAX_ACK_SYNC_EVERY)
      return out_of_range(why, why_cap, "sdsAckSyncEvery", in->ack_sync_every, 0,
                          MAX_ACK_SYNC_EVERY);
    out->sds.ack_sync_every = (uint32_t)in->ack_sync_every;
  }
  return 0;
}

int ld_lib_channels_config(const ld_lib_channels_config_t *in, ld_channels_config_t *out, char *why,
                           size_t why_cap) {
  ld_channels_config_default(out);
  if (in->has_ack_timeout) {
    if (in->ack_timeout_ms < 1 || in->ack_timeout_ms > MAX_ACK_TIMEOUT_MS)
      return out_of_range(why, why_cap, "sdsAcknowledgementTimeoutMs", in->ack_timeout_ms, 1,
                          MAX_ACK_TIMEOUT_MS);
    out->sds.ack_timeout_ms = (uint64_t)in->ack_timeout_ms;
    out->sds.possibly_acked_timeout_ms = 2 * out->sds.ack_timeout_ms; /* as the defaults */
  }
  if (in->has_max_retransmissions) {
    if (in->max_retransmissions < 0 || in->max_retransmissions > MAX_RETRANSMISSIONS)
      return out_of_range(why, why_cap, "sdsMaxRetransmissions", in->max_retransmissions, 0,
                          MAX_RETRANSMISSIONS);
    out->sds.max_retransmissions = (uint32_t)in->max_retransmissions;
  }
  if (in->has_causal_history) {
    if (in->causal_history_size < 1 || in->causal_history_size > LD_SDS_MAX_CAUSAL_HISTORY)
      return out_of_range(why, why_cap, "sdsCausalHistorySize", in->causal_history_size, 1,
                          LD_SDS_MAX_CAUSAL_HISTORY);
    out->sds.causal_history_size = (uint32_t)in->causal_history_size;
  }
  if (in->has_segment_size) {
    if (in->segment_size_bytes < MIN_SEGMENT_SIZE ||
        in->segment_size_bytes > LD_NODE_MAX_MSG_SIZE_LIMIT)
      return out_of_range(why, why_cap, "segmentationSegmentSizeBytes", in->segment_size_bytes,
                          MIN_SEGMENT_SIZE, LD_NODE_MAX_MSG_SIZE_LIMIT);
    out->segment_size = (size_t)in->segment_size_bytes;
  }
  if (in->has_segmentation_rs && in->segmentation_rs) {
    if (out->segment_size < LD_SEGMENT_PARITY_OVERHEAD + 64)
      return ld_error_fmt(why, why_cap, LD_ERR_INVALID_ARG,
                          "channelsOverrides 'segmentationSegmentSizeBytes' is %zu, expected at "
                          "least %u with segmentationEnableReedSolomon",
                          out->segment_size, LD_SEGMENT_PARITY_OVERHEAD + 64);
    out->parity_rate_ppm = LD_CHANNELS_PARITY_RATE_PPM;
  }
  if (in->has_rate_limit)
    out->rate_limit = in->rate_limit;
  if (in->has_rate_epoch) {
    if (in->rate_epoch_sec < 1 || in->rate_epoch_sec > MAX_EPOCH_SEC)
      return out_of_range(why, why_cap, "rateLimitEpochPeriodSec", in->rate_epoch_sec, 1,
                          MAX_EPOCH_SEC);
    out->rate_limit_epoch_ms = (uint64_t)in->rate_epoch_sec * 1000u;
  }
  if (in->has_rate_messages) {
    if (in->rate_messages_per_epoch < 1 || in->rate_messages_per_epoch > MAX_PER_EPOCH)
      return out_of_range(why, why_cap, "rateLimitMessagesPerEpoch", in->rate_messages_per_epoch, 1,
                          MAX_PER_EPOCH);
    out->rate_limit_per_epoch = (uint64_t)in->rate_messages_per_epoch;
  }
  int rc = apply_sds_timing(in, out, why, why_cap);
  if (rc != 0)
    return rc;
  if (ld_sds_config_check(&out->sds) != 0)
    return ld_error_fmt(why, why_cap, LD_ERR_INVALID_ARG, "inconsistent channelsOverrides");
  return 0;
}

static bool rln_named_on(const ld_node_config_t *node) {
  if (node->rln.enabled)
    return true;
  for (size_t i = 0; i < node->n_inert; i++)
    if (strcmp(node->inert[i], "rln-relay") == 0)
      return true;
  return false;
}

bool ld_lib_channels_rln_budget(const ld_node_config_t *node, ld_channels_config_t *out) {
  if (!rln_named_on(node))
    return false;
  const ld_node_rln_config_t *rln = &node->rln;
  uint64_t epoch_sec = rln->epoch_sec != 0 ? rln->epoch_sec : LD_NODE_RLN_DEFAULT_EPOCH_SEC;
  uint64_t limit = rln->user_message_limit != 0 ? rln->user_message_limit
                                                : LD_NODE_RLN_DEFAULT_USER_MESSAGE_LIMIT;
  out->rate_limit = true;
  out->rate_limit_epoch_ms = epoch_sec * 1000u;
  out->rate_limit_per_epoch = limit;
  return true;
}

int ld_lib_channels_start(ld_lib_ctx_t *ctx, ld_channels_t **out, char *why, size_t why_cap) {
  ld_channels_config_t cfg;
  const ld_lib_config_t *lc = ld_lib_ctx_config(ctx);
  int rc = ld_lib_channels_config(&lc->channels, &cfg, why, why_cap);
  if (rc != 0)
    return rc;
  if (ld_lib_channels_rln_budget(&lc->node, &cfg))
    LD_INFO("lib", "channels: rate limit from RLN: %llu messages per %llu ms epoch",
            (unsigned long long)cfg.rate_limit_per_epoch,
            (unsigned long long)cfg.rate_limit_epoch_ms);
  snprintf(cfg.state_path, sizeof cfg.state_path, "%s/%s", lc->storage_path, LD_CHANNEL_STORE_FILE);
  *out = ld_channels_new(ld_lib_ctx_loop(ctx), ld_lib_ctx_messaging(ctx), &cfg, &rc);
  if (*out == NULL)
    return ld_error_fmt(why, why_cap, rc, "failed to create the reliable channel manager: %s",
                        ld_strerror(rc));
  /* With the node's REST server on, /channels/v1 serves this manager (channels_rest.h). */
  rc = ld_channels_rest_attach(*out, ld_lib_ctx_messaging(ctx));
  if (rc != 0)
    LD_WARN("lib", "reliable channels REST endpoints not mounted: %s", ld_strerror(rc));
  return 0;
}

void ld_lib_channels_stop(ld_lib_ctx_t *ctx, ld_channels_t *c) {
  if (c != NULL && ld_lib_ctx_messaging(ctx) != NULL)
    ld_channels_rest_detach(c, ld_lib_ctx_messaging(ctx));
  ld_channels_free(c);
}

/* ---- channel_send's JSON -------------------------------------------------------------------- */

/* Decodes standard base64 with optional padding into a new buffer. */
static int b64_decode(const char *text, size_t n, size_t max, uint8_t **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  if (n % 4 == 1)
    return LD_ERR_BAD_ENCODING;
  if (n == 0)
    return 0;
  size_t padded = (n + 3) / 4 * 4;
  if (padded / 4 * 3 > max + 3)
    return LD_ERR_TOO_LARGE;
  char *copy = malloc(padded);
  uint8_t *buf = malloc(padded / 4 * 3);
  if (copy == NULL || buf == NULL) {
    free(copy);
    free(buf);
    return LD_ERR_NOMEM;
  }
  memcpy(copy, text, n);
  memset(copy + n, '=', padded - n);
  size_t got = 0;
  int rc = ld_base64_decode(copy, padded, buf, padded / 4 * 3, &got);
  free(copy);
  if (rc == 0 && got > max)
    rc = LD_ERR_TOO_LARGE;
  if (rc != 0) {
    free(buf);
    return rc == LD_ERR_TOO_LARGE ? rc : LD_ERR_BAD_ENCODING;
  }
  *out = buf;
  *out_len = got;
  return 0;
}

int ld_lib_channel_message_parse(const char *json, size_t len, size_t max_payload,
                                 uint8_t **payload, size_t *payload_len, bool *ephemeral, char *err,
                                 size_t errlen) {
  *payload = NULL;
  *payload_len = 0;
  *ephemeral = false;
  json_error_t e;
  json_t *v = json_loadb(json != NULL ? json : "", json != NULL ? len : 0, 0, &e);
  if (v == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, PARSE_PREFIX "%s", e.text);
  if (!json_is_object(v)) {
    json_decref(v);
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, PARSE_PREFIX "not a JSON object");
  }
  json_t *p = json_object_get(v, "payload");
  if (!json_is_string(p)) {
    json_decref(v);
    return ld_error_fmt(err, errlen, LD_ERR_MISSING_FIELD, "Missing payload field");
  }
  *ephemeral = json_is_true(json_object_get(v, "ephemeral"));
  int rc =
      b64_decode(json_string_value(p), json_string_length(p), max_payload, payload, payload_len);
  json_decref(v);
  if (rc == LD_ERR_TOO_LARGE)
    return ld_error_fmt(err, errlen, rc, "invalid payload format: payload larger than %zu bytes",
                        max_payload);
  if (rc != 0)
    return ld_error_fmt(err, errlen, rc, "invalid payload format: %s",
                        rc == LD_ERR_NOMEM ? ld_strerror(rc) : "not base64");
  return 0;
}

/* ---- events --------------------------------------------------------------------------------- */

/* The events are written directly, byte for byte as jansson's json_dumps(JSON_COMPACT |
 * JSON_PRESERVE_ORDER) of the same object would write them (strings through
 * ld_rest_json_string: bytes that are not UTF-8 become U+FFFD): an event per channel message is
 * too frequent for building a jansson object each time. */

/* Appends `s` (NULL = "") as a JSON string. */
static int put_string(ld_buf_t *b, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  const uint8_t *p = (const uint8_t *)(s != NULL ? s : "");
  size_t n = strlen((const char *)p);
  if (ld_buf_reserve(b, n + 2) != 0 || ld_buf_u8(b, '"') != 0)
    return LD_ERR_NOMEM;
  size_t i = 0;
  while (i < n) {
    size_t plain = i; /* the run that needs no escape */
    while (plain < n && p[plain] >= 0x20 && p[plain] < 0x80 && p[plain] != '"' && p[plain] != '\\')
      plain++;
    if (plain > i && ld_buf_append(b, p + i, plain - i) != 0)
      return LD_ERR_NOMEM;
    i = plain;
    if (i == n)
      break;
    uint8_t c = p[i];
    char esc[6] = {'\\', 0, 0, 0, 0, 0};
    size_t esc_len = 2;
    int rc = 0;
    if (c >= 0x80) {
      size_t len = ld_utf8_char_len(p + i, n - i);
      rc = len > 0 ? ld_buf_append(b, p + i, len) : ld_buf_append(b, "\xEF\xBF\xBD", 3);
      i += len > 0 ? len : 1;
      if (rc != 0)
        return LD_ERR_NOMEM;
      continue;
    }
    switch (c) {
    case '"':
    case '\\':
      esc[1] = (char)c;
      break;
    case '\b':
      esc[1] = 'b';
      break;
    case '\f':
      esc[1] = 'f';
      break;
    case '\n':
      esc[1] = 'n';
      break;
    case '\r':
      esc[1] = 'r';
      break;
    case '\t':
      esc[1] = 't';
      break;
    default: /* the other control characters: \u00XX */
      memcpy(esc, "\\u00", 4);
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 0xf];
      esc_len = 6;
      break;
    }
    if (ld_buf_append(b, esc, esc_len) != 0)
      return LD_ERR_NOMEM;
    i++;
  }
  return ld_buf_u8(b, '"');
}

/* Appends `,"key":` then the string `value` (`first`: without the comma). */
static int put_field(ld_buf_t *b, bool first, const char *key, const char *value) {
  if ((!first && ld_buf_u8(b, ',') != 0) || ld_buf_u8(b, '"') != 0 ||
      ld_buf_append(b, key, strlen(key)) != 0 || ld_buf_append(b, "\":", 2) != 0)
    return LD_ERR_NOMEM;
  return put_string(b, value);
}

/* Appends `,"payload":"<base64>"`. */
static int put_base64(ld_buf_t *b, const uint8_t *data, size_t n) {
  size_t cap = (n + 2) / 3 * 4 + 1;
  if (ld_buf_append(b, ",\"payload\":\"", 12) != 0 || ld_buf_reserve(b, cap + 1) != 0)
    return LD_ERR_NOMEM;
  int w =
      ld_base64_encode(data != NULL ? data : (const uint8_t *)"", n, (char *)b->data + b->len, cap);
  if (w < 0)
    return w;
  b->len += (size_t)w;
  return ld_buf_u8(b, '"');
}

static const char *type_of(int kind) {
  switch (kind) {
  case LD_EVENT_CHANNEL_RECEIVED:
    return LD_LIB_EVENT_CHANNEL_RECEIVED;
  case LD_EVENT_CHANNEL_SENT:
    return LD_LIB_EVENT_CHANNEL_SENT;
  case LD_EVENT_CHANNEL_ERROR:
    return LD_LIB_EVENT_CHANNEL_ERROR;
  case LD_EVENT_CHANNEL_DELIVERED:
    return LD_LIB_EVENT_CHANNEL_DELIVERED;
  case LD_EVENT_CHANNEL_DELIVERY_ERROR:
    return LD_LIB_EVENT_CHANNEL_DELIVERY_ERROR;
  case LD_EVENT_CHANNEL_LOST:
    return LD_LIB_EVENT_CHANNEL_LOST;
  default:
    return NULL;
  }
}

const char *ld_lib_channel_listener_name(int kind) {
  switch (kind) {
  case LD_EVENT_CHANNEL_RECEIVED:
    return "onChannelMessageReceived";
  case LD_EVENT_CHANNEL_SENT:
    return "onChannelMessageSent";
  case LD_EVENT_CHANNEL_ERROR:
    return "onChannelMessageError";
  case LD_EVENT_CHANNEL_DELIVERED:
    return "onChannelMessageDelivered";
  case LD_EVENT_CHANNEL_LOST:
    return "onChannelMessageLost";
  default:
    return "onChannelMessageDeliveryError";
  }
}

char *ld_lib_event_channel_json(int kind, const ld_channel_event_t *ev, size_t *len) {
  const char *type = type_of(kind);
  if (type == NULL)
    return NULL;
  ld_buf_t b;
  ld_buf_init(&b);
  int rc = ld_buf_reserve(&b, 160 + (ev->payload_len + 2) / 3 * 4);
  if (rc == 0 && (rc = ld_buf_u8(&b, '{')) == 0 &&
      (rc = put_field(&b, true, "eventType", type)) == 0)
    rc = put_field(&b, false, "channelId", ev->channel_id);
  if (rc == 0 && kind == LD_EVENT_CHANNEL_RECEIVED) {
    if ((rc = put_field(&b, false, "senderId", ev->sender_id)) == 0)
      rc = put_base64(&b, ev->payload, ev->payload_len);
  } else if (rc == 0 && kind == LD_EVENT_CHANNEL_LOST) {
    const char *keys[] = {"senderId", "messageId", "messageHash", "payloadHash", "reason"};
    const char *values[] = {ev->sender_id, ev->message_id, ev->message_hash, ev->payload_hash,
                            ev->reason};
    for (size_t i = 0; rc == 0 && i < 5; i++)
      rc = put_field(&b, false, keys[i], values[i]);
  } else if (rc == 0) {
    rc = put_field(&b, false, "requestId", ev->request_id);
    if (rc == 0 && (kind == LD_EVENT_CHANNEL_ERROR || kind == LD_EVENT_CHANNEL_DELIVERY_ERROR))
      rc = put_field(&b, false, "error", ev->error);
  }
  if (rc == 0)
    rc = ld_buf_append(&b, "}", 2); /* with the terminating NUL */
  if (rc != 0) {
    ld_buf_clear(&b);
    return NULL;
  }
  if (len != NULL)
    *len = b.len - 1;
  return (char *)b.data;
}
