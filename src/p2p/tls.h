/* TLS over OpenSSL as a sans-I/O engine: memory BIOs instead of sockets, so that the transport
 * above it keeps every socket on its libuv loop. Bytes from the network go in with ld_tls_read
 * and come out as plaintext; plaintext goes in with ld_tls_write; everything to send (handshake
 * messages, records, alerts, session tickets) is appended to the caller's `out` buffer.
 *
 * Used by the /wss (/tls/ws) WebSocket transport. TLS 1.2 is the oldest version spoken;
 * renegotiation is refused. libp2p authenticates peers with Noise on top, so a client does not
 * verify the server's certificate unless its context was made with `verify`.
 *
 * Contexts (ld_tls_ctx_t) may be shared by many connections; connections (ld_tls_t) are used by
 * one thread at a time. Failures are logged with OpenSSL's reason at the point they happen. */
#ifndef LD_P2P_TLS_H
#define LD_P2P_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

typedef struct ld_tls_ctx ld_tls_ctx_t;
typedef struct ld_tls ld_tls_t;

/* A server context from a PEM certificate chain (leaf first, as nwaku's
 * --websocket-secure-cert-path takes it) and a PEM private key (--websocket-secure-key-path).
 * Returns 0 and the context in *out, or LD_ERR_IO (a file cannot be read or holds no PEM),
 * LD_ERR_BAD_KEY (the key does not parse or does not match the certificate), LD_ERR_NOMEM. */
int ld_tls_server_ctx_new(const char *cert_chain_path, const char *key_path, ld_tls_ctx_t **out);

/* A client context. verify: check the server's chain against `ca_path` (a PEM bundle; NULL = the
 * system's default trust store) and its name against the dialed host (ld_tls_new's sni, or the
 * IP address given there); otherwise accept any certificate. LD_ERR_IO (ca_path unreadable),
 * LD_ERR_NOMEM. */
int ld_tls_client_ctx_new(bool verify, const char *ca_path, ld_tls_ctx_t **out);

/* Frees a context (NULL is fine); connections made from it keep what they need. */
void ld_tls_ctx_free(ld_tls_ctx_t *ctx);

/* A connection. Server or client follows the context. Client only: `sni` (NULL for none) is sent
 * as server name indication when it is a DNS name; with a verifying context, `sni` (a DNS name or
 * an IP address text) is also the name the certificate must carry. NULL when out of memory. */
ld_tls_t *ld_tls_new(ld_tls_ctx_t *ctx, const char *sni);

/* Frees the connection (NULL is fine). */
void ld_tls_free(ld_tls_t *t);

/* Client: appends the ClientHello. A server calls nothing before its first ld_tls_read.
 * LD_ERR_HANDSHAKE when OpenSSL fails, LD_ERR_NOMEM. */
int ld_tls_start(ld_tls_t *t, ld_buf_t *out);

/* Feeds bytes received from the network. Decrypted application bytes are appended to `plain`
 * (never more than the records in `data` hold), bytes to send to `out`. Returns 0, or:
 *   LD_ERR_CLOSED     the peer sent close_notify;
 *   LD_ERR_HANDSHAKE  the handshake failed (not TLS, no common version or cipher, a bad
 *                     certificate when verifying) — an alert may be in `out`;
 *   LD_ERR_DECRYPT    a record after the handshake did not authenticate or broke the protocol;
 *   LD_ERR_NOMEM.
 * After an error the connection takes no more input (LD_ERR_STATE). */
int ld_tls_read(ld_tls_t *t, const uint8_t *data, size_t len, ld_buf_t *plain, ld_buf_t *out);

/* True once the handshake completed. */
bool ld_tls_established(const ld_tls_t *t);

/* Encrypts `data` into records appended to `out`. LD_ERR_STATE before the handshake completed or
 * after an error or a shutdown, LD_ERR_IO when OpenSSL fails, LD_ERR_NOMEM. */
int ld_tls_write(ld_tls_t *t, const uint8_t *data, size_t len, ld_buf_t *out);

/* Appends close_notify (once; a no-op before the handshake completed or after an error). After
 * it nothing more can be written. 0 or LD_ERR_NOMEM. */
int ld_tls_shutdown(ld_tls_t *t, ld_buf_t *out);

/* OpenSSL's reason for the last failure of this connection ("" when none). */
const char *ld_tls_why(const ld_tls_t *t);

/* Writes a new self-signed certificate (ECDSA P-256, SHA-256, valid from now for `days` days,
 * subject and subjectAltName `name`, a DNS name or an IP address) and its private key to the two
 * PEM files, the key file with mode 0600. For tests and development setups. LD_ERR_INVALID_ARG,
 * LD_ERR_IO, LD_ERR_CRYPTO. */
int ld_tls_write_self_signed(const char *cert_path, const char *key_path, const char *name,
                             unsigned days);

#endif
