#include "waku/enr/rlp.h"

#include "base/error.h"

/* Reads a long-form length of `n` bytes: no leading zero, and above 55 (else the short form). */
static int read_long_len(ld_cursor_t *c, size_t n, size_t *out) {
  if (n > LD_RLP_MAX_LEN_BYTES)
    return LD_ERR_TOO_LARGE;
  const uint8_t *p;
  int rc = ld_cursor_bytes(c, n, &p);
  if (rc != 0)
    return rc;
  if (p[0] == 0)
    return LD_ERR_MALFORMED;
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    len = len << 8 | p[i];
  if (len <= 55)
    return LD_ERR_MALFORMED;
  *out = len;
  return 0;
}

/* Reads the header at the cursor: whether it is a list, and the payload length. */
static int read_header(ld_cursor_t *c, bool *is_list, size_t *len) {
  uint8_t b;
  int rc = ld_cursor_u8(c, &b);
  if (rc != 0)
    return rc;
  *is_list = b >= 0xc0;
  if (b < 0x80) {
    c->pos--; /* the byte is its own payload */
    *len = 1;
    return 0;
  }
  if (b <= 0xb7 || (b >= 0xc0 && b <= 0xf7)) {
    *len = (size_t)(b - (*is_list ? 0xc0 : 0x80));
    return 0;
  }
  return read_long_len(c, (size_t)(b - (*is_list ? 0xf7 : 0xb7)), len);
}

int ld_rlp_read(ld_cursor_t *c, ld_rlp_item_t *out) {
  ld_cursor_t t = *c;
  bool is_list;
  size_t len;
  const uint8_t *payload;
  int rc = read_header(&t, &is_list, &len);
  if (rc == 0)
    rc = ld_cursor_bytes(&t, len, &payload);
  if (rc != 0)
    return rc;
  bool single = !is_list && t.pos - c->pos == 1;
  if (!is_list && !single && len == 1 && payload[0] < 0x80)
    return LD_ERR_MALFORMED;
  out->is_list = is_list;
  out->payload = payload;
  out->payload_len = len;
  out->raw = c->data + c->pos;
  out->raw_len = t.pos - c->pos;
  *c = t;
  return 0;
}

int ld_rlp_read_string(ld_cursor_t *c, const uint8_t **data, size_t *len) {
  ld_cursor_t t = *c;
  ld_rlp_item_t it;
  int rc = ld_rlp_read(&t, &it);
  if (rc != 0)
    return rc;
  if (it.is_list)
    return LD_ERR_MALFORMED;
  *data = it.payload;
  *len = it.payload_len;
  *c = t;
  return 0;
}

int ld_rlp_read_list(ld_cursor_t *c, ld_cursor_t *inner) {
  ld_cursor_t t = *c;
  ld_rlp_item_t it;
  int rc = ld_rlp_read(&t, &it);
  if (rc != 0)
    return rc;
  if (!it.is_list)
    return LD_ERR_MALFORMED;
  ld_cursor_init(inner, it.payload, it.payload_len);
  *c = t;
  return 0;
}

int ld_rlp_item_uint(const ld_rlp_item_t *it, uint64_t *out) {
  if (it->is_list || (it->payload_len > 0 && it->payload[0] == 0))
    return LD_ERR_MALFORMED;
  if (it->payload_len > 8)
    return LD_ERR_OVERFLOW;
  uint64_t v = 0;
  for (size_t i = 0; i < it->payload_len; i++)
    v = v << 8 | it->payload[i];
  *out = v;
  return 0;
}

int ld_rlp_read_uint(ld_cursor_t *c, uint64_t *out) {
  ld_cursor_t t = *c;
  ld_rlp_item_t it;
  int rc = ld_rlp_read(&t, &it);
  if (rc == 0)
    rc = ld_rlp_item_uint(&it, out);
  if (rc == 0)
    *c = t;
  return rc;
}

/* ---- encoding ------------------------------------------------------------------------------- */

static size_t be_len(size_t v) {
  size_t n = 0;
  for (; v != 0; v >>= 8)
    n++;
  return n;
}

size_t ld_rlp_string_header_len(size_t len, uint8_t first) {
  if (len == 1 && first < 0x80)
    return 0;
  return len <= 55 ? 1 : 1 + be_len(len);
}

size_t ld_rlp_list_header_len(size_t len) {
  return len <= 55 ? 1 : 1 + be_len(len);
}

static int put_header(ld_buf_t *b, uint8_t short_base, uint8_t long_base, size_t len) {
  uint8_t h[1 + sizeof(size_t)];
  size_t n = 0;
  if (len <= 55) {
    h[n++] = (uint8_t)(short_base + len);
  } else {
    size_t ll = be_len(len);
    h[n++] = (uint8_t)(long_base + ll);
    for (size_t i = ll; i > 0; i--)
      h[n++] = (uint8_t)(len >> (8 * (i - 1)));
  }
  return ld_buf_append(b, h, n);
}

int ld_rlp_put_string(ld_buf_t *b, const void *data, size_t len) {
  const uint8_t *p = data;
  if (len == 1 && p[0] < 0x80)
    return ld_buf_u8(b, p[0]);
  int rc = ld_buf_reserve(b, 1 + sizeof(size_t) + len);
  if (rc == 0)
    rc = put_header(b, 0x80, 0xb7, len);
  if (rc == 0 && len > 0)
    rc = ld_buf_append(b, data, len);
  return rc;
}

int ld_rlp_put_uint(ld_buf_t *b, uint64_t v) {
  uint8_t be[8];
  size_t n = 0;
  for (int shift = 56; shift >= 0; shift -= 8)
    if (n > 0 || (uint8_t)(v >> shift) != 0)
      be[n++] = (uint8_t)(v >> shift);
  return ld_rlp_put_string(b, be, n);
}

int ld_rlp_put_list_header(ld_buf_t *b, size_t payload_len) {
  return put_header(b, 0xc0, 0xf7, payload_len);
}
