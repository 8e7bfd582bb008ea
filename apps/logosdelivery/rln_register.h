/* generateRlnKeystore's on-chain registration (nwaku's OnchainGroupManager.init + register): with
 * an account's private key it signs and sends register(idCommitment, userMessageLimit, []) to the
 * membership contract over Ethereum JSON-RPC and reads the membership index from the receipt's
 * MembershipRegistered event.
 *
 * The calls, in order: eth_chainId (must equal --rln-relay-chain-id when given),
 * maxMembershipRateLimit() (the limit must not exceed it; "0x" means no contract there),
 * eth_getTransactionCount(from, "pending"), eth_getBlockByNumber("latest") for the base fee, then
 * eth_maxPriorityFeePerGas (an EIP-1559 transaction, maxFeePerGas = 2 × base fee + tip) or, on a
 * chain without a base fee, eth_gasPrice (a legacy EIP-155 transaction at twice that price, as
 * nwaku pays), eth_estimateGas (a registration that would revert stops here, with the endpoint's
 * reason; the limit is the estimate + 25 %), eth_sendRawTransaction (its answer must be the
 * transaction's hash), eth_getTransactionReceipt every 500 ms until mined or `receipt_wait_ms`.
 * A dry run (execute false) stops after eth_estimateGas. Every call has `call_timeout_ms`. */
#ifndef LD_APP_RLN_REGISTER_H
#define LD_APP_RLN_REGISTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ld_rln_register_args {
  const char *url;         /* --rln-relay-eth-client-address */
  const char *contract;    /* --rln-relay-eth-contract-address, 0x + 40 hex digits */
  const char *private_key; /* --rln-relay-eth-private-key, 64 hex digits, 0x optional */
  uint64_t chain_id;       /* --rln-relay-chain-id; 0: the endpoint's */
  uint32_t limit;          /* --rln-relay-user-message-limit */
  bool execute;            /* false: a dry run, nothing sent */
  uint32_t call_timeout_ms;
  uint32_t receipt_wait_ms;
} ld_rln_register_args_t;

typedef struct ld_rln_register_result {
  uint64_t chain_id; /* the endpoint's */
  char from[43];     /* the account, 0x hex */
  uint64_t gas_limit;
  uint64_t block_number; /* execute only: where it was mined */
  uint32_t index;        /* execute only: the membership index of the event */
  char tx_hash[67];      /* execute only: 0x hex */
} ld_rln_register_result_t;

/* Registers `id_commitment` (the big-endian uint256 word). 0, or LD_EXIT_USAGE (a bad key or
 * contract address) or another nonzero exit code with the reason in err, written as
 * "<what failed, with the value>; <what to do>". The key never appears in err. */
int ld_app_rln_register(const ld_rln_register_args_t *args, const uint8_t id_commitment[32],
                        ld_rln_register_result_t *out, char *err, size_t errlen);

#endif
