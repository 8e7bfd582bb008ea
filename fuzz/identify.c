/* Fuzz target: any bytes as a length-prefixed Identify message. A message that decodes must
 * re-encode (when it carries a key) and decode again to the same information. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "p2p/identify.h"

static void check_same(const ld_identify_info_t *a, const ld_identify_info_t *b, int kept) {
  if (!ld_peerid_equal(&a->peer_id, &b->peer_id) ||
      !ld_pubkey_equal(&a->public_key, &b->public_key))
    abort();
  if (a->has_agent_version != b->has_agent_version ||
      strcmp(a->agent_version, b->agent_version) != 0 ||
      strcmp(a->protocol_version, b->protocol_version) != 0)
    abort();
  if (a->n_protocols != b->n_protocols || b->n_listen_addrs != (size_t)kept)
    abort();
  for (size_t i = 0; i < a->n_protocols; i++)
    if (strcmp(a->protocols[i], b->protocols[i]) != 0)
      abort();
  for (size_t i = 0; i < b->n_listen_addrs; i++)
    if (!ld_multiaddr_equal(&a->listen_addrs[i], &b->listen_addrs[i]))
      abort();
  if (a->has_observed_addr != b->has_observed_addr ||
      (a->has_observed_addr && !ld_multiaddr_equal(&a->observed_addr, &b->observed_addr)))
    abort();
}

static void roundtrip(const ld_identify_info_t *info) {
  ld_identify_local_t local = {
      .public_key = &info->public_key,
      .listen_addrs = info->listen_addrs,
      .n_listen_addrs = info->n_listen_addrs,
      .observed_addr = info->has_observed_addr ? &info->observed_addr : NULL,
      .protocols = (const char *const *)info->protocols,
      .n_protocols = info->n_protocols,
      .protocol_version = info->has_protocol_version ? info->protocol_version : NULL,
      .agent_version = info->has_agent_version ? info->agent_version : NULL,
  };
  ld_buf_t out;
  ld_buf_init(&out);
  int kept = ld_identify_encode(&local, &out);
  if (kept >= 0) {
    ld_identify_info_t again;
    ld_identify_info_init(&again);
    if (ld_identify_decode(out.data, out.len, &info->peer_id, 0, &again) != (int)out.len)
      abort();
    check_same(info, &again, kept);
    ld_identify_info_clear(&again);
  }
  ld_buf_clear(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_identify_info_t info;
  ld_identify_info_init(&info);
  int rc = ld_identify_decode(data, size, NULL, LD_IDENTIFY_KEY_OPTIONAL, &info);
  if (rc > 0) {
    if ((size_t)rc > size || info.n_protocols > LD_IDENTIFY_MAX_PROTOCOLS ||
        info.n_listen_addrs > LD_IDENTIFY_MAX_ADDRS)
      abort();
    if (info.has_public_key)
      roundtrip(&info);
    ld_identify_info_t merged;
    ld_identify_info_init(&merged);
    if (ld_identify_info_merge(&merged, &info) == 0 && ld_identify_info_copy(&merged, &info) != 0)
      abort();
    ld_identify_info_clear(&merged);
  } else if (info.n_protocols != 0 || info.protocols != NULL || info.listen_addrs != NULL) {
    abort(); /* a failed decode leaves the info empty */
  }
  ld_identify_info_clear(&info);
  return 0;
}
