/* Ethereum transactions signed with a secp256k1 account key: what `generateRlnKeystore --execute`
 * sends to register an RLN membership (nwaku's OnchainGroupManager.register).
 *
 * Two envelopes:
 *  - EIP-1559 (type 2): 0x02 ‖ rlp([chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gasLimit,
 *    to, value, data, accessList, yParity, r, s]), signed over keccak256 of the same without the
 *    last three fields (the access list is always empty here);
 *  - legacy with EIP-155 replay protection: rlp([nonce, gasPrice, gasLimit, to, value, data, v, r,
 *    s]) with v = chainId·2 + 35 + recovery id, signed over keccak256(rlp([nonce, gasPrice,
 *    gasLimit, to, value, data, chainId, 0, 0])), for chains without a base fee.
 *
 * RLP comes from waku/enr/rlp.h, Keccak-256 and the recoverable ECDSA (RFC 6979 nonces, low S)
 * from crypto/. Pure functions on caller storage; any thread. */
#ifndef LD_WAKU_RLN_ETH_TX_H
#define LD_WAKU_RLN_ETH_TX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

#define LD_ETH_ADDRESS_LEN 20
#define LD_ETH_SECRET_LEN 32
#define LD_ETH_TX_HASH_LEN 32

typedef enum ld_eth_tx_type {
  LD_ETH_TX_LEGACY = 0,  /* EIP-155 */
  LD_ETH_TX_EIP1559 = 2, /* type 2 */
} ld_eth_tx_type_t;

/* A transaction to sign. Fees in wei per gas; `data` (call data) is borrowed. */
typedef struct ld_eth_tx {
  ld_eth_tx_type_t type;
  uint64_t chain_id;
  uint64_t nonce;
  uint64_t gas_price;                /* legacy only */
  uint64_t max_priority_fee_per_gas; /* EIP-1559 only */
  uint64_t max_fee_per_gas;          /* EIP-1559 only */
  uint64_t gas_limit;
  bool has_to; /* false: contract creation */
  uint8_t to[LD_ETH_ADDRESS_LEN];
  uint64_t value; /* wei */
  const uint8_t *data;
  size_t data_len;
} ld_eth_tx_t;

/* The account (address) of a private key: the last 20 bytes of keccak256 of the uncompressed
 * public key's X ‖ Y. LD_ERR_BAD_KEY when `secret` is not a valid scalar (0 or ≥ n). */
int ld_eth_address(const uint8_t secret[LD_ETH_SECRET_LEN], uint8_t out[LD_ETH_ADDRESS_LEN]);

/* Signs `tx` with `secret` and appends the raw transaction (what eth_sendRawTransaction takes) to
 * `raw`; its hash (keccak256 of the raw bytes, the transaction's id) goes to `hash`.
 * LD_ERR_BAD_KEY (invalid secret), LD_ERR_INVALID_ARG (an unknown type, or a legacy chain id too
 * large for v to fit 64 bits), LD_ERR_NOMEM; on failure `raw` is as it was. */
int ld_eth_tx_sign(const ld_eth_tx_t *tx, const uint8_t secret[LD_ETH_SECRET_LEN], ld_buf_t *raw,
                   uint8_t hash[LD_ETH_TX_HASH_LEN]);

#endif
