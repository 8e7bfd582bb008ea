/* Recursive Length Prefix (RLP), the serialisation of Ethereum node records (EIP-778).
 *
 * Decoding reads one item at a time through the bounds-checked cursor and accepts only the
 * canonical form, as go-ethereum's strict decoder does: a single byte below 0x80 is its own
 * encoding, the short forms are used up to 55 bytes, length prefixes have no leading zero
 * bytes and are at most LD_RLP_MAX_LEN_BYTES long. Nothing is allocated: items point into the
 * cursor's bytes. A failing read leaves the cursor where it was.
 *
 * Encoding appends to a byte buffer. Pure functions; any thread. */
#ifndef LD_WAKU_ENR_RLP_H
#define LD_WAKU_ENR_RLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/cursor.h"

/* Longest length-of-length accepted: payloads below 4 GiB (ENRs are at most 300 bytes). */
#define LD_RLP_MAX_LEN_BYTES 4

typedef struct ld_rlp_item {
  bool is_list;
  const uint8_t *payload; /* a string's bytes, or a list's encoded items */
  size_t payload_len;
  const uint8_t *raw; /* the whole item: header and payload */
  size_t raw_len;
} ld_rlp_item_t;

/* Reads one item (string or list) and advances past it. Errors: LD_ERR_TRUNCATED when the
 * header or the payload runs past the end of the cursor; LD_ERR_MALFORMED for a non-canonical
 * header; LD_ERR_TOO_LARGE for a length-of-length above LD_RLP_MAX_LEN_BYTES. */
int ld_rlp_read(ld_cursor_t *c, ld_rlp_item_t *out);

/* Reads a string item; LD_ERR_MALFORMED when the item is a list. */
int ld_rlp_read_string(ld_cursor_t *c, const uint8_t **data, size_t *len);

/* Reads a list item and sets `inner` to a cursor over its payload. LD_ERR_MALFORMED when the
 * item is a string. */
int ld_rlp_read_list(ld_cursor_t *c, ld_cursor_t *inner);

/* Reads an unsigned integer: a string of at most 8 bytes, big-endian, without leading zero
 * bytes (0 is the empty string). LD_ERR_MALFORMED for a list or a leading zero, LD_ERR_OVERFLOW
 * for more than 8 bytes. */
int ld_rlp_read_uint(ld_cursor_t *c, uint64_t *out);

/* The integer value of a string item, with the rules of ld_rlp_read_uint. */
int ld_rlp_item_uint(const ld_rlp_item_t *it, uint64_t *out);

/* ---- encoding ------------------------------------------------------------------------------- */

/* Bytes of the header of a string of `len` bytes whose first byte is `first` (a single byte
 * below 0x80 has none), and of a list whose payload is `len` bytes. */
size_t ld_rlp_string_header_len(size_t len, uint8_t first);
size_t ld_rlp_list_header_len(size_t len);

/* Appends a string item (`data` may be NULL when len is 0). LD_ERR_NOMEM leaves `b` unchanged. */
int ld_rlp_put_string(ld_buf_t *b, const void *data, size_t len);

/* Appends an unsigned integer as its minimal big-endian string. */
int ld_rlp_put_uint(ld_buf_t *b, uint64_t v);

/* Appends the header of a list whose items, `payload_len` bytes, the caller appends next. */
int ld_rlp_put_list_header(ld_buf_t *b, size_t payload_len);

#endif
