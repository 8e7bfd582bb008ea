/* A bounds-checked read cursor over a byte range. Every wire parser reads through it.
 *
 * A fetch that fails leaves the cursor where it was, so a caller can retry when more bytes
 * arrive (LD_ERR_TRUNCATED) or report the error. The cursor never owns the bytes. */
#ifndef LD_BASE_CURSOR_H
#define LD_BASE_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ld_cursor {
  const uint8_t *data;
  size_t len;
  size_t pos;
} ld_cursor_t;

void ld_cursor_init(ld_cursor_t *c, const uint8_t *data, size_t len);

static inline size_t ld_cursor_remaining(const ld_cursor_t *c) {
  return c->len - c->pos;
}

/* Pointer to the next unread byte (valid while the underlying bytes live). */
static inline const uint8_t *ld_cursor_ptr(const ld_cursor_t *c) {
  return c->data + c->pos;
}

static inline bool ld_cursor_empty(const ld_cursor_t *c) {
  return c->pos >= c->len;
}

/* Fixed-size fetches; big-endian for the multi-byte ones. LD_ERR_TRUNCATED when short. */
int ld_cursor_u8(ld_cursor_t *c, uint8_t *out);
int ld_cursor_be16(ld_cursor_t *c, uint16_t *out);
int ld_cursor_be32(ld_cursor_t *c, uint32_t *out);
int ld_cursor_be64(ld_cursor_t *c, uint64_t *out);

/* Returns in *out a pointer to the next `n` bytes (no copy) and advances past them. */
int ld_cursor_bytes(ld_cursor_t *c, size_t n, const uint8_t **out);

/* Copies the next `n` bytes to `dst` and advances. */
int ld_cursor_copy(ld_cursor_t *c, void *dst, size_t n);

int ld_cursor_skip(ld_cursor_t *c, size_t n);

/* Multiformats unsigned varint (minimal, at most 9 bytes); errors as ld_uvarint_decode. */
int ld_cursor_uvarint(ld_cursor_t *c, uint64_t *out);

/* Protobuf varint (at most 10 bytes); errors as ld_pbvarint_decode. */
int ld_cursor_pbvarint(ld_cursor_t *c, uint64_t *out);

/* Reads `uvarint(n) ‖ n bytes` with n ≤ max; LD_ERR_TOO_LARGE when n > max. On success *out
 * points at the payload and *n holds its length. */
int ld_cursor_lp_bytes(ld_cursor_t *c, size_t max, const uint8_t **out, size_t *n);

#endif
