/* RLN-relay's RateLimitProof codec and the message's signal. */
#include "waku/rln/proof.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "rln.pb-c.h"
#include "zk/poseidon.h"

const uint8_t ld_rln_default_identifier[32] = "rln/waku-rln-relay/v2.0.0";

static void copy_field(uint8_t *dst, size_t cap, ProtobufCBinaryData src) {
  memset(dst, 0, cap);
  if (src.len > 0) {
    memcpy(dst, src.data, src.len < cap ? src.len : cap);
  }
}

int ld_rln_rate_limit_proof_decode(ld_rln_rate_limit_proof_t *out, const uint8_t *data,
                                   size_t len) {
  memset(out, 0, sizeof *out);
  if (len == 0) {
    return 0;
  }
  Ld__Waku__Rln__RateLimitProof *pb = ld__waku__rln__rate_limit_proof__unpack(NULL, len, data);
  if (pb == NULL) {
    return LD_ERR_BAD_PROTOBUF;
  }
  copy_field(out->proof, sizeof out->proof, pb->proof);
  copy_field(out->merkle_root, 32, pb->merkle_root);
  copy_field(out->epoch, 32, pb->epoch);
  copy_field(out->share_x, 32, pb->share_x);
  copy_field(out->share_y, 32, pb->share_y);
  copy_field(out->nullifier, 32, pb->nullifier);
  copy_field(out->rln_identifier, 32, pb->rln_identifier);
  ld__waku__rln__rate_limit_proof__free_unpacked(pb, NULL);
  return 0;
}

static ProtobufCBinaryData bin(const uint8_t *p, size_t n) {
  return (ProtobufCBinaryData){n, (uint8_t *)p};
}

size_t ld_rln_rate_limit_proof_encode(const ld_rln_rate_limit_proof_t *p,
                                      uint8_t out[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED]) {
  Ld__Waku__Rln__RateLimitProof pb = LD__WAKU__RLN__RATE_LIMIT_PROOF__INIT;
  pb.proof = bin(p->proof, sizeof p->proof);
  pb.merkle_root = bin(p->merkle_root, 32);
  pb.epoch = bin(p->epoch, 32);
  pb.share_x = bin(p->share_x, 32);
  pb.share_y = bin(p->share_y, 32);
  pb.nullifier = bin(p->nullifier, 32);
  pb.rln_identifier = bin(p->rln_identifier, 32);
  return ld__waku__rln__rate_limit_proof__pack(&pb, out);
}

void ld_rln_epoch_bytes(uint8_t out[32], uint64_t epoch) {
  memset(out, 0, 32);
  for (int i = 0; i < 8; i++) {
    out[i] = (uint8_t)(epoch >> (8 * i));
  }
}

uint64_t ld_rln_epoch_of(int64_t unix_ns, uint64_t epoch_sec) {
  if (unix_ns < 0 || epoch_sec == 0 || epoch_sec > UINT64_MAX / 1000000000ull) {
    return 0;
  }
  return (uint64_t)unix_ns / (epoch_sec * 1000000000ull);
}

size_t ld_rln_message_signal(uint8_t *out, const uint8_t *payload, size_t payload_len,
                             const char *content_topic, size_t content_topic_len,
                             int64_t timestamp) {
  size_t n = payload_len + content_topic_len + 8;
  if (out != NULL) {
    if (payload_len > 0) {
      memcpy(out, payload, payload_len);
    }
    if (content_topic_len > 0) {
      memcpy(out + payload_len, content_topic, content_topic_len);
    }
    for (int i = 0; i < 8; i++) {
      out[payload_len + content_topic_len + (size_t)i] = (uint8_t)((uint64_t)timestamp >> (8 * i));
    }
  }
  return n;
}

void ld_rln_external_nullifier_nwaku(ld_fr_t *out, const uint8_t epoch[32],
                                     const uint8_t rln_identifier[32]) {
  ld_fr_t e, id;
  ld_fr_from_bytes_reduce(&e, epoch);
  ld_fr_from_bytes_reduce(&id, rln_identifier);
  ld_poseidon_hash2(out, &e, &id);
}
