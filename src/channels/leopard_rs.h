/* Reed–Solomon erasure code of Leopard-RS (catid/leopard, the code nim-leopard wraps) over
 * GF(2^8), byte for byte: the parity of LIP-243 segment sets.
 *
 * The code is systematic: `k` data shards give `m` parity shards (1 ≤ m ≤ k), every shard the same
 * length, a multiple of LD_RS_SHARD_ALIGN. Any `k` of the `k + m` shards give back the data.
 * Leopard's cases are kept exactly: k = 1 (each parity shard is the data shard), m = 1 (the parity
 * shard is the XOR of the data shards), otherwise the additive-FFT code of Lin, Han and Chung in
 * Leopard's field (polynomial 0x11D, Cantor basis) and its FFT skew factors.
 *
 * Leopard switches to GF(2^16) when NextPow2(m) + k exceeds 256; that field is not implemented:
 * such counts give LD_ERR_UNSUPPORTED (ld_rs_supported tells beforehand). Pure functions, any
 * thread (the tables are built once, thread-safely). */
#ifndef LD_CHANNELS_LEOPARD_RS_H
#define LD_CHANNELS_LEOPARD_RS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LD_RS_SHARD_ALIGN 64u
/* Shards of one code word at most (GF(2^8)). */
#define LD_RS_MAX_SHARDS 256u

/* True when `k` data and `m` parity shards are a valid code here: 1 ≤ m ≤ k and either m = 1
 * (XOR parity) or NextPow2(m) + k ≤ 256 (Leopard's GF(2^8) range). */
bool ld_rs_supported(unsigned k, unsigned m);

/* Computes the `m` parity shards of the `k` data shards data[0..k-1], each `shard_len` bytes, into
 * parity[0..m-1] (caller's buffers of `shard_len` bytes, not overlapping the data).
 * 0, LD_ERR_INVALID_ARG (shard_len 0 or not a multiple of LD_RS_SHARD_ALIGN, m = 0, m > k, a NULL
 * pointer), LD_ERR_UNSUPPORTED (the counts need GF(2^16)), LD_ERR_NOMEM. */
int ld_rs_encode(size_t shard_len, unsigned k, unsigned m, const uint8_t *const data[],
                 uint8_t *const parity[]);

/* Rebuilds the data of a code word from the shards present: data[i] (k entries) and parity[j]
 * (m entries), NULL for a missing shard. Writes every data shard into out[0..k-1] (caller's buffers
 * of `shard_len` bytes): the present ones copied, the missing ones recovered.
 * 0, LD_ERR_INVALID_ARG (as for encode), LD_ERR_LIMIT (fewer than k shards present),
 * LD_ERR_UNSUPPORTED, LD_ERR_NOMEM. Shards that are not those of one code word give wrong bytes,
 * not an error: the caller checks the result (LIP-243 checks keccak256 of the payload). */
int ld_rs_decode(size_t shard_len, unsigned k, unsigned m, const uint8_t *const data[],
                 const uint8_t *const parity[], uint8_t *const out[]);

#endif
