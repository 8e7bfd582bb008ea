/* Fuzz target: the filter subscribe request and response decoders, and the subscription table
 * fed with what they accept. The input is a frame body.
 *
 * A request that decodes must re-encode (topics kept) to a body that decodes to the same values;
 * applied to a small table it must get one of the service's codes and never break the table's
 * caps. A response that decodes must re-encode and decode to the same values. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/reqresp.h"
#include "waku/filter/codec.h"
#include "waku/filter/subscriptions.h"

#define MAX_PEERS 2
#define MAX_CRITERIA 150

static bool same(ld_filter_str_t a, ld_filter_str_t b) {
  return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

static void body_of(const ld_buf_t *b, const uint8_t **body, size_t *len) {
  if (ld_reqresp_read_frame(b->data, b->len, SIZE_MAX, body, len) != (int)b->len)
    abort();
}

static void check_request_round_trip(const ld_filter_request_t *req) {
  ld_buf_t out;
  ld_buf_init(&out);
  if (ld_filter_request_encode(req, &out) != 0)
    abort();
  const uint8_t *body;
  size_t len;
  body_of(&out, &body, &len);
  ld_filter_request_t *back = malloc(sizeof *back);
  if (back == NULL || ld_filter_request_decode(body, len, back) != 0)
    abort();
  size_t kept = req->n_content_topics < LD_FILTER_MAX_CONTENT_TOPICS ? req->n_content_topics
                                                                     : LD_FILTER_MAX_CONTENT_TOPICS;
  if (!same(back->request_id, req->request_id) || back->type != req->type ||
      back->has_pubsub_topic != req->has_pubsub_topic ||
      (req->has_pubsub_topic && !same(back->pubsub_topic, req->pubsub_topic)) ||
      back->n_content_topics != kept)
    abort();
  for (size_t i = 0; i < kept; i++)
    if (!same(back->content_topics[i], req->content_topics[i]))
      abort();
  free(back);
  ld_buf_clear(&out);
}

static void check_table(const ld_filter_request_t *req) {
  ld_filter_subs_config_t cfg = {MAX_PEERS, MAX_CRITERIA, 1000};
  ld_filter_subs_t *s = ld_filter_subs_new(&cfg);
  if (s == NULL)
    return;
  ld_peerid_t peer = {.len = 1, .bytes = {1}};
  ld_filter_status_t st;
  for (uint64_t now = 0; now < 3; now++) {
    uint32_t code = ld_filter_subs_handle(s, &peer, req, now * 600, &st);
    if (code != 200 && code != 400 && code != 404 && code != 503)
      abort();
    if (st.code != code || strlen(st.desc) >= sizeof st.desc)
      abort();
    if (ld_filter_subs_peer_count(s) > MAX_PEERS ||
        ld_filter_subs_peer_criteria_count(s, &peer) > MAX_CRITERIA)
      abort();
    peer.bytes[0]++;
  }
  if (req->has_pubsub_topic && req->n_content_topics > 0)
    ld_filter_subs_match(s, req->pubsub_topic.data, req->pubsub_topic.len,
                         req->content_topics[0].data, req->content_topics[0].len, 600, NULL, NULL);
  ld_filter_subs_expire(s, 5000);
  if (ld_filter_subs_peer_count(s) != 0 || ld_filter_subs_criteria_count(s) != 0)
    abort();
  ld_filter_subs_free(s);
}

static void check_response(const uint8_t *data, size_t size) {
  ld_filter_response_t r, back;
  if (ld_filter_response_decode(data, size, &r) != 0)
    return;
  char *desc = malloc(r.status_desc.len + 1);
  if (desc == NULL)
    return;
  memcpy(desc, r.status_desc.data, r.status_desc.len);
  desc[r.status_desc.len] = '\0';
  ld_buf_t out;
  ld_buf_init(&out);
  if (ld_filter_response_encode(&r.request_id, r.status_code, r.has_status_desc ? desc : NULL,
                                &out) != 0)
    abort();
  const uint8_t *body;
  size_t len;
  body_of(&out, &body, &len);
  if (ld_filter_response_decode(body, len, &back) != 0 || !same(back.request_id, r.request_id) ||
      back.status_code != r.status_code || back.has_status_desc != r.has_status_desc)
    abort();
  /* a description holding a NUL is cut there by the C-string encoder */
  if (r.has_status_desc && back.status_desc.len != strlen(desc))
    abort();
  ld_buf_clear(&out);
  free(desc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_filter_request_t *req = malloc(sizeof *req);
  if (req == NULL)
    return 0;
  int rc = ld_filter_request_decode(data, size, req);
  if (rc == 0) {
    if (req->type >= LD_FILTER_REQUEST_TYPES)
      abort();
    check_request_round_trip(req);
    check_table(req);
  } else if (rc != LD_ERR_BAD_PROTOBUF && rc != LD_ERR_MISSING_FIELD && rc != LD_ERR_MALFORMED) {
    abort();
  }
  free(req);
  check_response(data, size);
  return 0;
}
