/* Signed Ethereum transactions, EIP-1559 and EIP-155 (eth_tx.h). */
#include <string.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "crypto/keccak.h"
#include "waku/enr/rlp.h"
#include "waku/rln/eth_tx.h"

int ld_eth_address(const uint8_t secret[LD_ETH_SECRET_LEN], uint8_t out[LD_ETH_ADDRESS_LEN]) {
  uint8_t pub[LD_SECP256K1_PUBLIC_LEN], id[LD_KECCAK256_LEN];
  int rc = ld_secp256k1_public(secret, pub);
  if (rc == 0)
    rc = ld_secp256k1_keccak_id(pub, sizeof pub, id);
  if (rc != 0)
    return LD_ERR_BAD_KEY;
  memcpy(out, id + LD_KECCAK256_LEN - LD_ETH_ADDRESS_LEN, LD_ETH_ADDRESS_LEN);
  return 0;
}

/* A big-endian unsigned integer as RLP wants it: without leading zero bytes. */
static int put_be_uint(ld_buf_t *b, const uint8_t *be, size_t len) {
  while (len > 0 && be[0] == 0) {
    be++;
    len--;
  }
  return ld_rlp_put_string(b, be, len);
}

/* The fields both envelopes share after the fees: to, value, data. */
static int put_call(ld_buf_t *b, const ld_eth_tx_t *tx) {
  int rc = ld_rlp_put_string(b, tx->has_to ? tx->to : NULL, tx->has_to ? LD_ETH_ADDRESS_LEN : 0);
  if (rc == 0)
    rc = ld_rlp_put_uint(b, tx->value);
  if (rc == 0)
    rc = ld_rlp_put_string(b, tx->data, tx->data_len);
  return rc;
}

/* The fields signed over: EIP-1559's nine (the access list empty), or legacy's six followed by
 * EIP-155's chainId, 0, 0 when `eip155_tail`. */
static int put_fields(ld_buf_t *b, const ld_eth_tx_t *tx, bool eip155_tail) {
  int rc;
  if (tx->type == LD_ETH_TX_EIP1559) {
    rc = ld_rlp_put_uint(b, tx->chain_id);
    if (rc == 0)
      rc = ld_rlp_put_uint(b, tx->nonce);
    if (rc == 0)
      rc = ld_rlp_put_uint(b, tx->max_priority_fee_per_gas);
    if (rc == 0)
      rc = ld_rlp_put_uint(b, tx->max_fee_per_gas);
    if (rc == 0)
      rc = ld_rlp_put_uint(b, tx->gas_limit);
    if (rc == 0)
      rc = put_call(b, tx);
    if (rc == 0)
      rc = ld_rlp_put_list_header(b, 0); /* accessList */
    return rc;
  }
  rc = ld_rlp_put_uint(b, tx->nonce);
  if (rc == 0)
    rc = ld_rlp_put_uint(b, tx->gas_price);
  if (rc == 0)
    rc = ld_rlp_put_uint(b, tx->gas_limit);
  if (rc == 0)
    rc = put_call(b, tx);
  if (rc == 0 && eip155_tail) {
    rc = ld_rlp_put_uint(b, tx->chain_id);
    if (rc == 0)
      rc = ld_rlp_put_uint(b, 0);
    if (rc == 0)
      rc = ld_rlp_put_uint(b, 0);
  }
  return rc;
}

/* Appends [type byte] ‖ rlp(list of `items`) to `out`. */
static int put_envelope(ld_buf_t *out, const ld_eth_tx_t *tx, const ld_buf_t *items) {
  int rc = 0;
  if (tx->type == LD_ETH_TX_EIP1559)
    rc = ld_buf_u8(out, (uint8_t)LD_ETH_TX_EIP1559);
  if (rc == 0)
    rc = ld_rlp_put_list_header(out, items->len);
  if (rc == 0)
    rc = ld_buf_append(out, items->data, items->len);
  return rc;
}

static int signing_hash(const ld_eth_tx_t *tx, uint8_t digest[LD_KECCAK256_LEN]) {
  ld_buf_t items, unsigned_tx;
  ld_buf_init(&items);
  ld_buf_init(&unsigned_tx);
  int rc = put_fields(&items, tx, tx->type == LD_ETH_TX_LEGACY);
  if (rc == 0)
    rc = put_envelope(&unsigned_tx, tx, &items);
  if (rc == 0)
    ld_keccak256(unsigned_tx.data, unsigned_tx.len, digest);
  ld_buf_clear(&items);
  ld_buf_clear(&unsigned_tx);
  return rc;
}

/* EIP-1559's y parity, or EIP-155's v = chainId·2 + 35 + recovery id. */
static uint64_t signature_v(const ld_eth_tx_t *tx, uint8_t recid) {
  return tx->type == LD_ETH_TX_EIP1559 ? recid : tx->chain_id * 2 + 35 + recid;
}

static int put_signed(ld_buf_t *raw, const ld_eth_tx_t *tx,
                      const uint8_t sig[LD_SECP256K1_COMPACT_LEN + 1]) {
  ld_buf_t items;
  ld_buf_init(&items);
  int rc = put_fields(&items, tx, false);
  if (rc == 0)
    rc = ld_rlp_put_uint(&items, signature_v(tx, sig[LD_SECP256K1_COMPACT_LEN]));
  if (rc == 0)
    rc = put_be_uint(&items, sig, 32); /* r */
  if (rc == 0)
    rc = put_be_uint(&items, sig + 32, 32); /* s */
  if (rc == 0)
    rc = put_envelope(raw, tx, &items);
  ld_buf_clear(&items);
  return rc;
}

int ld_eth_tx_sign(const ld_eth_tx_t *tx, const uint8_t secret[LD_ETH_SECRET_LEN], ld_buf_t *raw,
                   uint8_t hash[LD_ETH_TX_HASH_LEN]) {
  if (tx->type != LD_ETH_TX_EIP1559 && tx->type != LD_ETH_TX_LEGACY)
    return LD_ERR_INVALID_ARG;
  if (tx->type == LD_ETH_TX_LEGACY && tx->chain_id > (UINT64_MAX - 36) / 2)
    return LD_ERR_INVALID_ARG;
  uint8_t digest[LD_KECCAK256_LEN], sig[LD_SECP256K1_COMPACT_LEN + 1];
  int rc = signing_hash(tx, digest);
  if (rc != 0)
    return rc;
  rc = ld_secp256k1_sign_digest_recoverable(secret, digest, sig);
  if (rc != 0)
    return LD_ERR_BAD_KEY;
  size_t start = raw->len;
  rc = put_signed(raw, tx, sig);
  if (rc != 0) {
    raw->len = start; /* put_envelope may have appended part of it */
    return rc;
  }
  ld_keccak256(raw->data + start, raw->len - start, hash);
  return 0;
}
