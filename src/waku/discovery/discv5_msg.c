#include "waku/discovery/discv5_msg.h"

#include <string.h>

#include "base/error.h"
#include "waku/enr/rlp.h"

/* ---- decoding ------------------------------------------------------------------------------- */

static int read_req_id(ld_cursor_t *c, ld_discv5_msg_t *m) {
  const uint8_t *id;
  size_t len;
  int rc = ld_rlp_read_string(c, &id, &len);
  if (rc != 0)
    return rc;
  if (len > LD_DISCV5_REQ_ID_MAX)
    return LD_ERR_MALFORMED;
  m->req_id_len = (uint8_t)len;
  if (len > 0)
    memcpy(m->req_id, id, len);
  return 0;
}

/* Integers above their field's range are malformed (not merely out of range). */
static int read_uint(ld_cursor_t *c, uint64_t *v) {
  int rc = ld_rlp_read_uint(c, v);
  return rc == LD_ERR_OVERFLOW ? LD_ERR_MALFORMED : rc;
}

static int read_pong(ld_cursor_t *c, ld_discv5_msg_t *m) {
  const uint8_t *ip;
  size_t ip_len;
  uint64_t port;
  int rc = read_uint(c, &m->enr_seq);
  if (rc == 0)
    rc = ld_rlp_read_string(c, &ip, &ip_len);
  if (rc == 0 && ip_len != 4 && ip_len != 16)
    rc = LD_ERR_MALFORMED;
  if (rc == 0)
    rc = read_uint(c, &port);
  if (rc == 0 && port > UINT16_MAX)
    rc = LD_ERR_MALFORMED;
  if (rc != 0)
    return rc;
  m->ip_len = (uint8_t)ip_len;
  memcpy(m->ip, ip, ip_len);
  m->port = (uint16_t)port;
  return 0;
}

static int read_findnode(ld_cursor_t *c, ld_discv5_msg_t *m) {
  ld_cursor_t list;
  int rc = ld_rlp_read_list(c, &list);
  while (rc == 0 && !ld_cursor_empty(&list)) {
    uint64_t d;
    if (m->n_distances == LD_DISCV5_MAX_DISTANCES)
      return LD_ERR_LIMIT;
    rc = read_uint(&list, &d);
    if (rc == 0 && d > UINT16_MAX)
      rc = LD_ERR_MALFORMED;
    if (rc == 0)
      m->distances[m->n_distances++] = (uint16_t)d;
  }
  return rc;
}

static int read_nodes(ld_cursor_t *c, ld_discv5_msg_t *m) {
  ld_cursor_t list;
  int rc = read_uint(c, &m->total);
  if (rc == 0)
    rc = ld_rlp_read_list(c, &list);
  if (rc != 0)
    return rc;
  m->enrs = ld_cursor_ptr(&list);
  m->enrs_len = ld_cursor_remaining(&list);
  /* Every item must at least be well-formed RLP: the records are checked one by one later. */
  while (!ld_cursor_empty(&list)) {
    ld_rlp_item_t it;
    if ((rc = ld_rlp_read(&list, &it)) != 0)
      return rc;
  }
  return 0;
}

static int read_body(ld_cursor_t *c, ld_discv5_msg_t *m) {
  switch (m->type) {
  case LD_DISCV5_PING:
    return read_uint(c, &m->enr_seq);
  case LD_DISCV5_PONG:
    return read_pong(c, m);
  case LD_DISCV5_FINDNODE:
    return read_findnode(c, m);
  case LD_DISCV5_NODES:
    return read_nodes(c, m);
  case LD_DISCV5_TALKREQ: {
    int rc = ld_rlp_read_string(c, &m->protocol, &m->protocol_len);
    return rc != 0 ? rc : ld_rlp_read_string(c, &m->payload, &m->payload_len);
  }
  case LD_DISCV5_TALKRESP:
    return ld_rlp_read_string(c, &m->payload, &m->payload_len);
  }
  return LD_ERR_UNSUPPORTED;
}

void ld_discv5_msg_init(ld_discv5_msg_t *m, ld_discv5_msg_type_t type) {
  size_t tail = offsetof(ld_discv5_msg_t, distances) + sizeof m->distances;
  memset(m, 0, offsetof(ld_discv5_msg_t, distances));
  memset((uint8_t *)m + tail, 0, sizeof *m - tail);
  m->type = type;
}

int ld_discv5_msg_decode(ld_discv5_msg_t *m, const uint8_t *pt, size_t len) {
  ld_cursor_t c, body;
  if (len == 0)
    return LD_ERR_TRUNCATED;
  ld_discv5_msg_init(m, (ld_discv5_msg_type_t)pt[0]);
  if (pt[0] < LD_DISCV5_PING || pt[0] > LD_DISCV5_TALKRESP)
    return LD_ERR_UNSUPPORTED;
  ld_cursor_init(&c, pt + 1, len - 1);
  int rc = ld_rlp_read_list(&c, &body);
  if (rc != 0)
    return rc;
  if (!ld_cursor_empty(&c))
    return LD_ERR_MALFORMED;
  rc = read_req_id(&body, m);
  if (rc == 0)
    rc = read_body(&body, m);
  if (rc == 0 && !ld_cursor_empty(&body))
    rc = LD_ERR_MALFORMED;
  /* The outer list was complete: a missing or cut item inside it is malformed. */
  return rc == LD_ERR_TRUNCATED ? LD_ERR_MALFORMED : rc;
}

int ld_discv5_nodes_next(ld_cursor_t *list, const uint8_t **rec, size_t *len) {
  ld_rlp_item_t it;
  if (ld_cursor_empty(list))
    return LD_ERR_NOT_FOUND;
  int rc = ld_rlp_read(list, &it);
  if (rc != 0)
    return rc;
  *rec = it.raw;
  *len = it.raw_len;
  return 0;
}

/* ---- encoding ------------------------------------------------------------------------------- */

static size_t string_size(const uint8_t *data, size_t len) {
  return ld_rlp_string_header_len(len, len > 0 ? data[0] : 0) + len;
}

static size_t uint_size(uint64_t v) {
  size_t n = 0;
  uint8_t first = 0;
  for (uint64_t x = v; x != 0; x >>= 8) {
    first = (uint8_t)x;
    n++;
  }
  return ld_rlp_string_header_len(n, first) + n;
}

static size_t distances_payload(const ld_discv5_msg_t *m) {
  size_t n = 0;
  for (size_t i = 0; i < m->n_distances; i++)
    n += uint_size(m->distances[i]);
  return n;
}

/* Size of the items after the request-id. */
static size_t body_size(const ld_discv5_msg_t *m) {
  switch (m->type) {
  case LD_DISCV5_PING:
    return uint_size(m->enr_seq);
  case LD_DISCV5_PONG:
    return uint_size(m->enr_seq) + string_size(m->ip, m->ip_len) + uint_size(m->port);
  case LD_DISCV5_FINDNODE: {
    size_t p = distances_payload(m);
    return ld_rlp_list_header_len(p) + p;
  }
  case LD_DISCV5_NODES:
    return uint_size(m->total) + ld_rlp_list_header_len(m->enrs_len) + m->enrs_len;
  case LD_DISCV5_TALKREQ:
    return string_size(m->protocol, m->protocol_len) + string_size(m->payload, m->payload_len);
  case LD_DISCV5_TALKRESP:
    return string_size(m->payload, m->payload_len);
  }
  return 0;
}

static int put_body(ld_buf_t *b, const ld_discv5_msg_t *m) {
  int rc = 0;
  switch (m->type) {
  case LD_DISCV5_PING:
    return ld_rlp_put_uint(b, m->enr_seq);
  case LD_DISCV5_PONG:
    if ((rc = ld_rlp_put_uint(b, m->enr_seq)) == 0 &&
        (rc = ld_rlp_put_string(b, m->ip, m->ip_len)) == 0)
      rc = ld_rlp_put_uint(b, m->port);
    return rc;
  case LD_DISCV5_FINDNODE:
    rc = ld_rlp_put_list_header(b, distances_payload(m));
    for (size_t i = 0; rc == 0 && i < m->n_distances; i++)
      rc = ld_rlp_put_uint(b, m->distances[i]);
    return rc;
  case LD_DISCV5_NODES:
    if ((rc = ld_rlp_put_uint(b, m->total)) == 0 &&
        (rc = ld_rlp_put_list_header(b, m->enrs_len)) == 0 && m->enrs_len > 0)
      rc = ld_buf_append(b, m->enrs, m->enrs_len);
    return rc;
  case LD_DISCV5_TALKREQ:
    if ((rc = ld_rlp_put_string(b, m->protocol, m->protocol_len)) == 0)
      rc = ld_rlp_put_string(b, m->payload, m->payload_len);
    return rc;
  case LD_DISCV5_TALKRESP:
    return ld_rlp_put_string(b, m->payload, m->payload_len);
  }
  return LD_ERR_INVALID_ARG;
}

int ld_discv5_msg_encode(ld_buf_t *b, const ld_discv5_msg_t *m) {
  if (m->type < LD_DISCV5_PING || m->type > LD_DISCV5_TALKRESP ||
      m->req_id_len > LD_DISCV5_REQ_ID_MAX ||
      (m->type == LD_DISCV5_PONG && m->ip_len != 4 && m->ip_len != 16) ||
      m->n_distances > LD_DISCV5_MAX_DISTANCES)
    return LD_ERR_INVALID_ARG;
  size_t payload = string_size(m->req_id, m->req_id_len) + body_size(m);
  size_t start = b->len;
  int rc = ld_buf_reserve(b, 1 + ld_rlp_list_header_len(payload) + payload);
  if (rc == 0)
    rc = ld_buf_u8(b, (uint8_t)m->type);
  if (rc == 0)
    rc = ld_rlp_put_list_header(b, payload);
  if (rc == 0)
    rc = ld_rlp_put_string(b, m->req_id, m->req_id_len);
  if (rc == 0)
    rc = put_body(b, m);
  if (rc != 0)
    b->len = start;
  return rc;
}

size_t ld_discv5_nodes_size(size_t req_id_len, uint64_t total, size_t enrs_len) {
  /* A request-id's header is at most one byte (≤ 8 bytes), and a one-byte ID below 0x80 has
   * none: count the byte, the upper bound. */
  size_t payload = 1 + req_id_len + uint_size(total) + ld_rlp_list_header_len(enrs_len) + enrs_len;
  return 1 + ld_rlp_list_header_len(payload) + payload;
}

bool ld_discv5_req_id_equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  while (alen > 0 && a[0] == 0) {
    a++;
    alen--;
  }
  while (blen > 0 && b[0] == 0) {
    b++;
    blen--;
  }
  return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}
