#include "waku/archive/postgres/pg_rows.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/hex.h"
#include "base/utf8.h"

#define HEX_HASH_LEN (2 * LD_WAKU_HASH_LEN)
#define NUM_LEN 24 /* a decimal int64 and its NUL */
#define INSERT_PARAMS 7

/* Text PostgreSQL can store in a UTF8 database: valid UTF-8 without NUL. */
static bool text_ok(const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    if (s[i] == 0)
      return false;
    size_t k = ld_utf8_char_len((const uint8_t *)s + i, n - i);
    if (k == 0)
      return false;
    i += k;
  }
  return true;
}

static void rollback(PGconn *c, int rc, uint64_t deadline_ms) {
  if (rc != 0 && !ld_pg_conn_lost(rc)) {
    ld_pg_status_t ignored;
    ld_pg_run(c, "ROLLBACK", deadline_ms, &ignored);
  }
}

/* ---- inserts ------------------------------------------------------------------------------- */

typedef struct enc_row {
  const char *v[INSERT_PARAMS];
  size_t row; /* index in the batch */
} enc_row_t;

/* Text parameters of the rows that can be stored; the strings live in the returned buffer. */
static char *encode_rows(ld_archive_batch_t *b, enc_row_t *enc, size_t *n_enc) {
  size_t bytes = 1, n = 0;
  for (size_t i = 0; i < b->n; i++) {
    ld_archive_batch_row_t *r = &b->rows[i];
    bool ok = text_ok(r->pubsub_topic, r->pubsub_topic_len) &&
              text_ok(r->msg.content_topic, r->msg.content_topic_len);
    r->result = ok ? 0 : LD_ERR_BAD_ENCODING;
    if (ok)
      bytes +=
          HEX_HASH_LEN + 1 + 2 * r->msg.payload_len + 1 + 2 * r->msg.meta_len + 1 + 2 * NUM_LEN;
  }
  char *buf = malloc(bytes), *w = buf;
  if (buf == NULL)
    return NULL;
  for (size_t i = 0; i < b->n; i++) {
    ld_archive_batch_row_t *r = &b->rows[i];
    if (r->result != 0)
      continue;
    enc_row_t *e = &enc[n++];
    e->row = i;
    e->v[0] = w;
    w += ld_hex_encode(r->hash, LD_WAKU_HASH_LEN, w) + 1;
    e->v[1] = r->pubsub_topic;
    e->v[2] = r->msg.content_topic;
    e->v[3] = w;
    w += ld_hex_encode(r->msg.payload, r->msg.payload_len, w) + 1;
    e->v[4] = w;
    w += snprintf(w, NUM_LEN, "%" PRIu32, r->msg.version) + 1;
    e->v[5] = w;
    w += snprintf(w, NUM_LEN, "%" PRId64, r->msg.timestamp) + 1;
    e->v[6] = NULL;
    if (r->msg.meta_len > 0) {
      e->v[6] = w;
      w += ld_hex_encode(r->msg.meta, r->msg.meta_len, w) + 1;
    }
  }
  *n_enc = n;
  return buf;
}

/* The parameters of one VALUES row: a constant prefix, then n placeholders with casts. */
typedef struct row_shape {
  const char *prefix;
  unsigned n;
  const char *const *casts;
} row_shape_t;

static const char *const k_ins_casts[INSERT_PARAMS] = {"", "", "", "", "::integer", "::bigint", ""};
static const row_shape_t k_ins_shape = {"'0',", INSERT_PARAMS, k_ins_casts};
static const char *const k_look_casts[2] = {"", "::bigint"};
static const row_shape_t k_look_shape = {"", 2, k_look_casts};

static const char k_ins_head[] = "INSERT INTO messages (id, messageHash, pubsubTopic, "
                                 "contentTopic, payload, version, timestamp, meta) VALUES ";
static const char k_ins_tail[] = " ON CONFLICT DO NOTHING RETURNING messageHash";
static const char k_look_head[] = "INSERT INTO messages_lookup (messageHash, timestamp) VALUES ";
static const char k_look_tail[] = " ON CONFLICT DO NOTHING";

/* head ‖ "(…), (…)" for k rows ‖ tail, NUL-terminated. */
static int values_sql(ld_buf_t *sql, const char *head, const row_shape_t *shape, size_t k,
                      const char *tail) {
  ld_buf_reset(sql);
  int rc = ld_buf_append(sql, head, strlen(head));
  char one[32];
  for (size_t i = 0; i < k && rc == 0; i++) {
    rc |= ld_buf_append(sql, i ? ",(" : "(", i ? 2 : 1);
    rc |= ld_buf_append(sql, shape->prefix, strlen(shape->prefix));
    for (unsigned j = 0; j < shape->n; j++) {
      int n = snprintf(one, sizeof one, "%s$%u%s", j ? "," : "", (unsigned)(i * shape->n) + j + 1,
                       shape->casts[j]);
      rc |= ld_buf_append(sql, one, (size_t)n);
    }
    rc |= ld_buf_append(sql, ")", 1);
  }
  if (rc == 0)
    rc = ld_buf_append(sql, tail, strlen(tail) + 1);
  return rc;
}

/* Marks the rows whose hash came back from RETURNING as new. */
static void mark_new(ld_archive_batch_t *b, ld_hashmap_t *index, PGresult *r) {
  for (int i = 0; i < PQntuples(r); i++) {
    uint8_t hash[LD_WAKU_HASH_LEN];
    size_t len;
    if (ld_hex_decode(PQgetvalue(r, i, 0), (size_t)PQgetlength(r, i, 0), hash, sizeof hash, &len) !=
            0 ||
        len != LD_WAKU_HASH_LEN)
      continue;
    uintptr_t at = (uintptr_t)ld_hashmap_get(index, hash, LD_WAKU_HASH_LEN);
    if (at != 0)
      b->rows[at - 1].result = 1;
  }
}

static int insert_messages(PGconn *c, ld_archive_batch_t *b, const enc_row_t *enc, size_t n,
                           ld_hashmap_t *index, uint64_t dl, ld_pg_status_t *st) {
  const char **vals = malloc(LD_PG_INSERT_CHUNK * INSERT_PARAMS * sizeof *vals);
  ld_buf_t sql;
  ld_buf_init(&sql);
  int rc = vals != NULL ? 0 : LD_ERR_NOMEM;
  for (size_t at = 0; rc == 0 && at < n; at += LD_PG_INSERT_CHUNK) {
    size_t k = n - at < LD_PG_INSERT_CHUNK ? n - at : LD_PG_INSERT_CHUNK;
    for (size_t i = 0; i < k; i++)
      memcpy(&vals[i * INSERT_PARAMS], enc[at + i].v, sizeof enc[at + i].v);
    if (values_sql(&sql, k_ins_head, &k_ins_shape, k, k_ins_tail) != 0) {
      rc = LD_ERR_NOMEM;
      break;
    }
    PGresult *r;
    rc = ld_pg_exec(c, (const char *)sql.data, (int)(k * INSERT_PARAMS), vals, dl, &r, st);
    if (rc == 0) {
      mark_new(b, index, r);
      PQclear(r);
    }
  }
  ld_buf_clear(&sql);
  free(vals);
  return rc;
}

static int insert_lookup(PGconn *c, const ld_archive_batch_t *b, const enc_row_t *enc, size_t n,
                         uint64_t dl, ld_pg_status_t *st) {
  const char **vals = malloc(LD_PG_INSERT_CHUNK * 2 * sizeof *vals);
  ld_buf_t sql;
  ld_buf_init(&sql);
  int rc = vals != NULL ? 0 : LD_ERR_NOMEM;
  size_t i = 0;
  while (rc == 0 && i < n) {
    size_t k = 0;
    for (; i < n && k < LD_PG_INSERT_CHUNK; i++) {
      if (b->rows[enc[i].row].result != 1)
        continue;
      vals[2 * k] = enc[i].v[0];
      vals[2 * k + 1] = enc[i].v[5];
      k++;
    }
    if (k == 0)
      break;
    if (values_sql(&sql, k_look_head, &k_look_shape, k, k_look_tail) != 0) {
      rc = LD_ERR_NOMEM;
      break;
    }
    rc = ld_pg_exec(c, (const char *)sql.data, (int)(2 * k), vals, dl, NULL, st);
  }
  ld_buf_clear(&sql);
  free(vals);
  return rc;
}

static ld_hashmap_t *index_batch(const ld_archive_batch_t *b, const enc_row_t *enc, size_t n) {
  ld_hashmap_t *m = ld_hashmap_new(n);
  for (size_t i = 0; m != NULL && i < n; i++) {
    const uint8_t *h = b->rows[enc[i].row].hash;
    if (!ld_hashmap_contains(m, h, LD_WAKU_HASH_LEN) &&
        ld_hashmap_put(m, h, LD_WAKU_HASH_LEN, (void *)(uintptr_t)(enc[i].row + 1), NULL) != 0) {
      ld_hashmap_free(m, NULL);
      return NULL;
    }
  }
  return m;
}

int ld_pg_insert_batch(PGconn *c, ld_archive_batch_t *b, uint64_t deadline_ms, ld_pg_status_t *st) {
  enc_row_t *enc = malloc((b->n + 1) * sizeof *enc);
  size_t n = 0;
  char *buf = enc != NULL ? encode_rows(b, enc, &n) : NULL;
  ld_hashmap_t *index = buf != NULL ? index_batch(b, enc, n) : NULL;
  int rc = index != NULL ? 0 : LD_ERR_NOMEM;
  if (rc == 0 && n > 0) {
    rc = ld_pg_run(c, "BEGIN", deadline_ms, st);
    if (rc == 0)
      rc = insert_messages(c, b, enc, n, index, deadline_ms, st);
    if (rc == 0)
      rc = insert_lookup(c, b, enc, n, deadline_ms, st);
    if (rc == 0)
      rc = ld_pg_run(c, "COMMIT", deadline_ms, st);
    rollback(c, rc, deadline_ms);
  }
  if (rc == LD_ERR_NOMEM)
    snprintf(st->why, sizeof st->why, "out of memory");
  ld_hashmap_free(index, NULL);
  free(buf);
  free(enc);
  return rc;
}

/* ---- queries ------------------------------------------------------------------------------- */

/* Parameters of one query: pointers into `text`. */
typedef struct qparams {
  const char *v[12 + LD_ARCHIVE_MAX_QUERY_CONTENT_TOPICS];
  int n;
  char text[HEX_HASH_LEN + 1 + 4 * NUM_LEN]; /* the cursor's hash and up to four numbers */
  size_t used;
} qparams_t;

static const char *add_text(qparams_t *p, const char *s) {
  p->v[p->n++] = s;
  return s;
}

static int add_num(qparams_t *p, ld_buf_t *sql, const char *fmt, int64_t v) {
  char *w = p->text + p->used;
  p->used += (size_t)snprintf(w, NUM_LEN, "%" PRId64, v) + 1;
  add_text(p, w);
  char frag[64];
  int n = snprintf(frag, sizeof frag, fmt, p->n);
  return ld_buf_append(sql, frag, (size_t)n);
}

static const char *add_hash(qparams_t *p, const uint8_t *hash) {
  char *w = p->text + p->used;
  p->used += ld_hex_encode(hash, LD_WAKU_HASH_LEN, w) + 1;
  return add_text(p, w);
}

static int add_list(qparams_t *p, ld_buf_t *sql, const char *col, size_t n) {
  char frag[48];
  int rc = ld_buf_append(sql, col, strlen(col));
  for (size_t i = 0; i < n && rc == 0; i++) {
    int k = snprintf(frag, sizeof frag, "%s$%d", i ? "," : "", p->n - (int)n + (int)i + 1);
    rc = ld_buf_append(sql, frag, (size_t)k);
  }
  return rc != 0 ? rc : ld_buf_append(sql, ")", 1);
}

/* The cursor's timestamp through ld_messages_key_ts; the row is confirmed in messages, where the
 * timestamp leaves one partition to probe. */
static int cursor_ts(PGconn *c, const uint8_t *hash, uint64_t dl, int64_t *ts, ld_pg_status_t *st) {
  static const char sql[] =
      "SELECT m.timestamp FROM ld_messages_key_ts k CROSS JOIN LATERAL (SELECT timestamp FROM "
      "messages WHERE messageHash = $1::varchar AND timestamp = k.timestamp LIMIT 1) AS m "
      "WHERE k.hashKey = hashtextextended($1::varchar, 0) LIMIT 1";
  char hex[HEX_HASH_LEN + 1];
  ld_hex_encode(hash, LD_WAKU_HASH_LEN, hex);
  const char *vals[1] = {hex};
  PGresult *r;
  int rc = ld_pg_exec_cached(c, sql, 1, vals, dl, &r, st);
  if (rc != 0)
    return rc;
  bool found = PQntuples(r) > 0;
  if (found)
    *ts = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
  PQclear(r);
  if (found)
    return 0;
  snprintf(st->why, sizeof st->why, "cursor not found");
  return LD_ERR_NOT_FOUND;
}

static int where_topics(const ld_archive_query_t *q, qparams_t *p, ld_buf_t *sql, bool *none) {
  int rc = 0;
  if (q->pubsub_topic != NULL) {
    if (!text_ok(q->pubsub_topic, strlen(q->pubsub_topic)))
      *none = true;
    add_text(p, q->pubsub_topic);
    char frag[48];
    int k = snprintf(frag, sizeof frag, " AND pubsubTopic = $%d", p->n);
    rc = ld_buf_append(sql, frag, (size_t)k);
  }
  size_t n = 0;
  for (size_t i = 0; i < q->n_content_topics; i++)
    if (text_ok(q->content_topics[i], strlen(q->content_topics[i]))) {
      add_text(p, q->content_topics[i]);
      n++;
    }
  if (q->n_content_topics > 0 && n == 0)
    *none = true;
  if (n > 0 && rc == 0)
    rc = add_list(p, sql, " AND contentTopic IN (", n);
  return rc;
}

/* "{h1,h2,…}": the hashes as one array parameter (hex needs no quoting). */
static int hash_array(const ld_archive_query_t *q, ld_buf_t *out) {
  if (ld_buf_reserve(out, q->n_hashes * (HEX_HASH_LEN + 1) + 3) != 0)
    return LD_ERR_NOMEM;
  char *w = (char *)out->data;
  *w++ = '{';
  for (size_t i = 0; i < q->n_hashes; i++) {
    if (i > 0)
      *w++ = ',';
    w += ld_hex_encode(q->hashes[i], LD_WAKU_HASH_LEN, w);
  }
  *w++ = '}';
  *w++ = 0;
  return 0;
}

/* The stored (hash, timestamp) pairs of a lookup's hashes, as two array parameters, and the
 * range of the timestamps. */
typedef struct key_pairs {
  ld_buf_t hashes, stamps; /* "{h1,…}", "{t1,…}" */
  char lo[NUM_LEN], hi[NUM_LEN];
  int n;
} key_pairs_t;

static int find_pairs(PGconn *c, const char *hashes, uint64_t dl, key_pairs_t *kp,
                      ld_pg_status_t *st) {
  static const char sql[] =
      "SELECT h.kh, k.kt FROM (SELECT DISTINCT unnest((SELECT $1::varchar[])) AS kh) AS h "
      "CROSS JOIN LATERAL (SELECT timestamp AS kt FROM ld_messages_key_ts WHERE hashKey = "
      "hashtextextended(h.kh, 0) OFFSET 0) AS k";
  const char *vals[1] = {hashes};
  PGresult *r;
  int rc = ld_pg_exec_cached(c, sql, 1, vals, dl, &r, st);
  if (rc != 0)
    return rc;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  kp->n = PQntuples(r);
  rc = ld_buf_append(&kp->hashes, "{", 1) | ld_buf_append(&kp->stamps, "{", 1);
  for (int i = 0; rc == 0 && i < kp->n; i++) {
    const char *t = PQgetvalue(r, i, 1);
    int64_t ts = strtoll(t, NULL, 10);
    lo = ts < lo ? ts : lo;
    hi = ts > hi ? ts : hi;
    rc = ld_buf_append(&kp->hashes, ",", i > 0) | ld_buf_append(&kp->stamps, ",", i > 0) |
         ld_buf_append(&kp->hashes, PQgetvalue(r, i, 0), (size_t)PQgetlength(r, i, 0)) |
         ld_buf_append(&kp->stamps, t, (size_t)PQgetlength(r, i, 1));
  }
  PQclear(r);
  if (rc == 0)
    rc = ld_buf_append(&kp->hashes, "}", 2) | ld_buf_append(&kp->stamps, "}", 2);
  snprintf(kp->lo, sizeof kp->lo, "%" PRId64, lo);
  snprintf(kp->hi, sizeof kp->hi, "%" PRId64, hi);
  return rc != 0 ? LD_ERR_NOMEM : 0;
}

/* The source of a lookup once its pairs are known: each pair fetches its row from messages, and
 * the pairs' timestamp range, a plain parameter, lets the server set up only the partitions in
 * that range (a lookup that sets every partition up took 7.9 ms with a month of hourly
 * partitions). */
static int add_pairs_source(qparams_t *p, ld_buf_t *sql, const key_pairs_t *kp) {
  add_text(p, (const char *)kp->hashes.data);
  add_text(p, (const char *)kp->stamps.data);
  add_text(p, kp->lo);
  add_text(p, kp->hi);
  char frag[384];
  int k = snprintf(frag, sizeof frag,
                   " FROM unnest((SELECT $%d::varchar[]), (SELECT $%d::bigint[])) AS k(kh, kt) "
                   "CROSS JOIN LATERAL (SELECT * FROM messages WHERE messageHash = k.kh AND "
                   "timestamp = k.kt AND timestamp >= $%d::bigint AND timestamp <= $%d::bigint "
                   "LIMIT 1) AS m WHERE TRUE",
                   p->n - 3, p->n - 2, p->n - 1, p->n);
  return ld_buf_append(sql, frag, (size_t)k);
}

/* The source of a lookup by hash: the hashes as one array parameter "{h1,h2,…}" (hex needs no
 * quoting), each probing ld_messages_key_ts by its key for its timestamps, and each fetching its
 * row from messages. OFFSET 0 and LIMIT keep the LATERAL subqueries from being flattened, so the
 * plan stays index probes in a nested loop whatever the statistics say (a freshly filled table has
 * none), and the timestamp leaves one partition to probe per hash (run-time pruning). The array
 * is read through a scalar subquery so that no plan depends on its length: the server then keeps
 * the generic plan for every lookup (a custom plan, which it kept for short arrays, plans every
 * partition of messages again on each call: 0.66 ms of server time for one hash, 0.2 ms generic).
 * The key columns are renamed so the filters name messages' columns. */
static int add_hash_source(qparams_t *p, ld_buf_t *sql, const char *hashes) {
  add_text(p, hashes);
  char frag[384];
  int k = snprintf(
      frag, sizeof frag,
      " FROM (SELECT DISTINCT unnest((SELECT $%d::varchar[])) AS kh) AS h CROSS JOIN LATERAL "
      "(SELECT timestamp AS kt FROM ld_messages_key_ts WHERE hashKey = "
      "hashtextextended(h.kh, 0) OFFSET 0) AS k CROSS JOIN LATERAL (SELECT * FROM messages "
      "WHERE messageHash = h.kh AND timestamp = k.kt LIMIT 1) AS m WHERE TRUE",
      p->n);
  return ld_buf_append(sql, frag, (size_t)k);
}

/* With hashes the rows are found through ld_messages_key_ts and sorted afterwards (OFFSET 0
 * keeps the planner from walking the timestamp index of every partition instead). */
static int build_query(const ld_archive_query_t *q, const char *hashes, const key_pairs_t *kp,
                       int64_t cts, qparams_t *p, ld_buf_t *sql, bool *none) {
  const char *cols = q->include_data ? "SELECT messageHash, pubsubTopic, contentTopic, payload, "
                                       "version, timestamp, meta"
                                     : "SELECT messageHash, timestamp";
  int rc = q->n_hashes > 0 ? ld_buf_append(sql, "SELECT * FROM (", 15) : 0;
  rc |= ld_buf_append(sql, cols, strlen(cols));
  if (rc == 0)
    rc = kp != NULL        ? add_pairs_source(p, sql, kp)
         : q->n_hashes > 0 ? add_hash_source(p, sql, hashes)
                           : ld_buf_append(sql, " FROM messages WHERE TRUE", 25);
  if (q->has_cursor && rc == 0) {
    rc = add_num(p, sql,
                 q->forward ? " AND (timestamp, messageHash) > ($%d::bigint"
                            : " AND (timestamp, messageHash) < ($%d::bigint",
                 cts);
    add_hash(p, q->cursor);
    char frag[16];
    int k = snprintf(frag, sizeof frag, ", $%d)", p->n);
    rc |= ld_buf_append(sql, frag, (size_t)k);
  }
  if (rc == 0)
    rc = where_topics(q, p, sql, none);
  if (q->has_time_start && rc == 0)
    rc = add_num(p, sql, " AND timestamp >= $%d::bigint", q->time_start);
  if (q->has_time_end && rc == 0)
    rc = add_num(p, sql, " AND timestamp <= $%d::bigint", q->time_end);
  if (q->n_hashes > 0 && rc == 0)
    rc = ld_buf_append(sql, " OFFSET 0) AS found", 19);
  const char *order = q->forward ? " ORDER BY timestamp ASC, messageHash ASC LIMIT $%d::bigint"
                                 : " ORDER BY timestamp DESC, messageHash DESC LIMIT $%d::bigint";
  if (rc == 0)
    rc = add_num(p, sql, order, q->limit);
  return rc == 0 ? ld_buf_append(sql, "", 1) : rc;
}

/* Decodes hex text into the scratch buffer; false when it is not hex. */
static bool unhex(const char *text, size_t len, ld_buf_t *scratch, size_t *out_len) {
  ld_buf_reset(scratch);
  if (ld_buf_reserve(scratch, len / 2 + 1) != 0)
    return false;
  return ld_hex_decode(text, len, scratch->data, scratch->cap, out_len) == 0;
}

static int read_row(PGresult *r, int i, bool include_data, ld_buf_t *pay, ld_buf_t *meta,
                    ld_archive_rows_t *rows) {
  uint8_t hash[LD_WAKU_HASH_LEN];
  size_t len;
  if (ld_hex_decode(PQgetvalue(r, i, 0), (size_t)PQgetlength(r, i, 0), hash, sizeof hash, &len) !=
          0 ||
      len != LD_WAKU_HASH_LEN)
    return 0; /* not a key we wrote: skipped */
  if (!include_data)
    return ld_archive_rows_add(rows, hash, false, NULL, 0, NULL);
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.content_topic = PQgetvalue(r, i, 2);
  m.content_topic_len = (size_t)PQgetlength(r, i, 2);
  if (!unhex(PQgetvalue(r, i, 3), (size_t)PQgetlength(r, i, 3), pay, &m.payload_len))
    return 0;
  m.payload = pay->data;
  m.version = (uint32_t)strtoul(PQgetvalue(r, i, 4), NULL, 10);
  m.timestamp = strtoll(PQgetvalue(r, i, 5), NULL, 10);
  if (!PQgetisnull(r, i, 6)) {
    if (!unhex(PQgetvalue(r, i, 6), (size_t)PQgetlength(r, i, 6), meta, &m.meta_len))
      return 0;
    m.meta = meta->data;
  }
  return ld_archive_rows_add(rows, hash, true, PQgetvalue(r, i, 1), (size_t)PQgetlength(r, i, 1),
                             &m);
}

int ld_pg_query(PGconn *c, const ld_archive_query_t *q, size_t n_partitions, uint64_t deadline_ms,
                ld_archive_rows_t *rows, ld_pg_status_t *st) {
  int64_t cts = 0;
  int rc = q->has_cursor ? cursor_ts(c, q->cursor, deadline_ms, &cts, st) : 0;
  if (rc != 0)
    return rc;
  qparams_t *p = calloc(1, sizeof *p);
  if (p == NULL)
    return LD_ERR_NOMEM;
  ld_buf_t sql, pay, meta;
  ld_buf_init(&sql);
  ld_buf_init(&pay);
  ld_buf_init(&meta);
  bool none = false;
  key_pairs_t kp = {0};
  ld_buf_t hashes;
  ld_buf_init(&hashes);
  ld_buf_init(&kp.hashes);
  ld_buf_init(&kp.stamps);
  bool two_steps = q->n_hashes > 0 && n_partitions >= LD_PG_TWO_STEP_PARTITIONS;
  if (q->n_hashes > 0)
    rc = hash_array(q, &hashes);
  if (rc == 0 && two_steps) {
    rc = find_pairs(c, (const char *)hashes.data, deadline_ms, &kp, st);
    none = rc == 0 && kp.n == 0;
  }
  if (rc == 0 &&
      build_query(q, (const char *)hashes.data, two_steps ? &kp : NULL, cts, p, &sql, &none) != 0)
    rc = LD_ERR_NOMEM;
  PGresult *r = NULL;
  if (rc == 0 && !none && q->n_hashes > 0) /* a few shapes, one partition per hash at run time */
    rc = ld_pg_exec_cached(c, (const char *)sql.data, p->n, p->v, deadline_ms, &r, st);
  else if (rc == 0 && !none) /* plan-time pruning by the time range needs the values */
    rc = ld_pg_exec(c, (const char *)sql.data, p->n, p->v, deadline_ms, &r, st);
  for (int i = 0; r != NULL && rc == 0 && i < PQntuples(r); i++)
    rc = read_row(r, i, q->include_data, &pay, &meta, rows);
  PQclear(r);
  ld_buf_clear(&sql);
  ld_buf_clear(&pay);
  ld_buf_clear(&meta);
  ld_buf_clear(&hashes);
  ld_buf_clear(&kp.hashes);
  ld_buf_clear(&kp.stamps);
  free(p);
  if (rc == LD_ERR_NOMEM)
    snprintf(st->why, sizeof st->why, "out of memory");
  return rc;
}

/* ---- key listing --------------------------------------------------------------------------- */

int ld_pg_list_keys(PGconn *c, const ld_archive_query_t *q, int64_t after_ts, uint64_t deadline_ms,
                    ld_archive_rows_t *rows, ld_pg_status_t *st) {
  char num[4][NUM_LEN], hash[HEX_HASH_LEN + 1] = "";
  snprintf(num[0], NUM_LEN, "%" PRId64, q->time_start);
  snprintf(num[1], NUM_LEN, "%" PRId64, q->time_end);
  snprintf(num[2], NUM_LEN, "%" PRId64, q->has_cursor ? after_ts : INT64_MIN);
  snprintf(num[3], NUM_LEN, "%" PRIu32, q->limit);
  if (q->has_cursor)
    ld_hex_encode(q->cursor, LD_WAKU_HASH_LEN, hash);
  const char *vals[5] = {num[0], num[1], num[2], hash, num[3]};
  PGresult *r = NULL;
  /* plan-time partition pruning by the time range needs the values: not prepared */
  int rc = ld_pg_exec(c,
                      "SELECT messageHash, timestamp, pubsubTopic FROM messages "
                      "WHERE timestamp >= $1::bigint AND timestamp <= $2::bigint "
                      "AND (timestamp, messageHash) > ($3::bigint, $4) "
                      "ORDER BY timestamp ASC, messageHash ASC LIMIT $5::bigint",
                      5, vals, deadline_ms, &r, st);
  for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
    uint8_t h[LD_WAKU_HASH_LEN];
    size_t len;
    if (ld_hex_decode(PQgetvalue(r, i, 0), (size_t)PQgetlength(r, i, 0), h, sizeof h, &len) != 0 ||
        len != LD_WAKU_HASH_LEN)
      continue; /* not a key we wrote: skipped */
    rc = ld_archive_rows_add_key(rows, h, strtoll(PQgetvalue(r, i, 1), NULL, 10),
                                 PQgetvalue(r, i, 2), (size_t)PQgetlength(r, i, 2));
  }
  PQclear(r);
  if (rc == LD_ERR_NOMEM)
    snprintf(st->why, sizeof st->why, "out of memory");
  return rc;
}

/* ---- figures and deletes ------------------------------------------------------------------- */

int ld_pg_scalar(PGconn *c, const char *sql, const char *param, uint64_t deadline_ms, uint64_t *out,
                 ld_pg_status_t *st) {
  PGresult *r;
  const char *vals[1] = {param};
  int rc = ld_pg_exec(c, sql, param != NULL ? 1 : 0, vals, deadline_ms, &r, st);
  if (rc != 0)
    return rc;
  *out = PQntuples(r) > 0 && !PQgetisnull(r, 0, 0) ? strtoull(PQgetvalue(r, 0, 0), NULL, 10) : 0;
  PQclear(r);
  return 0;
}

int ld_pg_nth_newest(PGconn *c, uint64_t offset, uint64_t deadline_ms, bool *found, int64_t *ts,
                     uint8_t hash[LD_WAKU_HASH_LEN], ld_pg_status_t *st) {
  char off[NUM_LEN];
  snprintf(off, sizeof off, "%" PRIu64, offset);
  const char *vals[1] = {off};
  PGresult *r;
  int rc = ld_pg_exec(c,
                      "SELECT timestamp, messageHash FROM messages "
                      "ORDER BY timestamp DESC, messageHash DESC LIMIT 1 OFFSET $1::bigint",
                      1, vals, deadline_ms, &r, st);
  if (rc != 0)
    return rc;
  size_t len = 0;
  *found = PQntuples(r) > 0 &&
           ld_hex_decode(PQgetvalue(r, 0, 1), (size_t)PQgetlength(r, 0, 1), hash, LD_WAKU_HASH_LEN,
                         &len) == 0 &&
           len == LD_WAKU_HASH_LEN;
  if (*found)
    *ts = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
  PQclear(r);
  return 0;
}

int ld_pg_delete_before(PGconn *c, int64_t ts, const uint8_t *hash, uint64_t deadline_ms,
                        uint64_t *rows, ld_pg_status_t *st) {
  static const char *const by_ts[] = {
      "DELETE FROM messages WHERE timestamp < $1::bigint",
      "DELETE FROM messages_lookup WHERE timestamp < $1::bigint",
  };
  static const char *const by_key[] = {
      "DELETE FROM messages WHERE (timestamp, messageHash) < ($1::bigint, $2)",
      "DELETE FROM messages_lookup WHERE (timestamp, messageHash) < ($1::bigint, $2)",
  };
  char num[NUM_LEN], hex[HEX_HASH_LEN + 1];
  snprintf(num, sizeof num, "%" PRId64, ts);
  const char *vals[2] = {num, hex};
  if (hash != NULL)
    ld_hex_encode(hash, LD_WAKU_HASH_LEN, hex);
  const char *const *sqls = hash != NULL ? by_key : by_ts;
  int rc = ld_pg_run(c, "BEGIN; SET LOCAL statement_timeout = 0", deadline_ms, st);
  for (int i = 0; i < 2 && rc == 0; i++) {
    PGresult *r;
    rc = ld_pg_exec(c, sqls[i], hash != NULL ? 2 : 1, vals, deadline_ms, &r, st);
    if (rc == 0 && i == 0)
      *rows = strtoull(PQcmdTuples(r), NULL, 10);
    if (rc == 0)
      PQclear(r);
  }
  if (rc == 0)
    rc = ld_pg_run(c, "COMMIT", deadline_ms, st);
  rollback(c, rc, deadline_ms);
  return rc;
}
