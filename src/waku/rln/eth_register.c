/* The register transaction of an RLN membership and its receipt (eth_register.h). */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "base/error.h"
#include "crypto/keccak.h"
#include "waku/rln/eth_register.h"

#define EVENT_WORDS 3 /* idCommitment, membershipRateLimit, index */

void ld_eth_register_call_data(const uint8_t id_commitment[LD_ETH_WORD], uint32_t limit,
                               char out[LD_ETH_CALL_HEX_MAX]) {
  uint8_t words[4][LD_ETH_WORD];
  memcpy(words[0], id_commitment, LD_ETH_WORD);
  ld_eth_word_from_u64(words[1], limit);
  ld_eth_word_from_u64(words[2], 3 * LD_ETH_WORD); /* the array's offset: after three words */
  ld_eth_word_from_u64(words[3], 0);               /* its length */
  (void)ld_eth_call_data(LD_ETH_REGISTER_SIGNATURE, (const uint8_t(*)[LD_ETH_WORD])words, 4, out);
}

/* A string member of `obj` as hex data of exactly `len` bytes. */
static int hex_member(const json_t *obj, const char *name, uint8_t *out, size_t len, char *err,
                      size_t errlen) {
  const char *text = json_string_value(json_object_get(obj, name));
  size_t got = 0;
  if (text == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "the receipt has no \"%s\" string", name);
  if (ld_eth_hex_data(text, out, len, &got) != 0 || got != len)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED,
                        "the receipt's %s %.80s is not %zu bytes of hex", name, text, len);
  return 0;
}

static int quantity_member(const json_t *obj, const char *name, uint64_t *out, char *err,
                           size_t errlen) {
  const char *text = json_string_value(json_object_get(obj, name));
  if (text == NULL || ld_eth_quantity(text, out) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "the receipt's %s %.80s is not a quantity",
                        name, text != NULL ? text : "(missing)");
  return 0;
}

/* Whether `log` is a MembershipRegistered event of `contract`. */
static bool is_registration(const json_t *log, const uint8_t contract[LD_ETH_ADDRESS_LEN],
                            const uint8_t topic[LD_KECCAK256_LEN]) {
  uint8_t addr[LD_ETH_ADDRESS_LEN], topic0[LD_KECCAK256_LEN];
  size_t len = 0;
  const char *a = json_string_value(json_object_get(log, "address"));
  const json_t *topics = json_object_get(log, "topics");
  const char *t0 = json_string_value(json_array_get(topics, 0));
  if (a == NULL || t0 == NULL || ld_eth_hex_data(a, addr, sizeof addr, &len) != 0 ||
      len != sizeof addr || memcmp(addr, contract, sizeof addr) != 0)
    return false;
  return ld_eth_hex_data(t0, topic0, sizeof topic0, &len) == 0 && len == sizeof topic0 &&
         memcmp(topic0, topic, sizeof topic0) == 0;
}

static int read_event(const json_t *log, const uint8_t id_commitment[LD_ETH_WORD],
                      ld_eth_registration_t *out, char *err, size_t errlen) {
  uint8_t data[EVENT_WORDS * LD_ETH_WORD];
  int rc = hex_member(log, "data", data, sizeof data, err, errlen);
  if (rc != 0)
    return rc;
  if (memcmp(data, id_commitment, LD_ETH_WORD) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_PROTOCOL,
                        "the MembershipRegistered event names another idCommitment");
  uint64_t index = 0;
  if (ld_eth_abi_u64(data, sizeof data, 1, &out->rate_limit) != 0 ||
      ld_eth_abi_u64(data, sizeof data, 2, &index) != 0 || index > UINT32_MAX)
    return ld_error_fmt(err, errlen, LD_ERR_PROTOCOL,
                        "the MembershipRegistered event's rate limit or index is out of range");
  out->index = (uint32_t)index;
  return 0;
}

int ld_eth_registration_from_receipt(const json_t *receipt, const uint8_t hash[LD_ETH_TX_HASH_LEN],
                                     const uint8_t contract[LD_ETH_ADDRESS_LEN],
                                     const uint8_t id_commitment[LD_ETH_WORD],
                                     ld_eth_registration_t *out, char *err, size_t errlen) {
  if (!json_is_object(receipt))
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "the receipt is not a JSON object");
  uint8_t got_hash[LD_ETH_TX_HASH_LEN];
  uint64_t status = 0;
  memset(out, 0, sizeof *out);
  int rc = hex_member(receipt, "transactionHash", got_hash, sizeof got_hash, err, errlen);
  if (rc == 0 && memcmp(got_hash, hash, sizeof got_hash) != 0)
    rc = ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "the receipt is another transaction's");
  if (rc == 0)
    rc = quantity_member(receipt, "status", &status, err, errlen);
  if (rc == 0)
    rc = quantity_member(receipt, "blockNumber", &out->block_number, err, errlen);
  if (rc != 0)
    return rc;
  if (status != 1)
    return ld_error_fmt(err, errlen, LD_ERR_REFUSED,
                        "the transaction reverted (status 0x%" PRIx64 ") in block %" PRIu64, status,
                        out->block_number);
  const json_t *logs = json_object_get(receipt, "logs");
  if (!json_is_array(logs))
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "the receipt has no \"logs\" array");
  uint8_t topic[LD_KECCAK256_LEN];
  ld_keccak256(LD_ETH_MEMBERSHIP_REGISTERED, strlen(LD_ETH_MEMBERSHIP_REGISTERED), topic);
  size_t i;
  const json_t *log;
  json_array_foreach(logs, i, log) {
    if (is_registration(log, contract, topic))
      return read_event(log, id_commitment, out, err, errlen);
  }
  return ld_error_fmt(err, errlen, LD_ERR_NOT_FOUND,
                      "the receipt (%zu logs) has no MembershipRegistered event of the contract",
                      json_array_size(logs));
}
