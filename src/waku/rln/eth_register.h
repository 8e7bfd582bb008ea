/* Registering an RLN membership with the membership contract, as nwaku's
 * OnchainGroupManager.register does: the call data of
 * register(uint256 idCommitment, uint32 userMessageLimit, uint256[] idCommitmentsToErase) with
 * nothing to erase, and the reading of the transaction's receipt, which must carry the contract's
 * MembershipRegistered(uint256 idCommitment, uint256 membershipRateLimit, uint32 index) event
 * (all three in the log's data) for our commitment.
 *
 * The receipt comes from a JSON-RPC endpoint and is untrusted: its reader is bounded and fuzzed
 * (fuzz/rln_eth_receipt.c). Pure functions; any thread. */
#ifndef LD_WAKU_RLN_ETH_REGISTER_H
#define LD_WAKU_RLN_ETH_REGISTER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/rln/eth_abi.h"
#include "waku/rln/eth_tx.h"

#define LD_ETH_REGISTER_SIGNATURE "register(uint256,uint32,uint256[])"
#define LD_ETH_MEMBERSHIP_REGISTERED "MembershipRegistered(uint256,uint256,uint32)"

/* "0x" hex call data of register(idCommitment, userMessageLimit, []); the commitment is the
 * big-endian uint256 word. */
void ld_eth_register_call_data(const uint8_t id_commitment[LD_ETH_WORD], uint32_t limit,
                               char out[LD_ETH_CALL_HEX_MAX]);

/* What a receipt says of our registration. */
typedef struct ld_eth_registration {
  uint64_t block_number;
  uint32_t index;      /* the membership index of the event */
  uint64_t rate_limit; /* the event's membershipRateLimit */
} ld_eth_registration_t;

/* Reads an eth_getTransactionReceipt result (a JSON object): the transaction `hash` must be the
 * receipt's, its status 0x1, and one of its logs, emitted by `contract`, must be
 * MembershipRegistered for `id_commitment`. Errors, with the reason in err:
 * LD_ERR_MALFORMED (not a receipt: a field missing, not hex, of another length, another
 * transaction's hash), LD_ERR_REFUSED (the transaction reverted: status 0x0),
 * LD_ERR_NOT_FOUND (no MembershipRegistered event of the contract), LD_ERR_PROTOCOL (the event
 * names another commitment, or an index above 2^32 - 1). */
int ld_eth_registration_from_receipt(const json_t *receipt, const uint8_t hash[LD_ETH_TX_HASH_LEN],
                                     const uint8_t contract[LD_ETH_ADDRESS_LEN],
                                     const uint8_t id_commitment[LD_ETH_WORD],
                                     ld_eth_registration_t *out, char *err, size_t errlen);

#endif
