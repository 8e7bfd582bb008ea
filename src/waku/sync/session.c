/* One reconciliation session (see session.h). */
#include "waku/sync/session.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/varint.h"

void ld_sync_session_config_init(ld_sync_session_config_t *cfg, ld_sync_set_t set, int64_t now_ns) {
  memset(cfg, 0, sizeof *cfg);
  cfg->set = set;
  ld_sync_policy_default(&cfg->policy);
  ld_sync_limits_default(&cfg->limits);
  cfg->max_rounds = LD_SYNC_DEFAULT_MAX_ROUNDS;
  cfg->max_diffs = LD_SYNC_DEFAULT_MAX_DIFFS;
  cfg->window_end = now_ns - LD_SYNC_DEFAULT_JITTER_NS;
  cfg->window_start = cfg->window_end - LD_SYNC_DEFAULT_RANGE_NS;
  cfg->skip_old_ranges = true;
}

void ld_sync_session_config_nwaku(ld_sync_session_config_t *cfg) {
  ld_sync_policy_nwaku(&cfg->policy);
  cfg->skip_old_ranges = false;
}

static size_t topics_wire_len(const ld_sync_topic_t *t, size_t n) {
  size_t len = ld_varint_len(n);
  for (size_t i = 0; i < n; i++)
    len += ld_varint_len(t[i].len) + t[i].len;
  return len;
}

int ld_sync_session_init(ld_sync_session_t *s, const ld_sync_session_config_t *cfg,
                         bool initiator) {
  if (cfg->set.ops == NULL || cfg->set.ops->summary == NULL || cfg->set.ops->each == NULL ||
      cfg->policy.partitions < 2 || cfg->policy.partitions > LD_SYNC_MAX_PARTITIONS ||
      cfg->window_end < cfg->window_start)
    return LD_ERR_INVALID_ARG;
  memset(s, 0, sizeof *s);
  s->cfg = *cfg;
  s->initiator = initiator;
  ld_sync_ranges_init(&s->ranges, cfg->set);
  s->ranges.policy = cfg->policy;
  s->ranges.limits = cfg->limits;
  s->ranges.max_diffs = cfg->max_diffs;
  s->ranges.window_start = cfg->skip_old_ranges ? cfg->window_start : INT64_MIN;
  /* the answer's ranges share the payload cap with our topics and the first bound */
  size_t header = topics_wire_len(cfg->pubsub_topics, cfg->n_pubsub_topics) +
                  topics_wire_len(cfg->content_topics, cfg->n_content_topics) + 10;
  s->ranges.limits.max_payload =
      cfg->limits.max_payload > header ? cfg->limits.max_payload - header : 0;
  ld_sync_payload_init(&s->in);
  ld_sync_payload_init(&s->out);
  ld_sync_payload_init(&s->peer_topics);
  return 0;
}

void ld_sync_session_clear(ld_sync_session_t *s) {
  ld_sync_ranges_clear(&s->ranges);
  ld_sync_spans_clear(&s->offered);
  ld_sync_payload_clear(&s->in);
  ld_sync_payload_clear(&s->out);
  ld_sync_payload_clear(&s->peer_topics);
}

static int end(ld_sync_session_t *s, int rc) {
  s->done = true;
  if (rc != 0 && s->error == 0)
    s->error = rc;
  return rc;
}

/* Records the spans of the item sets in s->out, as the peer will read their bounds. */
static int note_offered(ld_sync_session_t *s) {
  for (size_t i = 0; i < s->out.n_ranges; i++) {
    if (s->out.ranges[i].type != LD_SYNC_RANGE_ITEM_SET)
      continue;
    int rc = ld_sync_spans_add(&s->offered, ld_sync_payload_lower(&s->out, i).time,
                               s->out.ranges[i].upper.time);
    if (rc != 0)
      return rc;
  }
  return 0;
}

/* Encodes s->out with our topics and appends it to `out`. */
static int write_out(ld_sync_session_t *s, ld_buf_t *out) {
  int rc = 0;
  for (size_t i = 0; i < s->cfg.n_pubsub_topics && rc == 0; i++)
    rc = ld_sync_payload_add_topic(&s->out, false, s->cfg.pubsub_topics[i].data,
                                   s->cfg.pubsub_topics[i].len);
  for (size_t i = 0; i < s->cfg.n_content_topics && rc == 0; i++)
    rc = ld_sync_payload_add_topic(&s->out, true, s->cfg.content_topics[i].data,
                                   s->cfg.content_topics[i].len);
  size_t before = out->len;
  if (rc == 0)
    rc = note_offered(s);
  if (rc == 0)
    rc = ld_sync_payload_encode(&s->out, out);
  if (rc != 0)
    return rc;
  size_t body = out->len - before;
  s->frames_out++;
  s->bytes_out += ld_varint_len(body) + body;
  return 0;
}

int ld_sync_session_start(ld_sync_session_t *s, ld_buf_t *out) {
  if (!s->initiator || s->frames_out > 0 || s->done)
    return LD_ERR_STATE;
  int rc = ld_sync_ranges_initial(&s->ranges, s->cfg.window_start, s->cfg.window_end, &s->out);
  if (rc == 0)
    rc = write_out(s, out);
  if (rc != 0)
    return end(s, rc);
  if (s->out.n_ranges == 0) /* nothing to offer (caps): the peer ends on 00 */
    end(s, 0);
  return 0;
}

/* ---- scope ----------------------------------------------------------------------------------- */

static bool topic_in(const ld_sync_topic_t *t, const ld_sync_topic_t *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (list[i].len == t->len && memcmp(list[i].data, t->data, t->len) == 0)
      return true;
  return false;
}

/* nwaku's rule for one list: the intersection when both are non-empty, else ours when non-empty,
 * else theirs. Returns 0 (*out, *n: the scope; *owned: *out must be freed), 1 (both non-empty
 * and disjoint) or LD_ERR_NOMEM. */
static int scope_list(const ld_sync_topic_t *ours, size_t n_ours, const ld_sync_topic_t *theirs,
                      size_t n_theirs, const ld_sync_topic_t **out, size_t *n, bool *owned) {
  *owned = false;
  if (n_ours == 0 || n_theirs == 0) {
    *out = n_ours > 0 ? ours : theirs;
    *n = n_ours > 0 ? n_ours : n_theirs;
    return 0;
  }
  ld_sync_topic_t *both = malloc(n_ours * sizeof *both);
  if (both == NULL)
    return LD_ERR_NOMEM;
  *n = 0;
  for (size_t i = 0; i < n_ours; i++)
    if (topic_in(&ours[i], theirs, n_theirs))
      both[(*n)++] = ours[i];
  if (*n == 0) {
    free(both);
    return 1;
  }
  *out = both;
  *owned = true;
  return 0;
}

static bool same_topics(const ld_sync_topic_t *a, size_t na, const ld_sync_topic_t *b, size_t nb) {
  if (na != nb)
    return false;
  for (size_t i = 0; i < na; i++)
    if (a[i].len != b[i].len || memcmp(a[i].data, b[i].data, a[i].len) != 0)
      return false;
  return true;
}

static int remember_peer_topics(ld_sync_session_t *s, const ld_sync_payload_t *in) {
  ld_sync_id_t zero = ld_sync_id_bound(0);
  ld_sync_payload_reset(&s->peer_topics, &zero);
  int rc = 0;
  for (size_t i = 0; i < in->n_pubsub_topics && rc == 0; i++)
    rc = ld_sync_payload_add_topic(&s->peer_topics, false, in->pubsub_topics[i].data,
                                   in->pubsub_topics[i].len);
  for (size_t i = 0; i < in->n_content_topics && rc == 0; i++)
    rc = ld_sync_payload_add_topic(&s->peer_topics, true, in->content_topics[i].data,
                                   in->content_topics[i].len);
  return rc;
}

/* Resolves the scope of a received payload: 0 (s->ranges.set is the set to use), 1 (disjoint)
 * or an error. The callback runs again only when the peer's topics change. */
static int resolve_scope(ld_sync_session_t *s, const ld_sync_payload_t *in) {
  if (s->scoped &&
      same_topics(in->pubsub_topics, in->n_pubsub_topics, s->peer_topics.pubsub_topics,
                  s->peer_topics.n_pubsub_topics) &&
      same_topics(in->content_topics, in->n_content_topics, s->peer_topics.content_topics,
                  s->peer_topics.n_content_topics))
    return 0;
  const ld_sync_session_config_t *c = &s->cfg;
  const ld_sync_topic_t *p = NULL, *ct = NULL;
  size_t np = 0, nc = 0;
  bool own_p = false, own_c = false;
  int rc;
  int result = scope_list(c->pubsub_topics, c->n_pubsub_topics, in->pubsub_topics,
                          in->n_pubsub_topics, &p, &np, &own_p);
  if (result == 0)
    result = scope_list(c->content_topics, c->n_content_topics, in->content_topics,
                        in->n_content_topics, &ct, &nc, &own_c);
  if (result == 0 && c->scope != NULL) {
    rc = c->scope(c->user, p, np, ct, nc, &s->ranges.set);
    result = rc == LD_ERR_NOT_FOUND ? 1 : rc;
  }
  if (own_p)
    free((void *)p);
  if (own_c)
    free((void *)ct);
  if (result == 0 && (rc = remember_peer_topics(s, in)) != 0)
    result = rc;
  s->scoped = result == 0;
  return result;
}

/* ---- receiving ------------------------------------------------------------------------------- */

int ld_sync_session_receive(ld_sync_session_t *s, const uint8_t *data, size_t len, ld_buf_t *out,
                            bool *reply) {
  *reply = false;
  if (s->done)
    return LD_ERR_STATE;
  s->frames_in++;
  s->bytes_in += ld_varint_len(len) + len;
  if (s->frames_in > s->cfg.max_rounds)
    return end(s, LD_ERR_LIMIT);
  int rc = ld_sync_payload_decode(data, len, &s->cfg.limits, &s->in, NULL, 0);
  if (rc != 0)
    return end(s, rc);
  if (ld_sync_payload_all_skip(&s->in))
    return end(s, 0);
  rc = resolve_scope(s, &s->in);
  if (rc == 1) { /* disjoint scopes: a zero-length frame ends it */
    *reply = true;
    s->frames_out++;
    s->bytes_out += 1;
    return end(s, 0);
  }
  if (rc == 0)
    rc = ld_sync_ranges_answer(&s->ranges, &s->in, &s->out);
  if (rc == 0)
    rc = write_out(s, out);
  if (rc != 0)
    return end(s, rc);
  *reply = true;
  if (s->out.n_ranges == 0)
    end(s, 0);
  return 0;
}
