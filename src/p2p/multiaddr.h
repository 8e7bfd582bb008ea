/* Multiaddrs in their binary and text forms (multiformats/multiaddr).
 *
 * Supported protocols: ip4, ip6, tcp, udp, dns, dns4, dns6, dnsaddr, ws, wss, tls, quic,
 * quic-v1, p2p (text alias ipfs), p2p-circuit, and sni, noise, webtransport, certhash, http,
 * https, webrtc, webrtc-direct, ip6zone, unix, ipcidr as listed in the digest. A multiaddr is kept
 * in binary form; text is produced on demand. */
#ifndef LD_P2P_MULTIADDR_H
#define LD_P2P_MULTIADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/peerid.h"

#define LD_MULTIADDR_MAX 512       /* binary bytes */
#define LD_MULTIADDR_TEXT_MAX 1024 /* text bytes including NUL */

enum {
  LD_MA_IP4 = 4,
  LD_MA_TCP = 6,
  LD_MA_IP6 = 41,
  LD_MA_IP6ZONE = 42,
  LD_MA_IPCIDR = 43,
  LD_MA_DNS = 53,
  LD_MA_DNS4 = 54,
  LD_MA_DNS6 = 55,
  LD_MA_DNSADDR = 56,
  LD_MA_UDP = 273,
  LD_MA_WEBRTC_DIRECT = 280,
  LD_MA_WEBRTC = 281,
  LD_MA_P2P_CIRCUIT = 290,
  LD_MA_UNIX = 400,
  LD_MA_P2P = 421,
  LD_MA_HTTPS = 443,
  LD_MA_TLS = 448,
  LD_MA_SNI = 449,
  LD_MA_NOISE = 454,
  LD_MA_QUIC = 460,
  LD_MA_QUIC_V1 = 461,
  LD_MA_WEBTRANSPORT = 465,
  LD_MA_CERTHASH = 466,
  LD_MA_WS = 477,
  LD_MA_WSS = 478,
  LD_MA_HTTP = 480,
};

typedef struct ld_multiaddr {
  size_t len;
  uint8_t bytes[LD_MULTIADDR_MAX];
} ld_multiaddr_t;

/* One component of a multiaddr as returned by ld_multiaddr_next. `value` points into the
 * multiaddr's bytes (the raw binary value without its length prefix). */
typedef struct ld_multiaddr_component {
  uint32_t code;
  const uint8_t *value;
  size_t value_len;
} ld_multiaddr_component_t;

/* Parses text ("/ip4/127.0.0.1/tcp/60000/p2p/16Uiu2…"). LD_ERR_BAD_MULTIADDR when invalid or
 * when the binary form would exceed LD_MULTIADDR_MAX. One trailing '/' is tolerated, /ipfs/ is
 * read as /p2p/, p2p values may be base58btc or CID text (ld_peerid_parse). `ma` is unchanged on
 * failure. */
int ld_multiaddr_parse(ld_multiaddr_t *ma, const char *text);

/* Validates and copies binary bytes. LD_ERR_BAD_MULTIADDR when invalid. */
int ld_multiaddr_from_bytes(ld_multiaddr_t *ma, const uint8_t *data, size_t len);

/* Writes the text form with a NUL; returns its length or LD_ERR_LIMIT when cap is too small.
 * LD_MULTIADDR_TEXT_MAX suffices for real addresses, not for every valid one (512 bytes of
 * /webrtc-direct print as 3584 chars). p2p values print as base58btc, ip6 as go prints it
 * (::ffff:a.b.c.d for IPv4-mapped), certhash as multibase base64url ('u'). */
int ld_multiaddr_to_text(const ld_multiaddr_t *ma, char *out, size_t cap);

/* Iterates components: start with *offset = 0; returns 1 and fills `comp` while there is a next
 * component, 0 at the end. The multiaddr must be valid (as every ld_multiaddr_t is). */
int ld_multiaddr_next(const ld_multiaddr_t *ma, size_t *offset, ld_multiaddr_component_t *comp);

/* Appends a component to `ma` (value in binary form; start from a zeroed ld_multiaddr_t).
 * LD_ERR_BAD_MULTIADDR for an unknown code, an invalid value, or anything after /unix (a path
 * takes the rest of the text form); LD_ERR_LIMIT when the result would exceed LD_MULTIADDR_MAX.
 * `ma` is unchanged on failure. */
int ld_multiaddr_push(ld_multiaddr_t *ma, uint32_t code, const uint8_t *value, size_t value_len);

/* Builds /ip4|ip6/<addr>/tcp/<port> from a socket address (struct sockaddr_in / sockaddr_in6). */
int ld_multiaddr_from_sockaddr(ld_multiaddr_t *ma, const void *sockaddr);

/* Extracts a socket address (struct sockaddr_storage) from /ip4|ip6/x/tcp/port[/...]. Returns
 * LD_ERR_UNSUPPORTED when the address does not start with an IP and TCP. */
int ld_multiaddr_to_sockaddr(const ld_multiaddr_t *ma, void *sockaddr_storage);

/* Splits off a trailing /p2p/<id>: stores the ID in *id (when not NULL) and returns true when
 * present; `ma` loses that component when `strip` is true (leaving len 0 for a bare /p2p/<id>). */
bool ld_multiaddr_peerid(ld_multiaddr_t *ma, ld_peerid_t *id, bool strip);

bool ld_multiaddr_equal(const ld_multiaddr_t *a, const ld_multiaddr_t *b);

#endif
