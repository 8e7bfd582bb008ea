/* ld_sdstool: the C side of sds.test.mjs. Reads one JSON request per line on stdin and answers
 * each with one JSON line on stdout, so that js-waku's `@waku/sds` and our src/channels/ can be
 * compared on the same inputs:
 *
 *   {"op":"decode","hex":H}                → {"ok":true,"class":C,"message":M}
 *   {"op":"encode","message":M}            → {"ok":true,"hex":H}
 *   {"op":"bloom","capacity":N,"errorRate":P,"items":[...],"lookup":[...]}
 *                                          → {"ok":true,"hex":H,"found":[bool...]}
 *   {"op":"repair","self":S,"tMin":A,"tMax":B,"groups":G,"cases":[{"messageId","senderId"}]}
 *                                          → {"ok":true,"cases":[{"tReq","tResp","inGroup"}]}
 *   an engine (one per process):
 *   {"op":"new","channel":C,"sender":S,"now":T,"config":{...}}   (config keys: see apply_config)
 *   {"op":"send","now":T,"id":I,"content":H}
 *   {"op":"receive","now":T,"hex":H,"hint":H}  → adds "outcome"
 *   {"op":"tick","now":T}                      → handle_timeout at T
 *   {"op":"sync","now":T}                      → a sync message now (ld_sds_sync_now)
 *   {"op":"hint","id":I,"hint":H}
 *   {"op":"stats"}                             → {"ok":true,"stats":{...}}
 *   engine answers carry "events":[{type,kind,messageId,senderId,lamport,data,hint,count,
 *   error}] and "deadline" (null when none).
 *
 * M is the JSON form of tests/interop/lib/sds.mjs (toJson): byte fields as hex, the Lamport
 * timestamp as a decimal string, absent optional fields as null. Failures answer
 * {"ok":false,"error":NAME,"why":TEXT}. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hex.h"
#include "channels/bloom.h"
#include "channels/sds.h"
#include "channels/sds_internal.h"
#include "channels/sds_wire.h"

/* Blocks of memory a request's borrowed message points into; released after the answer. */
typedef struct pool {
  void *items[4096];
  size_t n;
} pool_t;

static void *pool_keep(pool_t *p, void *ptr) {
  if (ptr != NULL && p->n < sizeof p->items / sizeof p->items[0])
    p->items[p->n++] = ptr;
  return ptr;
}

static void pool_clear(pool_t *p) {
  for (size_t i = 0; i < p->n; i++)
    free(p->items[i]);
  p->n = 0;
}

static json_t *hex_json(const uint8_t *data, size_t len) {
  char *h = malloc(2 * len + 1);
  ld_hex_encode(data, len, h);
  h[2 * len] = '\0';
  json_t *v = json_string(h);
  free(h);
  return v;
}

/* Decodes hex text into pool memory; NULL on bad hex. */
static uint8_t *unhex(pool_t *p, const char *hex, size_t *len) {
  size_t n = hex != NULL ? strlen(hex) : 0;
  uint8_t *out = pool_keep(p, malloc(n / 2 + 1));
  if (hex == NULL || ld_hex_decode(hex, n, out, n / 2 + 1, len) != 0)
    return NULL;
  return out;
}

static json_t *fail(int code, const char *why) {
  return json_pack("{s:b,s:s,s:s}", "ok", 0, "error", ld_errname(code), "why", why);
}

/* ---- the JSON form of a message ------------------------------------------------------------- */

static json_t *entry_json(const ld_sds_history_entry_t *e) {
  return json_pack(
      "{s:s%,s:o,s:o}", "messageId", e->message_id, e->message_id_len, "retrievalHint",
      e->has_retrieval_hint ? hex_json(e->retrieval_hint, e->retrieval_hint_len) : json_null(),
      "senderId", e->has_sender_id ? json_stringn(e->sender_id, e->sender_id_len) : json_null());
}

static json_t *entries_json(const ld_sds_history_entry_t *e, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++)
    json_array_append_new(a, entry_json(&e[i]));
  return a;
}

static json_t *message_json(const ld_sds_message_t *m) {
  char lamport[24];
  snprintf(lamport, sizeof lamport, "%" PRIu64, m->lamport);
  return json_pack("{s:s%,s:s%,s:s%,s:o,s:o,s:o,s:o,s:o}", "senderId", m->sender_id,
                   m->sender_id_len, "messageId", m->message_id, m->message_id_len, "channelId",
                   m->channel_id, m->channel_id_len, "lamportTimestamp",
                   m->has_lamport ? json_string(lamport) : json_null(), "causalHistory",
                   entries_json(m->causal_history, m->causal_history_len), "bloomFilter",
                   m->has_bloom ? hex_json(m->bloom, m->bloom_len) : json_null(), "repairRequest",
                   entries_json(m->repair_request, m->repair_request_len), "content",
                   m->has_content ? hex_json(m->content, m->content_len) : json_null());
}

static const char *text_of(const json_t *obj, const char *key, size_t *len) {
  const json_t *v = json_object_get(obj, key);
  *len = json_string_length(v);
  return json_is_string(v) ? json_string_value(v) : "";
}

static int entries_from_json(pool_t *p, const json_t *arr, const ld_sds_history_entry_t **out,
                             size_t *n) {
  *n = json_array_size(arr);
  ld_sds_history_entry_t *e = pool_keep(p, calloc(*n + 1, sizeof *e));
  *out = e;
  for (size_t i = 0; i < *n; i++) {
    const json_t *j = json_array_get(arr, i);
    e[i].message_id = text_of(j, "messageId", &e[i].message_id_len);
    const json_t *hint = json_object_get(j, "retrievalHint");
    if (json_is_string(hint)) {
      e[i].has_retrieval_hint = true;
      e[i].retrieval_hint = unhex(p, json_string_value(hint), &e[i].retrieval_hint_len);
      if (e[i].retrieval_hint == NULL)
        return LD_ERR_BAD_ENCODING;
    }
    if (json_is_string(json_object_get(j, "senderId"))) {
      e[i].has_sender_id = true;
      e[i].sender_id = text_of(j, "senderId", &e[i].sender_id_len);
    }
  }
  return 0;
}

static int bytes_field(pool_t *p, const json_t *j, const char *key, bool *has, const uint8_t **out,
                       size_t *len) {
  const json_t *v = json_object_get(j, key);
  *has = json_is_string(v);
  if (!*has)
    return 0;
  *out = unhex(p, json_string_value(v), len);
  return *out != NULL ? 0 : LD_ERR_BAD_ENCODING;
}

static int message_from_json(pool_t *p, const json_t *j, ld_sds_message_t *m) {
  ld_sds_message_init(m);
  m->sender_id = text_of(j, "senderId", &m->sender_id_len);
  m->message_id = text_of(j, "messageId", &m->message_id_len);
  m->channel_id = text_of(j, "channelId", &m->channel_id_len);
  const json_t *l = json_object_get(j, "lamportTimestamp");
  if (json_is_string(l)) {
    m->has_lamport = true;
    m->lamport = strtoull(json_string_value(l), NULL, 10);
  }
  int rc = bytes_field(p, j, "bloomFilter", &m->has_bloom, &m->bloom, &m->bloom_len);
  if (rc == 0)
    rc = bytes_field(p, j, "content", &m->has_content, &m->content, &m->content_len);
  if (rc == 0)
    rc = entries_from_json(p, json_object_get(j, "causalHistory"), &m->causal_history,
                           &m->causal_history_len);
  if (rc == 0)
    rc = entries_from_json(p, json_object_get(j, "repairRequest"), &m->repair_request,
                           &m->repair_request_len);
  return rc;
}

/* ---- codec, bloom and repair timing --------------------------------------------------------- */

static json_t *op_decode(pool_t *p, const json_t *req) {
  size_t len;
  uint8_t *bytes = unhex(p, json_string_value(json_object_get(req, "hex")), &len);
  if (bytes == NULL)
    return fail(LD_ERR_BAD_ENCODING, "bad hex");
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  char why[160] = "";
  int rc = ld_sds_message_decode(bytes, len, &m, why, sizeof why);
  if (rc != 0)
    return fail(rc, why);
  json_t *out = json_pack("{s:b,s:s,s:o}", "ok", 1, "class",
                          ld_sds_class_name(ld_sds_message_class(&m)), "message", message_json(&m));
  ld_sds_message_clear(&m);
  return out;
}

static json_t *op_encode(pool_t *p, const json_t *req) {
  ld_sds_message_t m;
  int rc = message_from_json(p, json_object_get(req, "message"), &m);
  if (rc != 0)
    return fail(rc, "bad message");
  ld_buf_t out;
  ld_buf_init(&out);
  if ((rc = ld_sds_message_encode(&m, &out)) != 0) {
    ld_buf_clear(&out);
    return fail(rc, "encode");
  }
  json_t *ans = json_pack("{s:b,s:o}", "ok", 1, "hex", hex_json(out.data, out.len));
  ld_buf_clear(&out);
  return ans;
}

static json_t *op_bloom(const json_t *req) {
  ld_bloom_t b;
  int rc = ld_bloom_init(&b, (uint32_t)json_integer_value(json_object_get(req, "capacity")),
                         json_number_value(json_object_get(req, "errorRate")));
  if (rc != 0)
    return fail(rc, "bloom parameters");
  const json_t *items = json_object_get(req, "items"), *lookup = json_object_get(req, "lookup");
  for (size_t i = 0; i < json_array_size(items); i++) {
    const json_t *it = json_array_get(items, i);
    ld_bloom_insert(&b, json_string_value(it), json_string_length(it));
  }
  json_t *found = json_array();
  for (size_t i = 0; i < json_array_size(lookup); i++) {
    const json_t *it = json_array_get(lookup, i);
    json_array_append_new(
        found, json_boolean(ld_bloom_lookup(&b, json_string_value(it), json_string_length(it))));
  }
  json_t *ans =
      json_pack("{s:b,s:o,s:o}", "ok", 1, "hex", hex_json(b.data, b.params.bytes), "found", found);
  ld_bloom_clear(&b);
  return ans;
}

static json_t *op_repair(const json_t *req) {
  ld_sds_config_t c;
  ld_sds_config_default(&c);
  c.repair_t_min_ms = (uint64_t)json_integer_value(json_object_get(req, "tMin"));
  c.repair_t_max_ms = (uint64_t)json_integer_value(json_object_get(req, "tMax"));
  c.repair_response_groups = (uint32_t)json_integer_value(json_object_get(req, "groups"));
  ld_sds_t *s;
  int rc = ld_sds_new(&c, "0", json_string_value(json_object_get(req, "self")), 0, &s);
  if (rc != 0)
    return fail(rc, "engine");
  json_t *cases = json_object_get(req, "cases"), *out = json_array();
  for (size_t i = 0; i < json_array_size(cases); i++) {
    size_t il, sl;
    const char *id = text_of(json_array_get(cases, i), "messageId", &il);
    const char *sender = text_of(json_array_get(cases, i), "senderId", &sl);
    json_array_append_new(out, json_pack("{s:I,s:I,s:b}", "tReq",
                                         (json_int_t)sds_repair_t_req(s, id, il), "tResp",
                                         (json_int_t)sds_repair_t_resp(s, sender, sl, id, il),
                                         "inGroup", sds_repair_in_group(s, sender, sl, id, il)));
  }
  ld_sds_free(s);
  return json_pack("{s:b,s:o}", "ok", 1, "cases", out);
}

/* ---- the engine ----------------------------------------------------------------------------- */

static ld_sds_t *engine;

static uint64_t u64_of(const json_t *req, const char *key) {
  return (uint64_t)json_integer_value(json_object_get(req, key));
}

/* Config keys: the ld_sds_config_t field names. */
static void apply_config(ld_sds_config_t *c, const json_t *j) {
#define U(name)                                                                                    \
  if (json_is_integer(json_object_get(j, #name)))                                                  \
  c->name = (__typeof__(c->name))json_integer_value(json_object_get(j, #name))
  U(causal_history_size);
  U(possible_acks_threshold);
  U(ack_timeout_ms);
  U(possibly_acked_timeout_ms);
  U(max_retransmissions);
  U(lost_timeout_ms);
  U(sync_interval_ms);
  U(bloom_interval_ms);
  U(repair_t_min_ms);
  U(repair_t_max_ms);
  U(random_seed);
#undef U
  if (json_is_boolean(json_object_get(j, "repair")))
    c->repair = json_is_true(json_object_get(j, "repair"));
}

static json_t *event_json(const ld_sds_event_t *ev) {
  char lamport[24];
  snprintf(lamport, sizeof lamport, "%" PRIu64, ev->lamport);
  return json_pack("{s:s,s:s,s:s?,s:s?,s:s,s:o,s:o,s:i,s:s}", "type", ld_sds_event_name(ev->type),
                   "kind", ev->type == LD_SDS_EV_SEND ? ld_sds_send_kind_name(ev->send_kind) : "",
                   "messageId", ev->message_id, "senderId", ev->sender_id, "lamport", lamport,
                   "data", ev->data != NULL ? hex_json(ev->data, ev->len) : json_null(), "hint",
                   ev->hint != NULL ? hex_json(ev->hint, ev->hint_len) : json_null(), "count",
                   (int)ev->count, "error", ev->error != 0 ? ld_errname(ev->error) : "");
}

static json_t *engine_answer(int rc, const char *why) {
  if (rc < 0)
    return fail(rc, why);
  json_t *events = json_array();
  ld_sds_event_t ev;
  while (ld_sds_next_event(engine, &ev)) {
    json_array_append_new(events, event_json(&ev));
    ld_sds_event_clear(&ev);
  }
  uint64_t d = ld_sds_next_deadline(engine);
  return json_pack("{s:b,s:o,s:o}", "ok", 1, "events", events, "deadline",
                   d == UINT64_MAX ? json_null() : json_integer((json_int_t)d));
}

static json_t *op_new(const json_t *req) {
  ld_sds_config_t c;
  ld_sds_config_default(&c);
  apply_config(&c, json_object_get(req, "config"));
  ld_sds_free(engine);
  engine = NULL;
  int rc =
      ld_sds_new(&c, json_string_value(json_object_get(req, "channel")),
                 json_string_value(json_object_get(req, "sender")), u64_of(req, "now"), &engine);
  return rc != 0 ? fail(rc, "engine") : engine_answer(0, "");
}

static const char *k_outcomes[] = {"?",         "delivered", "buffered", "sync",
                                   "ephemeral", "duplicate", "own",      "foreign"};

static json_t *op_receive(pool_t *p, const json_t *req) {
  size_t len, hint_len = 0;
  uint8_t *bytes = unhex(p, json_string_value(json_object_get(req, "hex")), &len);
  const json_t *h = json_object_get(req, "hint");
  uint8_t *hint = json_is_string(h) ? unhex(p, json_string_value(h), &hint_len) : NULL;
  if (bytes == NULL)
    return fail(LD_ERR_BAD_ENCODING, "bad hex");
  ld_sds_rx_t rx = 0;
  char why[160] = "";
  int rc =
      ld_sds_receive(engine, u64_of(req, "now"), bytes, len, hint, hint_len, &rx, why, sizeof why);
  json_t *ans = engine_answer(rc, why);
  if (rc == 0)
    json_object_set_new(ans, "outcome", json_string(k_outcomes[rx]));
  return ans;
}

static json_t *op_engine(pool_t *p, const char *op, const json_t *req) {
  if (engine == NULL)
    return fail(LD_ERR_STATE, "no engine: send \"new\" first");
  size_t len;
  if (strcmp(op, "send") == 0) {
    uint8_t *content = unhex(p, json_string_value(json_object_get(req, "content")), &len);
    if (content == NULL)
      return fail(LD_ERR_BAD_ENCODING, "bad hex");
    return engine_answer(ld_sds_send(engine, u64_of(req, "now"),
                                     json_string_value(json_object_get(req, "id")), content, len),
                         "send");
  }
  if (strcmp(op, "receive") == 0)
    return op_receive(p, req);
  if (strcmp(op, "tick") == 0)
    return engine_answer(ld_sds_handle_timeout(engine, u64_of(req, "now")), "tick");
  if (strcmp(op, "sync") == 0)
    return engine_answer(ld_sds_sync_now(engine, u64_of(req, "now")), "sync");
  if (strcmp(op, "hint") == 0) {
    uint8_t *hint = unhex(p, json_string_value(json_object_get(req, "hint")), &len);
    if (hint == NULL)
      return fail(LD_ERR_BAD_ENCODING, "bad hex");
    return engine_answer(
        ld_sds_set_retrieval_hint(engine, json_string_value(json_object_get(req, "id")), hint, len),
        "hint");
  }
  ld_sds_stats_t st;
  ld_sds_get_stats(engine, &st);
  return json_pack("{s:b,s:{s:I,s:I,s:I,s:I,s:I}}", "ok", 1, "stats", "log", (json_int_t)st.log_len,
                   "outgoing", (json_int_t)st.outgoing_len, "incoming", (json_int_t)st.incoming_len,
                   "missing", (json_int_t)st.missing_len, "bloomSizeMismatch",
                   (json_int_t)st.bloom_size_mismatch);
}

static json_t *dispatch(pool_t *p, const json_t *req) {
  const char *op = json_string_value(json_object_get(req, "op"));
  if (op == NULL)
    return fail(LD_ERR_INVALID_ARG, "no op");
  if (strcmp(op, "decode") == 0)
    return op_decode(p, req);
  if (strcmp(op, "encode") == 0)
    return op_encode(p, req);
  if (strcmp(op, "bloom") == 0)
    return op_bloom(req);
  if (strcmp(op, "repair") == 0)
    return op_repair(req);
  if (strcmp(op, "new") == 0)
    return op_new(req);
  if (strcmp(op, "send") == 0 || strcmp(op, "receive") == 0 || strcmp(op, "tick") == 0 ||
      strcmp(op, "sync") == 0 || strcmp(op, "hint") == 0 || strcmp(op, "stats") == 0)
    return op_engine(p, op, req);
  return fail(LD_ERR_INVALID_ARG, "unknown op");
}

int main(void) {
  char *line = NULL;
  size_t cap = 0;
  pool_t *pool = calloc(1, sizeof *pool);
  while (getline(&line, &cap, stdin) > 0) {
    json_error_t err;
    json_t *req = json_loads(line, 0, &err);
    json_t *ans = req != NULL ? dispatch(pool, req) : fail(LD_ERR_MALFORMED, err.text);
    char *text = json_dumps(ans, JSON_COMPACT);
    printf("%s\n", text);
    fflush(stdout);
    free(text);
    json_decref(ans);
    json_decref(req);
    pool_clear(pool);
  }
  ld_sds_free(engine);
  free(pool);
  free(line);
  return 0;
}
