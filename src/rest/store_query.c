#include "rest/store_query.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/error.h"
#include "rest/json.h"

/* Longest text quoted back in an error reason. */
#define QUOTE_MAX 64

static bool given(const char *v) {
  return v != NULL && v[0] != '\0';
}

/* ---- scalars --------------------------------------------------------------------------------- */

/* Nim's parseBool after normalize (ASCII lower case, '_' removed). */
static int parse_bool(const char *s, bool *out) {
  static const char *const yes[] = {"y", "yes", "true", "1", "on"};
  static const char *const no[] = {"n", "no", "false", "0", "off"};
  char norm[8];
  size_t n = 0;
  for (const char *p = s; *p != '\0'; p++) {
    if (*p == '_')
      continue;
    if (n + 1 >= sizeof norm)
      return LD_ERR_MALFORMED;
    norm[n++] = (char)tolower((unsigned char)*p);
  }
  norm[n] = '\0';
  for (size_t i = 0; i < 5; i++) {
    if (strcmp(norm, yes[i]) == 0 || strcmp(norm, no[i]) == 0) {
      *out = strcmp(norm, yes[i]) == 0;
      return 0;
    }
  }
  return LD_ERR_MALFORMED;
}

/* A decimal int64 with an optional sign: 0, LD_ERR_MALFORMED or LD_ERR_OVERFLOW. */
static int parse_int64(const char *s, int64_t *out) {
  const char *p = s + (s[0] == '+' || s[0] == '-');
  if (*p == '\0')
    return LD_ERR_MALFORMED;
  for (const char *q = p; *q != '\0'; q++)
    if (*q < '0' || *q > '9')
      return LD_ERR_MALFORMED;
  errno = 0;
  long long v = strtoll(s, NULL, 10);
  if (errno == ERANGE)
    return LD_ERR_OVERFLOW;
  *out = (int64_t)v;
  return 0;
}

static const char *int_reason(int rc) {
  return rc == LD_ERR_OVERFLOW ? "Parsed integer outside of valid range" : "invalid integer: ";
}

static int parse_time(const char *s, bool *has, int64_t *out, char *err, size_t cap) {
  *has = false;
  if (!given(s))
    return 0;
  int64_t v = 0;
  int rc = parse_int64(s, &v);
  if (rc != 0)
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "time parsing error: %s%.*s", int_reason(rc),
                        rc == LD_ERR_OVERFLOW ? 0 : QUOTE_MAX, s);
  if (v > 0) {
    *has = true;
    *out = v;
  }
  return 0;
}

static int parse_page_size(const char *s, uint64_t *out, char *err, size_t cap) {
  int64_t v = 0;
  if (given(s)) {
    int rc = parse_int64(s, &v);
    if (rc != 0)
      return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "page size parsing error: %s%.*s",
                          int_reason(rc), rc == LD_ERR_OVERFLOW ? 0 : QUOTE_MAX, s);
    if (v < 0)
      return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s",
                          "page size parsing error: page size must not be negative");
  }
  if (v == 0)
    v = LD_REST_STORE_DEFAULT_PAGE_SIZE;
  *out = v > LD_REST_STORE_MAX_PAGE_SIZE ? LD_REST_STORE_MAX_PAGE_SIZE : (uint64_t)v;
  return 0;
}

/* ---- hashes ---------------------------------------------------------------------------------- */

static size_t hex_prefix(const char *s, size_t len) {
  return len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 2 : 0;
}

static bool is_hex(const char *s, size_t len) {
  size_t skip = hex_prefix(s, len);
  s += skip;
  len -= skip;
  if (len % 2 != 0)
    return false;
  for (size_t i = 0; i < len; i++)
    if (!isxdigit((unsigned char)s[i]))
      return false;
  return true;
}

/* Decodes standard base64 (padding optional); the decoded length goes to *n. */
static int b64_len(const char *s, size_t len, uint8_t out[LD_WAKU_HASH_LEN], size_t *n) {
  uint8_t *buf = NULL;
  int rc = ld_rest_base64_decode(s, len, &buf, n);
  if (rc == 0 && *n == LD_WAKU_HASH_LEN)
    memcpy(out, buf, LD_WAKU_HASH_LEN);
  free(buf);
  return rc;
}

static int parse_hash(const char *s, size_t len, uint8_t out[LD_WAKU_HASH_LEN], char *err,
                      size_t cap) {
  size_t n = 0;
  if (is_hex(s, len)) {
    n = (len - hex_prefix(s, len)) / 2;
    if (n == LD_WAKU_HASH_LEN && ld_waku_hash_from_hex(s, len, out) == 0)
      return 0;
  } else {
    int rc = b64_len(s, len, out, &n);
    if (rc == LD_ERR_NOMEM)
      return ld_error_fmt(err, cap, rc, "%s", "Out of memory");
    if (rc != 0)
      return ld_error_fmt(err, cap, LD_ERR_MALFORMED,
                          "Exception converting hex string to bytes: not a hex string: %.*s",
                          (int)(len < QUOTE_MAX ? len : QUOTE_MAX), s);
    if (n == LD_WAKU_HASH_LEN)
      return 0;
  }
  return ld_error_fmt(err, cap, LD_ERR_MALFORMED,
                      "waku message hash parsing error: invalid hash length: %zu", n);
}

/* ---- lists ----------------------------------------------------------------------------------- */

/* Calls `fn` for each non-empty item of a comma-separated list; stops at the first error. */
static int for_each_item(const char *list, int (*fn)(void *ctx, const char *item, size_t len),
                         void *ctx) {
  const char *p = list;
  while (*p != '\0') {
    size_t len = strcspn(p, ",");
    int rc = len > 0 ? fn(ctx, p, len) : 0;
    if (rc != 0)
      return rc;
    p += len + (p[len] == ',');
  }
  return 0;
}

static int count_item(void *ctx, const char *item, size_t len) {
  (void)item;
  (void)len;
  ++*(size_t *)ctx;
  return 0;
}

static size_t count_items(const char *list) {
  size_t n = 0;
  for_each_item(list, count_item, &n);
  return n;
}

typedef struct hash_ctx {
  ld_rest_store_request_t *r;
  char *err;
  size_t cap;
} hash_ctx_t;

static int add_hash(void *ctx, const char *item, size_t len) {
  hash_ctx_t *h = ctx;
  ld_rest_store_query_t *q = &h->r->query;
  int rc = parse_hash(item, len, h->r->hashes[q->n_hashes], h->err, h->cap);
  if (rc == 0)
    q->n_hashes++;
  return rc;
}

static int read_hashes(const char *list, ld_rest_store_request_t *r, char *err, size_t cap) {
  if (!given(list))
    return 0;
  size_t n = count_items(list);
  if (n > LD_REST_STORE_MAX_HASHES)
    return ld_error_fmt(err, cap, LD_ERR_LIMIT, "too many hashes: at most %d",
                        LD_REST_STORE_MAX_HASHES);
  if (n == 0)
    return 0;
  r->hashes = calloc(n, sizeof *r->hashes);
  if (r->hashes == NULL)
    return ld_error_fmt(err, cap, LD_ERR_NOMEM, "%s", "Out of memory");
  r->query.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])r->hashes;
  hash_ctx_t h = {r, err, cap};
  return for_each_item(list, add_hash, &h);
}

static int read_topics(const char *list, ld_rest_store_request_t *r, char *err, size_t cap) {
  if (!given(list))
    return 0;
  size_t n = count_items(list);
  if (n > LD_REST_STORE_MAX_CONTENT_TOPICS)
    return ld_error_fmt(err, cap, LD_ERR_LIMIT, "too many content topics: at most %d",
                        LD_REST_STORE_MAX_CONTENT_TOPICS);
  if (n == 0)
    return 0;
  r->topics_text = strdup(list);
  r->content_topics = calloc(n, sizeof *r->content_topics);
  if (r->topics_text == NULL || r->content_topics == NULL)
    return ld_error_fmt(err, cap, LD_ERR_NOMEM, "%s", "Out of memory");
  r->query.content_topics = r->content_topics;
  /* Cutting the copy at each comma leaves the items NUL-terminated in place. */
  char *p = r->topics_text;
  while (*p != '\0') {
    size_t len = strcspn(p, ",");
    bool last = p[len] == '\0';
    p[len] = '\0';
    if (len > 0)
      r->content_topics[r->query.n_content_topics++] = p;
    p += len + !last;
  }
  return 0;
}

/* ---- the whole query ------------------------------------------------------------------------- */

static int check_lengths(const ld_rest_store_params_t *p, char *err, size_t cap) {
  const char *const all[] = {p->peer_addr,  p->include_data, p->pubsub_topic, p->content_topics,
                             p->start_time, p->end_time,     p->hashes,       p->cursor,
                             p->ascending,  p->page_size};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i] != NULL && strlen(all[i]) > LD_REST_STORE_MAX_PARAM)
      return ld_error_fmt(err, cap, LD_ERR_LIMIT, "%s", "query parameter too long");
  return 0;
}

static int read_peer(const char *text, ld_rest_store_request_t *r, char *err, size_t cap) {
  if (!given(text))
    return 0;
  if (ld_multiaddr_parse(&r->peer_addr, text) != 0)
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s",
                        "Failed parsing remote peer info: invalid multiaddress");
  if (!ld_multiaddr_peerid(&r->peer_addr, &r->peer_id, false))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s",
                        "Failed parsing remote peer info: multiaddress without /p2p/<peer id>");
  r->query.peer_addr = &r->peer_addr;
  r->query.peer_id = &r->peer_id;
  return 0;
}

static int read_scalars(const ld_rest_store_params_t *p, ld_rest_store_request_t *r, char *err,
                        size_t cap) {
  ld_rest_store_query_t *q = &r->query;
  if (given(p->include_data) && parse_bool(p->include_data, &q->include_data) != 0)
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED,
                        "include data parsing error: cannot interpret as a bool: %.*s", QUOTE_MAX,
                        p->include_data);
  if (given(p->pubsub_topic)) {
    if ((r->pubsub_topic = strdup(p->pubsub_topic)) == NULL)
      return ld_error_fmt(err, cap, LD_ERR_NOMEM, "%s", "Out of memory");
    q->pubsub_topic = r->pubsub_topic;
  }
  return 0;
}

int ld_rest_store_query_parse(const ld_rest_store_params_t *params, ld_rest_store_request_t *out,
                              char *err, size_t errcap) {
  memset(out, 0, sizeof *out);
  ld_rest_store_query_t *q = &out->query;
  int rc = check_lengths(params, err, errcap);
  rc = rc ? rc : read_scalars(params, out, err, errcap);
  rc = rc ? rc : read_topics(params->content_topics, out, err, errcap);
  rc = rc ? rc : parse_time(params->start_time, &q->has_start_time, &q->start_time, err, errcap);
  rc = rc ? rc : parse_time(params->end_time, &q->has_end_time, &q->end_time, err, errcap);
  rc = rc ? rc : read_hashes(params->hashes, out, err, errcap);
  if (rc == 0 && given(params->cursor)) {
    rc = parse_hash(params->cursor, strlen(params->cursor), q->cursor, err, errcap);
    q->has_cursor = rc == 0;
  }
  q->forward = !given(params->ascending) || strcmp(params->ascending, "true") == 0;
  rc = rc ? rc : parse_page_size(params->page_size, &q->page_size, err, errcap);
  rc = rc ? rc : read_peer(params->peer_addr, out, err, errcap);
  if (rc != 0)
    ld_rest_store_request_clear(out);
  return rc;
}

void ld_rest_store_request_clear(ld_rest_store_request_t *r) {
  free(r->pubsub_topic);
  free(r->topics_text);
  free(r->content_topics);
  free(r->hashes);
  memset(r, 0, sizeof *r);
}
