/* The filter subscription table with a fake clock: nwaku's answers and descriptions, limits,
 * TTL expiry and refresh, partial unsubscribe, unsubscribe-all, matching, the removal callback;
 * and the per-peer rate limiter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "waku/filter/ratelimit.h"
#include "waku/filter/subscriptions.h"

#define PS "/waku/2/rs/1/0"
#define PS2 "/waku/2/rs/1/1"
#define TTL 300000u

static ld_peerid_t peer(unsigned i) {
  ld_peerid_t id;
  memset(&id, 0, sizeof id);
  id.len = (size_t)snprintf((char *)id.bytes, sizeof id.bytes, "peer-%u", i);
  return id;
}

static ld_filter_str_t str(const char *s) {
  return (ld_filter_str_t){s, strlen(s)};
}

typedef struct removed_log {
  int count;
  ld_peerid_t last;
  void *last_data;
} removed_log_t;

static void on_removed(const ld_peerid_t *p, void *data, void *ud) {
  removed_log_t *log = ud;
  log->count++;
  log->last = *p;
  log->last_data = data;
}

static ld_filter_subs_t *make(size_t max_peers, size_t max_criteria, removed_log_t *log) {
  ld_filter_subs_config_t cfg = {max_peers, max_criteria, TTL};
  ld_filter_subs_t *s = ld_filter_subs_new(&cfg);
  assert_non_null(s);
  if (log != NULL) {
    memset(log, 0, sizeof *log);
    ld_filter_subs_set_on_removed(s, on_removed, log);
  }
  return s;
}

/* Subscribes `p` to the given content topics on PS at `now`; returns the code. */
static uint32_t sub(ld_filter_subs_t *s, unsigned p, uint64_t now, size_t n, const char **topics,
                    ld_filter_status_t *st) {
  ld_filter_str_t views[128];
  for (size_t i = 0; i < n; i++)
    views[i] = str(topics[i]);
  ld_filter_str_t ps = str(PS);
  ld_peerid_t id = peer(p);
  return ld_filter_subs_subscribe(s, &id, &ps, views, n, now, st);
}

static uint32_t unsub(ld_filter_subs_t *s, unsigned p, uint64_t now, size_t n, const char **topics,
                      ld_filter_status_t *st) {
  ld_filter_str_t views[128];
  for (size_t i = 0; i < n; i++)
    views[i] = str(topics[i]);
  ld_filter_str_t ps = str(PS);
  ld_peerid_t id = peer(p);
  return ld_filter_subs_unsubscribe(s, &id, &ps, views, n, now, st);
}

static size_t matches(const ld_filter_subs_t *s, const char *ct, uint64_t now) {
  return ld_filter_subs_match(s, PS, strlen(PS), ct, strlen(ct), now, NULL, NULL);
}

/* ---- requests ------------------------------------------------------------------------------- */

static void subscribe_and_match(void **state) {
  (void)state;
  ld_filter_subs_t *s = make(0, 0, NULL);
  const char *t[] = {"/a/1/x/proto", "/a/1/y/proto"};
  ld_filter_status_t st;
  assert_int_equal(sub(s, 1, 1000, 2, t, &st), 200);
  assert_string_equal(st.desc, "OK");
  assert_int_equal(sub(s, 2, 1000, 1, t, &st), 200);
  assert_int_equal(matches(s, "/a/1/x/proto", 1000), 2);
  assert_int_equal(matches(s, "/a/1/y/proto", 1000), 1);
  assert_int_equal(matches(s, "/a/1/z/proto", 1000), 0);
  /* another pubsub topic does not match */
  assert_int_equal(ld_filter_subs_match(s, PS2, strlen(PS2), t[0], strlen(t[0]), 1000, NULL, NULL),
                   0);
  assert_int_equal(ld_filter_subs_peer_count(s), 2);
  assert_int_equal(ld_filter_subs_criteria_count(s), 2);
  ld_peerid_t p1 = peer(1);
  assert_int_equal(ld_filter_subs_peer_criteria_count(s, &p1), 2);
  /* idempotent */
  assert_int_equal(sub(s, 1, 2000, 2, t, &st), 200);
  assert_int_equal(ld_filter_subs_peer_criteria_count(s, &p1), 2);
  assert_int_equal(matches(s, "/a/1/x/proto", 2000), 2);
  ld_filter_subs_free(s);
}

static void bad_requests(void **state) {
  (void)state;
  ld_filter_subs_t *s = make(0, 0, NULL);
  ld_peerid_t id = peer(1);
  ld_filter_str_t ps = str(PS), t = str("/a/1/x/proto");
  ld_filter_status_t st;
  assert_int_equal(ld_filter_subs_subscribe(s, &id, NULL, &t, 1, 0, &st), 400);
  assert_string_equal(st.desc, "BAD_REQUEST: pubsubTopic and contentTopics must be specified");
  assert_int_equal(ld_filter_subs_subscribe(s, &id, &ps, NULL, 0, 0, &st), 400);
  assert_string_equal(st.desc, "BAD_REQUEST: pubsubTopic and contentTopics must be specified");
  assert_int_equal(ld_filter_subs_unsubscribe(s, &id, &ps, NULL, 0, 0, &st), 400);
  const char *many[101];
  char names[101][16];
  for (int i = 0; i < 101; i++) {
    snprintf(names[i], sizeof names[i], "/a/1/t%d/p", i);
    many[i] = names[i];
  }
  assert_int_equal(sub(s, 1, 0, 101, many, &st), 400);
  assert_string_equal(st.desc, "BAD_REQUEST: exceeds maximum content topics: 100");
  assert_int_equal(unsub(s, 1, 0, 101, many, &st), 400);
  assert_string_equal(st.desc, "BAD_REQUEST: exceeds maximum content topics: 100");
  assert_int_equal(sub(s, 1, 0, 100, many, &st), 200);
  char longtopic[LD_FILTER_MAX_TOPIC_LEN + 2];
  memset(longtopic, 'x', sizeof longtopic - 1);
  longtopic[sizeof longtopic - 1] = '\0';
  const char *lt[] = {longtopic};
  assert_int_equal(sub(s, 2, 0, 1, lt, &st), 400);
  assert_string_equal(st.desc, "BAD_REQUEST: topic exceeds maximum length: 512");
  assert_int_equal(ld_filter_subs_peer_count(s), 1);
  ld_filter_subs_free(s);
}

static void max_peers(void **state) {
  (void)state;
  ld_filter_subs_t *s = make(3, 0, NULL);
  const char *t[] = {"/a/1/x/proto"};
  ld_filter_status_t st;
  for (unsigned p = 1; p <= 3; p++)
    assert_int_equal(sub(s, p, 1000 * p, 1, t, &st), 200);
  assert_int_equal(sub(s, 4, 5000, 1, t, &st), 503);
  assert_string_equal(st.desc,
                      "SERVICE_UNAVAILABLE: node has reached maximum number of subscriptions: 3");
  /* existing peers may still add criteria */
  const char *u[] = {"/a/1/y/proto"};
  assert_int_equal(sub(s, 2, 5000, 1, u, &st), 200);
  /* once peer 1 expired (last seen at 1000) a new peer takes its place */
  assert_int_equal(sub(s, 4, 1000 + TTL + 1, 1, t, &st), 200);
  ld_peerid_t p1 = peer(1);
  assert_false(ld_filter_subs_has_peer(s, &p1));
  assert_int_equal(ld_filter_subs_peer_count(s), 3);
  ld_filter_subs_free(s);
}

static void max_criteria(void **state) {
  (void)state;
  ld_filter_subs_t *s = make(0, 5, NULL);
  const char *t[] = {"/a/1/a/p", "/a/1/b/p", "/a/1/c/p", "/a/1/d/p", "/a/1/e/p", "/a/1/f/p"};
  ld_filter_status_t st;
  assert_int_equal(sub(s, 1, 0, 3, t, &st), 200);
  assert_int_equal(sub(s, 1, 0, 3, t + 3, &st), 503); /* 3 + 3 > 5 */
  assert_string_equal(st.desc,
                      "SERVICE_UNAVAILABLE: peer has reached maximum number of filter criteria");
  ld_peerid_t p1 = peer(1);
  assert_int_equal(ld_filter_subs_peer_criteria_count(s, &p1), 3);
  /* criteria the peer already has do not count again */
  assert_int_equal(sub(s, 1, 0, 5, t, &st), 200);
  assert_int_equal(ld_filter_subs_peer_criteria_count(s, &p1), 5);
  assert_int_equal(sub(s, 1, 0, 5, t, &st), 200);
  /* a new peer asking for more than the cap at once */
  assert_int_equal(sub(s, 2, 0, 6, t, &st), 503);
  ld_peerid_t p2 = peer(2);
  assert_false(ld_filter_subs_has_peer(s, &p2));
  ld_filter_subs_free(s);
}

static void duplicate_topics_count_once(void **state) {
  (void)state;
  ld_filter_subs_t *s = make(0, 2, NULL);
  const char *t[] = {"/a/1/a/p", "/a/1/a/p", "/a/1/b/p", "/a/1/b/p"};
  ld_filter_status_t st;
  assert_int_equal(sub(s, 1, 0, 4, t, &st), 200);
  ld_peerid_t p1 = peer(1);
  assert_int_equal(ld_filter_subs_peer_criteria_count(s, &p1), 2);
  assert_int_equal(unsub(s, 1, 0, 4, t, &st), 200); /* repeats are skipped, not 404 */
  assert_false(ld_filter_subs_has_peer(s, &p1));
  ld_filter_subs_free(s);
}

static void partial_unsubscribe_keeps_processed_removals(void **state) {
  (void)state;
  removed_log_t log;
  ld_filter_subs_t *s = make(0, 0, &log);
  const char *t[] = {"/a/1/a/p", "/a/1/b/p", "/a/1/c/p"};
  ld_filter_status_t st;
  assert_int_equal(sub(s, 1, 0, 3, t, &st), 200);
  const char *u[] = {"/a/1/a/p", "/a/1/zzz/p", "/a/1/b/p"};
  assert_int_equal(unsub(s, 1, 10, 3, u, &st), 404);
  assert_string_equal(st.desc, "NOT_FOUND: peer has no subscriptions");
  ld_peerid_t p1 = peer(1);
  assert_int_equal(ld_filter_subs_peer_criteria_count(s, &p1), 2); /* a went, b stayed */
  assert_int_equal(matches(s, "/a/1/a/p", 10), 0);
  assert_int_equal(matches(s, "/a/1/b/p", 10), 1);
  assert_int_equal(ld_filter_subs_criteria_count(s), 2);
  /* a criterion another peer has, but this one does not: also 404 */
  const char *other[] = {"/a/1/o/p"};
  assert_int_equal(sub(s, 2, 10, 1, other, &st), 200);
  assert_int_equal(unsub(s, 1, 10, 1, other, &st), 404);
  assert_int_equal(matches(s, "/a/1/o/p", 10), 1);
  /* removing the rest removes the peer */
  const char *rest[] = {"/a/1/c/p", "/a/1/b/p"};
  assert_int_equal(unsub(s, 1, 20, 2, rest, &st), 200);
  assert_false(ld_filter_subs_has_peer(s, &p1));
  assert_int_equal(log.count, 1);
  assert_true(ld_peerid_equal(&log.last, &p1));
  /* unknown peer */
  assert_int_equal(unsub(s, 9, 20, 1, rest, &st), 404);
  assert_string_equal(st.desc, "NOT_FOUND: peer has no subscriptions");
  ld_filter_subs_free(s);
}

static void unsubscribe_all_and_ping(void **state) {
  (void)state;
  removed_log_t log;
  ld_filter_subs_t *s = make(0, 0, &log);
  const char *t[] = {"/a/1/a/p", "/a/1/b/p"};
  ld_filter_status_t st;
  ld_peerid_t p1 = peer(1);
  assert_int_equal(ld_filter_subs_ping(s, &p1, 0, &st), 404);
  assert_string_equal(st.desc, "NOT_FOUND: peer has no subscriptions");
  assert_int_equal(ld_filter_subs_unsubscribe_all(s, &p1, 0, &st), 404);
  assert_int_equal(sub(s, 1, 0, 2, t, &st), 200);
  int marker;
  assert_int_equal(ld_filter_subs_set_peer_data(s, &p1, &marker), 0);
  assert_ptr_equal(ld_filter_subs_peer_data(s, &p1), &marker);
  assert_int_equal(ld_filter_subs_ping(s, &p1, 5, &st), 200);
  assert_string_equal(st.desc, "OK");
  assert_int_equal(ld_filter_subs_unsubscribe_all(s, &p1, 6, &st), 200);
  assert_int_equal(log.count, 1);
  assert_ptr_equal(log.last_data, &marker);
  assert_int_equal(ld_filter_subs_criteria_count(s), 0);
  assert_int_equal(matches(s, "/a/1/a/p", 6), 0);
  assert_int_equal(ld_filter_subs_unsubscribe_all(s, &p1, 7, &st), 404);
  assert_int_equal(ld_filter_subs_ping(s, &p1, 7, &st), 404);
  ld_filter_subs_free(s);
}

static void handle_dispatches_by_type(void **state) {
  (void)state;
  ld_filter_subs_t *s = make(0, 0, NULL);
  ld_peerid_t p1 = peer(1);
  ld_filter_request_t req;
  memset(&req, 0, sizeof req);
  req.request_id = str("r");
  req.type = LD_FILTER_SUBSCRIBE;
  req.has_pubsub_topic = true;
  req.pubsub_topic = str(PS);
  req.n_content_topics = 1;
  req.content_topics[0] = str("/a/1/a/p");
  ld_filter_status_t st;
  assert_int_equal(ld_filter_subs_handle(s, &p1, &req, 0, &st), 200);
  req.type = LD_FILTER_SUBSCRIBER_PING;
  assert_int_equal(ld_filter_subs_handle(s, &p1, &req, 1, &st), 200);
  req.type = LD_FILTER_UNSUBSCRIBE;
  req.n_content_topics = 150; /* counted beyond what is kept */
  assert_int_equal(ld_filter_subs_handle(s, &p1, &req, 2, &st), 400);
  req.type = LD_FILTER_UNSUBSCRIBE_ALL;
  assert_int_equal(ld_filter_subs_handle(s, &p1, &req, 3, &st), 200);
  assert_int_equal(ld_filter_subs_peer_count(s), 0);
  ld_filter_subs_free(s);
}

/* ---- time ----------------------------------------------------------------------------------- */

static void ttl_expiry_and_refresh(void **state) {
  (void)state;
  removed_log_t log;
  ld_filter_subs_t *s = make(0, 0, &log);
  const char *t[] = {"/a/1/a/p"};
  ld_filter_status_t st;
  ld_peerid_t p1 = peer(1), p2 = peer(2);
  assert_int_equal(sub(s, 1, 1000, 1, t, &st), 200);
  assert_int_equal(sub(s, 2, 1000, 1, t, &st), 200);
  assert_int_equal(ld_filter_subs_next_expiry(s), 1000 + TTL + 1);
  /* live exactly up to last_seen + ttl */
  assert_int_equal(matches(s, t[0], 1000 + TTL), 2);
  /* a ping from peer 1 just before the end keeps it */
  assert_int_equal(ld_filter_subs_ping(s, &p1, 1000 + TTL, &st), 200);
  assert_int_equal(matches(s, t[0], 1000 + TTL + 1), 1);
  assert_true(ld_filter_subs_is_subscribed(s, &p1, 1000 + TTL + 1));
  assert_false(ld_filter_subs_is_subscribed(s, &p2, 1000 + TTL + 1));
  /* expired but not yet purged: still in the table, no pushes, 404 to its ping (and purged) */
  assert_true(ld_filter_subs_has_peer(s, &p2));
  assert_int_equal(ld_filter_subs_ping(s, &p2, 1000 + TTL + 1, &st), 404);
  assert_false(ld_filter_subs_has_peer(s, &p2));
  assert_int_equal(log.count, 1);
  /* maintenance purges peer 1 one TTL after its ping */
  assert_int_equal(ld_filter_subs_expire(s, 1000 + 2 * TTL), 0);
  assert_int_equal(ld_filter_subs_expire(s, 1000 + 2 * TTL + 1), 1);
  assert_int_equal(log.count, 2);
  assert_int_equal(ld_filter_subs_peer_count(s), 0);
  assert_int_equal(ld_filter_subs_criteria_count(s), 0);
  assert_int_equal(ld_filter_subs_next_expiry(s), UINT64_MAX);
  ld_filter_subs_free(s);
}

static void requests_refresh_and_expired_subscribe_starts_fresh(void **state) {
  (void)state;
  ld_filter_subs_t *s = make(0, 0, NULL);
  const char *a[] = {"/a/1/a/p"}, *b[] = {"/a/1/b/p"}, *c[] = {"/a/1/c/p"};
  ld_filter_status_t st;
  assert_int_equal(sub(s, 1, 0, 1, a, &st), 200);
  assert_int_equal(sub(s, 1, 0, 1, c, &st), 200);
  assert_int_equal(sub(s, 1, TTL, 1, b, &st), 200);       /* SUBSCRIBE refreshes */
  assert_int_equal(unsub(s, 1, 2 * TTL, 1, c, &st), 200); /* so does UNSUBSCRIBE */
  assert_int_equal(matches(s, a[0], 3 * TTL), 1);
  /* after expiry a SUBSCRIBE starts over: the old criteria are gone */
  assert_int_equal(sub(s, 1, 3 * TTL + 1, 1, b, &st), 200);
  assert_int_equal(matches(s, a[0], 3 * TTL + 1), 0);
  assert_int_equal(matches(s, b[0], 3 * TTL + 1), 1);
  ld_peerid_t p1 = peer(1);
  assert_int_equal(ld_filter_subs_peer_criteria_count(s, &p1), 1);
  /* and an UNSUBSCRIBE after expiry is 404 */
  assert_int_equal(unsub(s, 1, 5 * TTL, 1, b, &st), 404);
  ld_filter_subs_set_ttl(s, 10);
  assert_int_equal(sub(s, 1, 5 * TTL, 1, b, &st), 200);
  assert_int_equal(matches(s, b[0], 5 * TTL + 11), 0);
  ld_filter_subs_free(s);
}

/* ---- matching and queries ------------------------------------------------------------------- */

typedef struct seen {
  int n;
  void *data[8];
} seen_t;

static void on_match(const ld_peerid_t *p, void *data, void *ud) {
  (void)p;
  seen_t *sn = ud;
  sn->data[sn->n++] = data;
}

static void count_peer(const ld_filter_subs_peer_info_t *info, void *ud) {
  *(size_t *)ud += info->n_criteria;
}

static void count_crit(const ld_filter_str_t *ps, const ld_filter_str_t *ct, void *ud) {
  assert_int_equal(ps->len, strlen(PS));
  assert_memory_equal(ps->data, PS, ps->len);
  assert_true(ct->len > 0);
  (*(int *)ud)++;
}

static void match_hands_out_peer_data(void **state) {
  (void)state;
  ld_filter_subs_t *s = make(0, 0, NULL);
  const char *t[] = {"/a/1/a/p", "/a/1/b/p"};
  ld_filter_status_t st;
  int d1, d2;
  assert_int_equal(sub(s, 1, 0, 2, t, &st), 200);
  assert_int_equal(sub(s, 2, 0, 1, t, &st), 200);
  ld_peerid_t p1 = peer(1), p2 = peer(2), p3 = peer(3);
  assert_int_equal(ld_filter_subs_set_peer_data(s, &p1, &d1), 0);
  assert_int_equal(ld_filter_subs_set_peer_data(s, &p2, &d2), 0);
  assert_int_equal(ld_filter_subs_set_peer_data(s, &p3, &d2), LD_ERR_NOT_FOUND);
  seen_t sn = {0};
  assert_int_equal(ld_filter_subs_match(s, PS, strlen(PS), t[0], strlen(t[0]), 0, on_match, &sn),
                   2);
  assert_int_equal(sn.n, 2);
  assert_true((sn.data[0] == &d1 && sn.data[1] == &d2) || (sn.data[0] == &d2 && sn.data[1] == &d1));
  size_t total = 0;
  assert_int_equal(ld_filter_subs_foreach_peer(s, count_peer, &total), 2);
  assert_int_equal(total, 3);
  int crits = 0;
  assert_int_equal(ld_filter_subs_peer_criteria(s, &p1, count_crit, &crits), 2);
  assert_int_equal(crits, 2);
  assert_int_equal(ld_filter_subs_remove_peer(s, &p1), 0);
  assert_int_equal(ld_filter_subs_remove_peer(s, &p1), LD_ERR_NOT_FOUND);
  assert_int_equal(matches(s, t[1], 0), 0);
  assert_int_equal(ld_filter_subs_criteria_count(s), 1);
  ld_filter_subs_free(s);
}

static void many_peers_on_one_criterion(void **state) {
  (void)state;
  removed_log_t log;
  ld_filter_subs_t *s = make(1000, 0, &log);
  const char *t[] = {"/a/1/a/p", "/a/1/b/p"};
  ld_filter_status_t st;
  for (unsigned p = 0; p < 1000; p++)
    assert_int_equal(sub(s, p, p, 2, t, &st), 200);
  assert_int_equal(matches(s, t[0], 1000), 1000);
  for (unsigned p = 0; p < 1000; p += 2)
    assert_int_equal(unsub(s, p, 1000, 1, t, &st), 200);
  assert_int_equal(matches(s, t[0], 1000), 500);
  assert_int_equal(matches(s, t[1], 1000), 1000);
  /* expiry of the first half of the peers by their last_seen (odd peers last seen at p) */
  size_t gone = ld_filter_subs_expire(s, 500 + TTL);
  assert_int_equal(gone, 250); /* odd p < 500 */
  assert_int_equal(matches(s, t[1], 500 + TTL), 750);
  assert_int_equal(log.count, 250);
  ld_filter_subs_free(s);
  assert_int_equal(log.count, 1000);
}

/* ---- rate limiter --------------------------------------------------------------------------- */

static void rate_limit_bucket(void **state) {
  (void)state;
  ld_filter_ratelimit_t *rl = ld_filter_ratelimit_new(30, 60000, 0);
  assert_non_null(rl);
  ld_peerid_t a = peer(1), b = peer(2);
  for (int i = 0; i < 30; i++)
    assert_true(ld_filter_ratelimit_take(rl, &a, 1000));
  assert_false(ld_filter_ratelimit_take(rl, &a, 1000));
  assert_true(ld_filter_ratelimit_take(rl, &b, 1000)); /* per peer */
  /* one token comes back every 2 s */
  assert_false(ld_filter_ratelimit_take(rl, &a, 2999));
  assert_true(ld_filter_ratelimit_take(rl, &a, 3000));
  assert_false(ld_filter_ratelimit_take(rl, &a, 3000));
  assert_int_equal(ld_filter_ratelimit_count(rl), 2);
  /* full buckets are forgotten */
  ld_filter_ratelimit_prune(rl, 3000 + 60000);
  assert_int_equal(ld_filter_ratelimit_count(rl), 0);
  for (int i = 0; i < 30; i++)
    assert_true(ld_filter_ratelimit_take(rl, &a, 70000));
  assert_false(ld_filter_ratelimit_take(rl, &a, 70000));
  /* a long silence fills the bucket without overflowing */
  assert_true(ld_filter_ratelimit_take(rl, &a, UINT64_MAX / 2));
  ld_filter_ratelimit_free(rl);
}

static void rate_limit_caps_and_unlimited(void **state) {
  (void)state;
  ld_filter_ratelimit_t *rl = ld_filter_ratelimit_new(1, 1000, 2);
  ld_peerid_t a = peer(1), b = peer(2), c = peer(3);
  assert_true(ld_filter_ratelimit_take(rl, &a, 0));
  assert_true(ld_filter_ratelimit_take(rl, &b, 0));
  assert_true(ld_filter_ratelimit_take(rl, &c, 0)); /* untracked: no room */
  assert_true(ld_filter_ratelimit_take(rl, &c, 0));
  assert_false(ld_filter_ratelimit_take(rl, &a, 0));
  assert_int_equal(ld_filter_ratelimit_count(rl), 2);
  /* once a's bucket is full again, c gets tracked in its place */
  assert_true(ld_filter_ratelimit_take(rl, &c, 5000));
  assert_false(ld_filter_ratelimit_take(rl, &c, 5000));
  ld_filter_ratelimit_free(rl);
  rl = ld_filter_ratelimit_new(0, 60000, 0);
  for (int i = 0; i < 1000; i++)
    assert_true(ld_filter_ratelimit_take(rl, &a, 0));
  assert_int_equal(ld_filter_ratelimit_count(rl), 0);
  ld_filter_ratelimit_prune(rl, 1);
  ld_filter_ratelimit_free(rl);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(subscribe_and_match),
      cmocka_unit_test(bad_requests),
      cmocka_unit_test(max_peers),
      cmocka_unit_test(max_criteria),
      cmocka_unit_test(duplicate_topics_count_once),
      cmocka_unit_test(partial_unsubscribe_keeps_processed_removals),
      cmocka_unit_test(unsubscribe_all_and_ping),
      cmocka_unit_test(handle_dispatches_by_type),
      cmocka_unit_test(ttl_expiry_and_refresh),
      cmocka_unit_test(requests_refresh_and_expired_subscribe_starts_fresh),
      cmocka_unit_test(match_hands_out_peer_data),
      cmocka_unit_test(many_peers_on_one_criterion),
      cmocka_unit_test(rate_limit_bucket),
      cmocka_unit_test(rate_limit_caps_and_unlimited),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
