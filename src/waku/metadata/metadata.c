#include "waku/metadata/metadata.h"

#include <string.h>

#include "base/error.h"
#include "p2p/reqresp.h"
#include "waku_metadata.pb-c.h"

typedef Ld__Waku__Metadata__WakuMetadataResponse pb_metadata_t;

/* ---- info ----------------------------------------------------------------------------------- */

void ld_metadata_info_init(ld_metadata_info_t *info) {
  memset(info, 0, sizeof *info);
}

int ld_metadata_info_add_shard(ld_metadata_info_t *info, uint32_t shard) {
  if (shard >= LD_METADATA_MAX_SHARDS)
    return LD_ERR_INVALID_ARG;
  uint8_t bit = (uint8_t)(1u << (shard % 8));
  if ((info->shard_bits[shard / 8] & bit) == 0) {
    info->shard_bits[shard / 8] |= bit;
    info->n_shards++;
  }
  return 0;
}

bool ld_metadata_info_has_shard(const ld_metadata_info_t *info, uint32_t shard) {
  return shard < LD_METADATA_MAX_SHARDS && (info->shard_bits[shard / 8] >> (shard % 8)) & 1u;
}

size_t ld_metadata_info_shards(const ld_metadata_info_t *info, uint16_t *out, size_t max) {
  size_t n = 0;
  for (uint32_t s = 0; s < LD_METADATA_MAX_SHARDS && n < info->n_shards; s++) {
    if (!ld_metadata_info_has_shard(info, s))
      continue;
    if (n < max)
      out[n] = (uint16_t)s;
    n++;
  }
  return n;
}

/* ---- codec ---------------------------------------------------------------------------------- */

static int append_framed(const pb_metadata_t *msg, size_t body, ld_buf_t *out) {
  uint8_t *p;
  int rc = ld_reqresp_append_frame(out, body, &p);
  if (rc == 0)
    ld__waku__metadata__waku_metadata_response__pack(msg, p);
  return rc;
}

int ld_metadata_encode(const ld_metadata_info_t *info, ld_buf_t *out) {
  uint16_t list[LD_METADATA_MAX_SHARDS];
  uint32_t shards[LD_METADATA_MAX_SHARDS];
  size_t n = ld_metadata_info_shards(info, list, LD_METADATA_MAX_SHARDS);
  for (size_t i = 0; i < n; i++)
    shards[i] = list[i];
  pb_metadata_t msg = LD__WAKU__METADATA__WAKU_METADATA_RESPONSE__INIT;
  msg.has_cluster_id = info->has_cluster;
  msg.cluster_id = info->cluster_id;
  msg.n_shards = msg.n_shards_packed = n;
  msg.shards = msg.shards_packed = shards;
  size_t body = ld__waku__metadata__waku_metadata_response__get_packed_size(&msg);
  if (body > LD_METADATA_MAX_MSG) {
    msg.n_shards = 0; /* the packed copy alone is what nwaku reads first */
    body = ld__waku__metadata__waku_metadata_response__get_packed_size(&msg);
  }
  if (body > LD_METADATA_MAX_MSG)
    return LD_ERR_TOO_LARGE;
  return append_framed(&msg, body, out);
}

static void take_shards(const uint32_t *v, size_t n, ld_metadata_info_t *out) {
  for (size_t i = 0; i < n; i++)
    ld_metadata_info_add_shard(out, v[i]); /* out-of-range shards are dropped */
}

int ld_metadata_decode(const uint8_t *data, size_t len, ld_metadata_info_t *out) {
  ld_metadata_info_init(out);
  const uint8_t *body;
  size_t n;
  int used = ld_reqresp_read_frame(data, len, LD_METADATA_MAX_MSG, &body, &n);
  if (used < 0)
    return used;
  pb_metadata_t *msg = ld__waku__metadata__waku_metadata_response__unpack(NULL, n, body);
  if (msg == NULL)
    return LD_ERR_BAD_PROTOBUF;
  out->has_cluster = msg->has_cluster_id;
  out->cluster_id = msg->has_cluster_id ? msg->cluster_id : 0;
  if (msg->n_shards_packed > 0)
    take_shards(msg->shards_packed, msg->n_shards_packed, out);
  else
    take_shards(msg->shards, msg->n_shards, out);
  ld__waku__metadata__waku_metadata_response__free_unpacked(msg, NULL);
  return used;
}

/* ---- policy --------------------------------------------------------------------------------- */

bool ld_metadata_is_decode_error(int err) {
  switch (err) {
  case LD_ERR_BAD_PROTOBUF:
  case LD_ERR_TOO_LARGE:
  case LD_ERR_MALFORMED:
  case LD_ERR_TRUNCATED:
  case LD_ERR_VARINT_NONMINIMAL:
  case LD_ERR_VARINT_TOO_LONG:
    return true;
  default:
    return false;
  }
}

int ld_metadata_policy(uint32_t local_cluster, bool require_metadata, int result,
                       const ld_metadata_info_t *remote) {
  if (result == 0) {
    if (remote == NULL || !remote->has_cluster || remote->cluster_id != local_cluster)
      return LD_ERR_CLUSTER_MISMATCH;
    return 0;
  }
  if (result == LD_ERR_CLOSED || result == LD_ERR_NOMEM)
    return 0;
  if (ld_metadata_is_decode_error(result))
    return result;
  return require_metadata ? result : 0;
}
