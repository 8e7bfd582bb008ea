/* discv5 v5.1 messages (devp2p discv5-wire.md "Protocol Messages"): the plaintext of a packet
 * is message-type ‖ RLP(message-data).
 *
 *   PING     0x01 [request-id, enr-seq]
 *   PONG     0x02 [request-id, enr-seq, recipient-ip (4 or 16 bytes), recipient-port]
 *   FINDNODE 0x03 [request-id, [distance, ...]]
 *   NODES    0x04 [request-id, total, [ENR, ...]]
 *   TALKREQ  0x05 [request-id, protocol, request]
 *   TALKRESP 0x06 [request-id, response]
 *
 * request-id is a byte string of at most 8 bytes, mirrored unchanged in responses. Integers are
 * canonical RLP (no leading zero bytes), as geth, nim-eth and @chainsafe/discv5 write them; a
 * message with extra or missing list items is malformed, as those three read it. The topic
 * messages (0x07–0x0a) are not implemented: they decode as LD_ERR_UNSUPPORTED.
 *
 * Decoded messages point into the plaintext they were read from. Pure functions; any thread. */
#ifndef LD_WAKU_DISCOVERY_DISCV5_MSG_H
#define LD_WAKU_DISCOVERY_DISCV5_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/cursor.h"

#define LD_DISCV5_REQ_ID_MAX 8
/* Distances a FINDNODE may list (there are 257: 0..256); longer lists are LD_ERR_LIMIT. */
#define LD_DISCV5_MAX_DISTANCES 257
#define LD_DISCV5_MAX_DISTANCE 256

typedef enum ld_discv5_msg_type {
  LD_DISCV5_PING = 0x01,
  LD_DISCV5_PONG = 0x02,
  LD_DISCV5_FINDNODE = 0x03,
  LD_DISCV5_NODES = 0x04,
  LD_DISCV5_TALKREQ = 0x05,
  LD_DISCV5_TALKRESP = 0x06,
} ld_discv5_msg_type_t;

typedef struct ld_discv5_msg {
  ld_discv5_msg_type_t type;
  uint8_t req_id_len;
  uint8_t req_id[LD_DISCV5_REQ_ID_MAX];
  uint64_t enr_seq; /* PING, PONG */
  /* PONG: the address the responder saw the PING come from */
  uint8_t ip_len; /* 4 or 16 */
  uint8_t ip[16];
  uint16_t port;
  /* FINDNODE; values are not range-checked here (the engine answers > 256 with nothing) */
  size_t n_distances;
  uint16_t distances[LD_DISCV5_MAX_DISTANCES];
  /* NODES: `total` messages answer the request; `enrs` are the items of the record list,
   * concatenated (each a whole RLP record, not yet verified: read them with
   * ld_discv5_nodes_next) */
  uint64_t total;
  const uint8_t *enrs;
  size_t enrs_len;
  /* TALKREQ: protocol and request; TALKRESP: response in `payload` */
  const uint8_t *protocol;
  size_t protocol_len;
  const uint8_t *payload;
  size_t payload_len;
} ld_discv5_msg_t;

/* Clears every field of `m` but the distances array (n_distances 0) and sets its type. */
void ld_discv5_msg_init(ld_discv5_msg_t *m, ld_discv5_msg_type_t type);

/* Decodes a message plaintext. Errors: LD_ERR_TRUNCATED (empty, or the list runs past the end),
 * LD_ERR_MALFORMED (not the type's list, wrong item count or kind, an item running past the end
 * of its list, a request-id longer than 8
 * bytes, a non-canonical or oversized integer, an IP of another length, a port above 65535,
 * trailing bytes), LD_ERR_LIMIT (more than LD_DISCV5_MAX_DISTANCES distances),
 * LD_ERR_UNSUPPORTED (another message type). `m` is overwritten and meaningless on failure. */
int ld_discv5_msg_decode(ld_discv5_msg_t *m, const uint8_t *pt, size_t len);

/* Reads the next record of a NODES list (a cursor over m->enrs): *rec and *len receive the
 * record's whole RLP item. 0, LD_ERR_NOT_FOUND at the end, or ld_rlp_read's errors. */
int ld_discv5_nodes_next(ld_cursor_t *list, const uint8_t **rec, size_t *len);

/* Appends message-type ‖ RLP(message-data) of `m` to `b`. For NODES, `enrs` holds the records
 * (whole RLP items) concatenated. LD_ERR_INVALID_ARG for an unknown type, a request-id longer
 * than 8 bytes or an IP that is not 4 or 16 bytes; LD_ERR_NOMEM leaves `b` unchanged. */
int ld_discv5_msg_encode(ld_buf_t *b, const ld_discv5_msg_t *m);

/* Encoded size of a NODES message of `req_id_len`, `total` and records of `enrs_len` bytes in
 * all: what the engine needs to split an answer over packets. */
size_t ld_discv5_nodes_size(size_t req_id_len, uint64_t total, size_t enrs_len);

/* True when two request IDs are equal once leading zero bytes are ignored: @chainsafe/discv5
 * reads request IDs as integers and mirrors them without their leading zeros. */
bool ld_discv5_req_id_equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

#endif
