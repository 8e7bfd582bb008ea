/* The WebSocket transport: /ws, /wss and /tls/ws on top of /tcp/<port>, for browsers and
 * js-waku (whose default transport is WebSockets only, dialing /wss or /tls/ws).
 *
 *   listen  /ip4|ip6/<addr>/tcp/<port>/ws            plain WebSocket
 *           /ip4|ip6/<addr>/tcp/<port>/wss | /tls/ws  TLS, then WebSocket (needs a certificate)
 *   dial    the same, and /dns|dns4|dns6/<name>/tcp/<port>/… (resolved with uv_getaddrinfo, the
 *           first address is dialed), and /tls/sni/<name>/ws; a trailing /p2p/<id> is ignored.
 *
 * Each connection is a TCP connection of an inner TCP transport (ld_transport_tcp_new), with TLS
 * (p2p/tls.h, memory BIOs, so everything stays on the loop) for the secure forms, then the
 * WebSocket handshake and framing (p2p/ws_session.h). The libp2p byte stream travels as binary
 * messages. Raw connections handed out by this transport behave as TCP ones (p2p/transport.h):
 * queued(), on_drain and the LD_TCONN_* water marks are those of the inner TCP connection, since
 * every byte is framed and encrypted as soon as the owner writes it.
 *
 * Inbound connections reach the listener's accept callback only after the TLS and WebSocket
 * handshakes completed; a handshake must finish within handshake_timeout_ms and a listener runs
 * at most max_pending_handshakes of them at once (more connections are closed at accept). A
 * failed handshake is logged (`ws handshake failed: addr=… reason=<LD_ERR name> (<detail>)`) and
 * the socket closed after a 4xx answer where one applies. Outbound connections report on_connect
 * after both handshakes, with LD_ERR_HANDSHAKE / LD_ERR_MALFORMED / LD_ERR_TIMEOUT /
 * LD_ERR_UNREACHABLE (name not resolved) besides the TCP errors. An open connection reports
 * on_error with LD_ERR_CLOSED for a close frame or TLS close_notify, and with LD_ERR_PROTOCOL,
 * LD_ERR_FRAME_TOO_LARGE, LD_ERR_MALFORMED or LD_ERR_DECRYPT for a peer that breaks the framing
 * or TLS (the close frame with 1002/1009/1007 is sent first).
 *
 * Connection addresses are those of the TCP connection with the transport's suffix appended
 * (/ws, /wss or /tls/ws, as listened or dialed); listener addresses carry the bound port.
 *
 * Using it with a switch (the switch listens and dials through the first transport whose
 * handles() accepts the address; TCP is always there):
 *
 *   ld_ws_config_t wcfg;
 *   ld_ws_config_default(&wcfg);
 *   wcfg.tls_cert_path = cert;   // --websocket-secure-cert-path, only for wss listening
 *   wcfg.tls_key_path = key;     // --websocket-secure-key-path
 *   int err;
 *   ld_transport_t *ws = ld_transport_ws_new(loop, &wcfg, &err);
 *   if (ws == NULL) fail(err);                        // LD_ERR_IO, LD_ERR_BAD_KEY, …
 *   if ((err = ld_switch_add_transport(sw, ws)) != 0) { ws->ops->destroy(ws); fail(err); }
 *   ld_multiaddr_parse(&a, "/ip4/0.0.0.0/tcp/8000/ws");   // --websocket-port
 *   ld_switch_listen(sw, &a);                                // and/or …/tcp/8000/wss
 *
 * The switch then owns the transport and destroys it when it closes; ld_switch_listen_addrs
 * (and so identify) lists the ws/wss listen addresses with their bound ports. As nwaku does it,
 * --websocket-support listens on /ip4/<listen-address>/tcp/<websocket-port>/ws, and
 * --websocket-secure-support makes that same port /wss (with the certificate above). Everything
 * runs on the loop's thread. */
#ifndef LD_P2P_TRANSPORT_WS_H
#define LD_P2P_TRANSPORT_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "p2p/transport.h"

/* Defaults of ld_ws_config_t. */
#define LD_WS_HANDSHAKE_TIMEOUT_MS 10000
#define LD_WS_MAX_PENDING_HANDSHAKES 128

typedef struct ld_ws_config {
  /* PEM certificate chain and private key for /wss and /tls/ws listeners (read once, by
   * ld_transport_ws_new). NULL: the transport does not listen securely (LD_ERR_UNSUPPORTED). */
  const char *tls_cert_path;
  const char *tls_key_path;
  /* Dialing wss: verify the server's certificate chain and name (default false: libp2p proves
   * the peer's identity with Noise). tls_ca_path: PEM bundle, NULL = the system's trust store. */
  bool tls_verify;
  const char *tls_ca_path;
  /* Payload one received data frame may announce; default LD_WS_DEFAULT_MAX_FRAME. */
  uint64_t max_frame;
  /* Deadline for the TCP connect, TLS and WebSocket handshakes of one connection. */
  uint32_t handshake_timeout_ms;
  /* Inbound connections still in their handshakes, per listener. */
  size_t max_pending_handshakes;
  /* Request path of outbound handshakes (default "/"; servers accept any path). */
  const char *path;
} ld_ws_config_t;

/* Fills `cfg` with the defaults (no certificate, no verification). */
void ld_ws_config_default(ld_ws_config_t *cfg);

/* Creates the transport on `loop` (which must outlive it); `cfg` may be NULL for the defaults and
 * is not kept (the certificate and key are loaded here; `path` is copied). On failure returns NULL
 * and stores the reason in *err when err is not NULL: LD_ERR_IO (certificate or key file
 * unreadable), LD_ERR_BAD_KEY (the key does not parse or does not match), LD_ERR_INVALID_ARG
 * (only one of the two paths, a bad path), LD_ERR_NOMEM. Free with transport->ops->destroy after
 * closing its listeners and connections, or hand it to ld_switch_add_transport. */
ld_transport_t *ld_transport_ws_new(uv_loop_t *loop, const ld_ws_config_t *cfg, int *err);

/* True when `addr` is a WebSocket address this transport dials (as its ops->handles). */
bool ld_transport_ws_handles(const ld_multiaddr_t *addr);

#endif
