#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "waku/core/codecs.h"
#include "waku/enr/enr.h"

int ld_enr_waku2(const ld_enr_t *enr, uint8_t *caps) {
  size_t n;
  const uint8_t *v = ld_enr_get(enr, "waku2", &n);
  if (v == NULL || n != 1)
    return LD_ERR_NOT_FOUND;
  *caps = v[0];
  return 0;
}

size_t ld_enr_waku2_codecs(uint8_t caps, const char **out, size_t max) {
  static const char *const codecs[] = {
      LD_WAKU_RELAY_CODEC,     LD_WAKU_STORE_CODEC,          LD_WAKU_FILTER_SUBSCRIBE_CODEC,
      LD_WAKU_LIGHTPUSH_CODEC, LD_WAKU_RECONCILIATION_CODEC, LD_WAKU_MIX_CODEC};
  size_t n = 0;
  for (size_t bit = 0; bit < sizeof codecs / sizeof codecs[0]; bit++) {
    if (!(caps >> bit & 1u))
      continue;
    if (n < max)
      out[n] = codecs[bit];
    n++;
  }
  return n;
}

/* ---- multiaddrs ----------------------------------------------------------------------------- */

typedef void (*ma_fn)(ld_multiaddr_t *ma, void *ud);

/* Calls fn for every valid entry of `multiaddrs`; returns their count or LD_ERR_MALFORMED. */
static int walk_multiaddrs(const ld_enr_t *enr, ma_fn fn, void *ud, size_t *skipped) {
  size_t len, count = 0;
  const uint8_t *v = ld_enr_get(enr, "multiaddrs", &len);
  *skipped = 0;
  if (v == NULL)
    return 0;
  ld_cursor_t c;
  ld_cursor_init(&c, v, len);
  while (!ld_cursor_empty(&c)) {
    uint16_t n;
    const uint8_t *p;
    ld_multiaddr_t ma;
    if (ld_cursor_be16(&c, &n) != 0 || n == 0 || ld_cursor_bytes(&c, n, &p) != 0)
      return LD_ERR_MALFORMED;
    if (ld_multiaddr_from_bytes(&ma, p, n) != 0) {
      (*skipped)++;
      continue;
    }
    fn(&ma, ud);
    count++;
  }
  return (int)count;
}

typedef struct ma_list {
  ld_multiaddr_t *out;
  size_t max, n;
} ma_list_t;

static void collect(ld_multiaddr_t *ma, void *ud) {
  ma_list_t *l = ud;
  if (l->n < l->max)
    l->out[l->n] = *ma;
  l->n++;
}

int ld_enr_multiaddrs(const ld_enr_t *enr, ld_multiaddr_t *out, size_t max, size_t *skipped) {
  ma_list_t l = {out, max, 0};
  size_t bad;
  int rc = walk_multiaddrs(enr, collect, &l, &bad);
  if (skipped != NULL)
    *skipped = rc < 0 ? 0 : bad;
  return rc;
}

/* ---- shards --------------------------------------------------------------------------------- */

bool ld_enr_shards_has(const ld_enr_shards_t *s, uint16_t shard) {
  return shard <= LD_ENR_MAX_SHARD && (s->bits[shard / 8] >> (shard % 8) & 1u);
}

int ld_enr_shards_add(ld_enr_shards_t *s, uint16_t shard) {
  if (shard > LD_ENR_MAX_SHARD)
    return LD_ERR_INVALID_ARG;
  if (!ld_enr_shards_has(s, shard)) {
    s->bits[shard / 8] |= (uint8_t)(1u << (shard % 8));
    s->n_shards++;
  }
  return 0;
}

static int shards_from_rs(const uint8_t *v, size_t len, ld_enr_shards_t *out) {
  if (len < 3 || len != 3 + 2 * (size_t)v[2])
    return LD_ERR_NOT_FOUND;
  memset(out, 0, sizeof *out);
  out->cluster_id = (uint16_t)(v[0] << 8 | v[1]);
  for (size_t i = 0; i < v[2]; i++)
    ld_enr_shards_add(out, (uint16_t)(v[3 + 2 * i] << 8 | v[4 + 2 * i])); /* > 1023 dropped */
  return 0;
}

static int shards_from_rsv(const uint8_t *v, size_t len, ld_enr_shards_t *out) {
  if (len != LD_ENR_RSV_LEN)
    return LD_ERR_NOT_FOUND;
  memset(out, 0, sizeof *out);
  out->cluster_id = (uint16_t)(v[0] << 8 | v[1]);
  for (uint16_t s = 0; s <= LD_ENR_MAX_SHARD; s++)
    if (v[2 + s / 8] >> (s % 8) & 1u)
      ld_enr_shards_add(out, s);
  return 0;
}

int ld_enr_shards(const ld_enr_t *enr, ld_enr_shards_t *out) {
  size_t len;
  const uint8_t *v = ld_enr_get(enr, "rs", &len);
  if (v != NULL && shards_from_rs(v, len, out) == 0)
    return 0;
  v = ld_enr_get(enr, "rsv", &len);
  if (v != NULL && shards_from_rsv(v, len, out) == 0)
    return 0;
  return LD_ERR_NOT_FOUND;
}

bool ld_enr_cluster_mismatch(const ld_enr_t *enr, uint16_t cluster_id) {
  ld_enr_shards_t s;
  return ld_enr_shards(enr, &s) == 0 && s.cluster_id != cluster_id;
}

/* ---- dialable addresses --------------------------------------------------------------------- */

/* Appends `ma` unless it is already among the first `max` entries. */
static void add_unique(ld_multiaddr_t *ma, void *ud) {
  ma_list_t *l = ud;
  for (size_t i = 0; i < l->n && i < l->max; i++)
    if (ld_multiaddr_equal(&l->out[i], ma))
      return;
  collect(ma, ud);
}

static void add_stripped(ld_multiaddr_t *ma, void *ud) {
  ld_multiaddr_peerid(ma, NULL, true);
  if (ma->len > 0)
    add_unique(ma, ud);
}

static bool ip_tcp(ld_multiaddr_t *ma, uint32_t ip_code, const uint8_t *ip, size_t ip_len,
                   uint16_t port) {
  uint8_t be[2] = {(uint8_t)(port >> 8), (uint8_t)port};
  memset(ma, 0, sizeof *ma);
  return ld_multiaddr_push(ma, ip_code, ip, ip_len) == 0 &&
         ld_multiaddr_push(ma, LD_MA_TCP, be, 2) == 0;
}

size_t ld_enr_dial_addrs(const ld_enr_t *enr, ld_multiaddr_t *out, size_t max) {
  ma_list_t l = {out, max, 0};
  uint8_t ip[16];
  uint16_t tcp = 0, tcp6 = 0;
  ld_multiaddr_t ma;
  bool has_tcp = ld_enr_port(enr, "tcp", &tcp) == 0;
  if (ld_enr_port(enr, "tcp6", &tcp6) != 0)
    tcp6 = has_tcp ? tcp : 0;
  if (has_tcp && ld_enr_ip4(enr, ip) == 0 && ip_tcp(&ma, LD_MA_IP4, ip, 4, tcp))
    add_unique(&ma, &l);
  if (tcp6 != 0 && ld_enr_ip6(enr, ip) == 0 && ip_tcp(&ma, LD_MA_IP6, ip, 16, tcp6))
    add_unique(&ma, &l);
  size_t bad;
  ma_list_t probe = l;
  if (walk_multiaddrs(enr, add_stripped, &probe, &bad) < 0)
    return l.n; /* an invalid value contributes nothing */
  return probe.n;
}
