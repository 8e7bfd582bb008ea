/* The error space of liblogosdelivery: one set of negative integers with a string table.
 *
 * Functions return 0 (LD_OK) or a non-negative value on success and one of these codes on
 * failure. A function that fails never calls its callback. */
#ifndef LD_BASE_ERROR_H
#define LD_BASE_ERROR_H

#include <stddef.h>

/* X(name, value, description). New codes go at the end of their group with the next free value. */
#define LD_ERRNO_MAP(X)                                                                            \
  X(OK, 0, "success")                                                                              \
  /* generic */                                                                                    \
  X(INVALID_ARG, -1, "invalid argument")                                                           \
  X(NOMEM, -2, "out of memory")                                                                    \
  X(STATE, -3, "operation not valid in the current state")                                         \
  X(NOT_FOUND, -4, "not found")                                                                    \
  X(EXISTS, -5, "already exists")                                                                  \
  X(LIMIT, -6, "limit exceeded")                                                                   \
  X(UNSUPPORTED, -7, "unsupported")                                                                \
  X(AGAIN, -8, "try again later")                                                                  \
  X(TIMEOUT, -9, "timed out")                                                                      \
  X(CANCELED, -10, "canceled")                                                                     \
  X(IO, -11, "input/output error")                                                                 \
  X(INTERNAL, -12, "internal error")                                                               \
  X(DB, -13, "database error")                                                                     \
  /* parsing */                                                                                    \
  X(TRUNCATED, -20, "input truncated")                                                             \
  X(MALFORMED, -21, "malformed input")                                                             \
  X(OVERFLOW, -22, "value out of range")                                                           \
  X(VARINT_NONMINIMAL, -23, "varint not minimally encoded")                                        \
  X(VARINT_TOO_LONG, -24, "varint too long")                                                       \
  X(TOO_LARGE, -25, "input larger than allowed")                                                   \
  X(BAD_ENCODING, -26, "invalid text encoding")                                                    \
  X(BAD_MULTIADDR, -27, "invalid multiaddr")                                                       \
  X(BAD_PEER_ID, -28, "invalid peer ID")                                                           \
  X(BAD_KEY, -29, "invalid key")                                                                   \
  X(BAD_PROTOBUF, -30, "invalid protobuf message")                                                 \
  X(MISSING_FIELD, -31, "required protobuf field missing")                                         \
  X(FIELD_TOO_LONG, -32, "protobuf field longer than allowed")                                     \
  X(BAD_CONTENT_TOPIC, -33, "invalid content topic")                                               \
  X(BAD_PUBSUB_TOPIC, -34, "invalid pubsub topic")                                                 \
  /* crypto */                                                                                     \
  X(CRYPTO, -40, "cryptographic operation failed")                                                 \
  X(BAD_SIGNATURE, -41, "signature verification failed")                                           \
  X(DECRYPT, -42, "decryption failed")                                                             \
  X(BAD_POINT, -43, "point not on the curve or outside the prime-order subgroup")                  \
  X(BAD_PROOF, -44, "zero-knowledge proof verification failed")                                    \
  /* connections and protocols */                                                                  \
  X(PROTOCOL, -60, "protocol violation")                                                           \
  X(NEGOTIATION_FAILED, -61, "protocol negotiation failed")                                        \
  X(PROTOCOL_UNSUPPORTED, -62, "protocol not supported by the peer")                               \
  X(HANDSHAKE, -63, "security handshake failed")                                                   \
  X(PEER_ID_MISMATCH, -64, "peer ID does not match the expected one")                              \
  X(CLOSED, -65, "closed")                                                                         \
  X(RESET, -66, "stream reset by peer")                                                            \
  X(WINDOW_EXCEEDED, -67, "flow-control window exceeded")                                          \
  X(FRAME_TOO_LARGE, -68, "frame too large")                                                       \
  X(TOO_MANY_STREAMS, -69, "too many streams")                                                     \
  X(TOO_MANY_CONNECTIONS, -70, "too many connections")                                             \
  X(GOAWAY, -71, "session going away")                                                             \
  X(UNREACHABLE, -72, "peer unreachable")                                                          \
  X(REFUSED, -73, "connection refused")                                                            \
  X(ADDR_IN_USE, -74, "address in use")                                                            \
  X(NOT_CONNECTED, -75, "not connected")                                                           \
  X(CLUSTER_MISMATCH, -76, "peer belongs to another cluster")                                      \
  X(GRAYLISTED, -77, "peer score below the graylist threshold")                                    \
  /* DNS discovery (EIP-1459) */                                                                   \
  X(DNS_BAD_URL, -90, "invalid enrtree:// URL")                                                    \
  X(DNS_BAD_ENTRY, -91, "malformed DNS discovery tree entry")                                      \
  X(DNS_HASH_MISMATCH, -92, "DNS tree entry does not match its hash")                              \
  X(DNS_LOOP, -93, "DNS tree refers to an entry twice")                                            \
  X(DNS_TOO_DEEP, -94, "DNS tree deeper than allowed")                                             \
  X(DNS_TOO_WIDE, -95, "DNS tree branch wider than allowed")                                       \
  X(DNS_TOO_MANY, -96, "DNS tree has more entries than allowed")                                   \
  X(DNS_TXT_TOO_LONG, -97, "DNS TXT record longer than allowed")                                   \
  X(DNS_NO_ROOT, -98, "no valid enrtree-root record")                                              \
  X(DNS_QUERY, -99, "DNS query failed")

enum {
#define LD_ERR_ENUM_(name, value, text) LD_ERR_##name = (value),
  LD_ERRNO_MAP(LD_ERR_ENUM_)
#undef LD_ERR_ENUM_
};

#define LD_OK LD_ERR_OK

/* Returns a static, human-readable description of `err` ("unknown error" for values outside the
 * map). Thread-safe; never returns NULL. */
const char *ld_strerror(int err);

/* Returns the symbolic name of `err` without the LD_ERR_ prefix ("TRUNCATED"), or "UNKNOWN".
 * Used in logs so that every failure is named. */
const char *ld_errname(int err);

/* Writes the printf-style reason `fmt` into err[0..errlen) (truncated, always NUL-terminated) and
 * returns `code`, so that a failing function can `return ld_error_fmt(err, errlen, LD_ERR_…, …)`.
 * Writes nothing when `err` is NULL or `errlen` is 0. Thread-safe. */
int ld_error_fmt(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
