#include "p2p/multiaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "base/base32.h"
#include "base/base58.h"
#include "base/base64.h"
#include "base/cursor.h"
#include "base/error.h"
#include "base/hex.h"
#include "base/varint.h"

#define VAR_SIZE (-1)

/* How a protocol's value is checked and converted between binary and text. */
typedef enum {
  K_NONE,
  K_IP4,
  K_IP6,
  K_PORT,
  K_U8,
  K_NAME,
  K_P2P,
  K_MULTIHASH,
  K_PATH,
} kind_t;

typedef struct {
  uint32_t code;
  const char *name;
  int size; /* bytes of a fixed-size value, 0 for none, VAR_SIZE for length-prefixed */
  kind_t kind;
} proto_t;

static const proto_t protos[] = {
    {LD_MA_IP4, "ip4", 4, K_IP4},
    {LD_MA_TCP, "tcp", 2, K_PORT},
    {LD_MA_UDP, "udp", 2, K_PORT},
    {LD_MA_IP6, "ip6", 16, K_IP6},
    {LD_MA_IP6ZONE, "ip6zone", VAR_SIZE, K_NAME},
    {LD_MA_IPCIDR, "ipcidr", 1, K_U8},
    {LD_MA_DNS, "dns", VAR_SIZE, K_NAME},
    {LD_MA_DNS4, "dns4", VAR_SIZE, K_NAME},
    {LD_MA_DNS6, "dns6", VAR_SIZE, K_NAME},
    {LD_MA_DNSADDR, "dnsaddr", VAR_SIZE, K_NAME},
    {LD_MA_WEBRTC_DIRECT, "webrtc-direct", 0, K_NONE},
    {LD_MA_WEBRTC, "webrtc", 0, K_NONE},
    {LD_MA_P2P_CIRCUIT, "p2p-circuit", 0, K_NONE},
    {LD_MA_UNIX, "unix", VAR_SIZE, K_PATH},
    {LD_MA_P2P, "p2p", VAR_SIZE, K_P2P},
    {LD_MA_HTTPS, "https", 0, K_NONE},
    {LD_MA_TLS, "tls", 0, K_NONE},
    {LD_MA_SNI, "sni", VAR_SIZE, K_NAME},
    {LD_MA_NOISE, "noise", 0, K_NONE},
    {LD_MA_QUIC, "quic", 0, K_NONE},
    {LD_MA_QUIC_V1, "quic-v1", 0, K_NONE},
    {LD_MA_WEBTRANSPORT, "webtransport", 0, K_NONE},
    {LD_MA_CERTHASH, "certhash", VAR_SIZE, K_MULTIHASH},
    {LD_MA_WS, "ws", 0, K_NONE},
    {LD_MA_WSS, "wss", 0, K_NONE},
    {LD_MA_HTTP, "http", 0, K_NONE},
};

#define NPROTOS (sizeof protos / sizeof protos[0])

static const proto_t *proto_by_code(uint64_t code) {
  for (size_t i = 0; i < NPROTOS; i++)
    if (protos[i].code == code)
      return &protos[i];
  return NULL;
}

static const proto_t *proto_by_name(const char *name, size_t len) {
  if (len == 4 && memcmp(name, "ipfs", 4) == 0)
    return proto_by_code(LD_MA_P2P);
  for (size_t i = 0; i < NPROTOS; i++)
    if (strlen(protos[i].name) == len && memcmp(protos[i].name, name, len) == 0)
      return &protos[i];
  return NULL;
}

/* ---- binary values ------------------------------------------------------------------------ */

static bool printable_bytes(const uint8_t *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (v[i] < 0x20 || v[i] == 0x7f)
      return false;
  return true;
}

static bool name_ok(const uint8_t *v, size_t n) {
  return n > 0 && memchr(v, '/', n) == NULL && printable_bytes(v, n);
}

/* A path starts with '/' and does not end with one (so that its text form parses back). */
static bool path_ok(const uint8_t *v, size_t n) {
  return n > 1 && v[0] == '/' && v[n - 1] != '/' && printable_bytes(v, n);
}

static bool multihash_ok(const uint8_t *v, size_t n) {
  ld_cursor_t c;
  ld_cursor_init(&c, v, n);
  uint64_t code, len;
  if (ld_cursor_uvarint(&c, &code) != 0 || ld_cursor_uvarint(&c, &len) != 0)
    return false;
  return len == ld_cursor_remaining(&c);
}

static bool value_ok(const proto_t *p, const uint8_t *v, size_t n) {
  ld_peerid_t id;
  if (p->size >= 0 && (size_t)p->size != n)
    return false;
  switch (p->kind) {
  case K_NAME:
    return name_ok(v, n);
  case K_PATH:
    return path_ok(v, n);
  case K_P2P:
    return ld_peerid_from_bytes(&id, v, n) == 0;
  case K_MULTIHASH:
    return multihash_ok(v, n);
  default:
    return true;
  }
}

/* Reads one component's code and raw value, without checking the value's content. */
static int read_component(ld_cursor_t *c, const proto_t **proto, ld_multiaddr_component_t *comp) {
  uint64_t code;
  if (ld_cursor_uvarint(c, &code) != 0)
    return LD_ERR_BAD_MULTIADDR;
  const proto_t *p = proto_by_code(code);
  if (p == NULL)
    return LD_ERR_BAD_MULTIADDR;
  int rc;
  if (p->size == VAR_SIZE) {
    rc = ld_cursor_lp_bytes(c, LD_MULTIADDR_MAX, &comp->value, &comp->value_len);
  } else {
    comp->value_len = (size_t)p->size;
    rc = ld_cursor_bytes(c, comp->value_len, &comp->value);
  }
  if (rc != 0)
    return LD_ERR_BAD_MULTIADDR;
  comp->code = p->code;
  *proto = p;
  return 0;
}

int ld_multiaddr_from_bytes(ld_multiaddr_t *ma, const uint8_t *data, size_t len) {
  if (ma == NULL || (data == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  if (len == 0 || len > LD_MULTIADDR_MAX)
    return LD_ERR_BAD_MULTIADDR;
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  while (!ld_cursor_empty(&c)) {
    const proto_t *p;
    ld_multiaddr_component_t comp;
    if (read_component(&c, &p, &comp) != 0 || !value_ok(p, comp.value, comp.value_len))
      return LD_ERR_BAD_MULTIADDR;
    if (p->kind == K_PATH && !ld_cursor_empty(&c))
      return LD_ERR_BAD_MULTIADDR; /* a path swallows the rest of the text form */
  }
  memcpy(ma->bytes, data, len);
  ma->len = len;
  return 0;
}

int ld_multiaddr_next(const ld_multiaddr_t *ma, size_t *offset, ld_multiaddr_component_t *comp) {
  if (ma == NULL || offset == NULL || comp == NULL || *offset >= ma->len ||
      ma->len > LD_MULTIADDR_MAX)
    return 0;
  ld_cursor_t c;
  ld_cursor_init(&c, ma->bytes, ma->len);
  c.pos = *offset;
  const proto_t *p;
  if (read_component(&c, &p, comp) != 0)
    return 0;
  *offset = c.pos;
  return 1;
}

static uint32_t last_code(const ld_multiaddr_t *ma) {
  size_t off = 0;
  ld_multiaddr_component_t comp = {0};
  while (ld_multiaddr_next(ma, &off, &comp) == 1)
    ;
  return comp.code;
}

int ld_multiaddr_push(ld_multiaddr_t *ma, uint32_t code, const uint8_t *value, size_t value_len) {
  if (ma == NULL || (value == NULL && value_len > 0) || ma->len > LD_MULTIADDR_MAX)
    return LD_ERR_INVALID_ARG;
  const proto_t *p = proto_by_code(code);
  if (p == NULL || !value_ok(p, value, value_len))
    return LD_ERR_BAD_MULTIADDR;
  if (ma->len > 0 && last_code(ma) == LD_MA_UNIX)
    return LD_ERR_BAD_MULTIADDR;
  size_t need = ld_varint_len(code) + value_len;
  if (p->size == VAR_SIZE)
    need += ld_varint_len(value_len);
  if (need > LD_MULTIADDR_MAX - ma->len)
    return LD_ERR_LIMIT;
  uint8_t *w = ma->bytes + ma->len;
  w += ld_varint_encode(code, w);
  if (p->size == VAR_SIZE)
    w += ld_varint_encode(value_len, w);
  if (value_len > 0)
    memcpy(w, value, value_len);
  ma->len += need;
  return 0;
}

/* ---- text values -------------------------------------------------------------------------- */

static int parse_decimal(const char *s, size_t n, unsigned max, unsigned *out) {
  if (n == 0)
    return LD_ERR_BAD_MULTIADDR;
  unsigned v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return LD_ERR_BAD_MULTIADDR;
    v = v * 10 + (unsigned)(s[i] - '0');
    if (v > max)
      return LD_ERR_BAD_MULTIADDR;
  }
  *out = v;
  return 0;
}

static int parse_ip(int family, const char *s, size_t n, uint8_t *out) {
  char tmp[INET6_ADDRSTRLEN];
  if (n >= sizeof tmp)
    return LD_ERR_BAD_MULTIADDR;
  memcpy(tmp, s, n);
  tmp[n] = '\0';
  return inet_pton(family, tmp, out) == 1 ? 0 : LD_ERR_BAD_MULTIADDR;
}

static int parse_p2p(const char *s, size_t n, uint8_t *out, size_t *outlen) {
  char tmp[LD_PEERID_PARSE_MAX + 1];
  ld_peerid_t id;
  if (n >= sizeof tmp)
    return LD_ERR_BAD_MULTIADDR;
  memcpy(tmp, s, n);
  tmp[n] = '\0';
  if (ld_peerid_parse(&id, tmp) != 0)
    return LD_ERR_BAD_MULTIADDR;
  memcpy(out, id.bytes, id.len);
  *outlen = id.len;
  return 0;
}

/* Multibase text: 'u' base64url (as go prints certhashes), 'b'/'B' base32, 'z' base58btc,
 * 'f'/'F' base16. */
static int parse_multibase(const char *s, size_t n, uint8_t *out, size_t cap, size_t *outlen) {
  if (n == 0)
    return LD_ERR_BAD_MULTIADDR;
  int rc;
  switch (s[0]) {
  case 'u':
    rc = ld_base64url_decode(s + 1, n - 1, out, cap, outlen);
    break;
  case 'b':
  case 'B':
    rc = ld_base32_decode(s + 1, n - 1, out, cap, outlen);
    break;
  case 'z':
    rc = ld_base58_decode(s + 1, n - 1, out, cap, outlen);
    break;
  case 'f':
  case 'F':
    rc = n > 2 && s[1] == '0' && (s[2] == 'x' || s[2] == 'X')
             ? LD_ERR_BAD_ENCODING
             : ld_hex_decode(s + 1, n - 1, out, cap, outlen);
    break;
  default:
    return LD_ERR_BAD_MULTIADDR;
  }
  return rc == 0 ? 0 : LD_ERR_BAD_MULTIADDR;
}

/* Converts a text value to binary in `out` (LD_MULTIADDR_MAX bytes of room). */
static int value_from_text(const proto_t *p, const char *s, size_t n, uint8_t *out,
                           size_t *outlen) {
  unsigned v;
  *outlen = p->size > 0 ? (size_t)p->size : 0;
  switch (p->kind) {
  case K_IP4:
    return parse_ip(AF_INET, s, n, out);
  case K_IP6:
    return parse_ip(AF_INET6, s, n, out);
  case K_PORT:
    if (parse_decimal(s, n, 65535, &v) != 0)
      return LD_ERR_BAD_MULTIADDR;
    out[0] = (uint8_t)(v >> 8);
    out[1] = (uint8_t)v;
    return 0;
  case K_U8:
    if (parse_decimal(s, n, 255, &v) != 0)
      return LD_ERR_BAD_MULTIADDR;
    out[0] = (uint8_t)v;
    return 0;
  case K_P2P:
    return parse_p2p(s, n, out, outlen);
  case K_MULTIHASH:
    return parse_multibase(s, n, out, LD_MULTIADDR_MAX, outlen);
  default: /* K_NAME, K_PATH: the bytes themselves */
    if (n > LD_MULTIADDR_MAX)
      return LD_ERR_BAD_MULTIADDR;
    memcpy(out, s, n);
    *outlen = n;
    return 0;
  }
}

static size_t segment_end(const char *text, size_t pos, size_t len) {
  const char *slash = memchr(text + pos, '/', len - pos);
  return slash != NULL ? (size_t)(slash - text) : len;
}

/* Parses the component whose name starts at text[*pos]; advances *pos past its value. */
static int parse_component(ld_multiaddr_t *ma, const char *text, size_t len, size_t *pos) {
  size_t end = segment_end(text, *pos, len);
  const proto_t *p = proto_by_name(text + *pos, end - *pos);
  if (p == NULL)
    return LD_ERR_BAD_MULTIADDR;
  *pos = end;
  if (p->size == 0)
    return ld_multiaddr_push(ma, p->code, NULL, 0) == 0 ? 0 : LD_ERR_BAD_MULTIADDR;
  size_t vstart, vend;
  if (p->kind == K_PATH) {
    vstart = *pos; /* the rest of the text, leading '/' included */
    vend = len;
  } else {
    if (*pos >= len)
      return LD_ERR_BAD_MULTIADDR;
    vstart = *pos + 1;
    vend = segment_end(text, vstart, len);
  }
  uint8_t value[LD_MULTIADDR_MAX];
  size_t vlen;
  if (value_from_text(p, text + vstart, vend - vstart, value, &vlen) != 0)
    return LD_ERR_BAD_MULTIADDR;
  *pos = vend;
  return ld_multiaddr_push(ma, p->code, value, vlen) == 0 ? 0 : LD_ERR_BAD_MULTIADDR;
}

int ld_multiaddr_parse(ld_multiaddr_t *ma, const char *text) {
  if (ma == NULL || text == NULL)
    return LD_ERR_INVALID_ARG;
  size_t len = strlen(text);
  if (len == 0 || text[0] != '/')
    return LD_ERR_BAD_MULTIADDR;
  if (len > 1 && text[len - 1] == '/')
    len--; /* one trailing '/' is tolerated */
  ld_multiaddr_t out = {0};
  size_t pos = 0;
  while (pos < len) {
    if (text[pos] != '/')
      return LD_ERR_BAD_MULTIADDR;
    pos++;
    if (parse_component(&out, text, len, &pos) != 0)
      return LD_ERR_BAD_MULTIADDR;
  }
  if (out.len == 0)
    return LD_ERR_BAD_MULTIADDR;
  memcpy(ma->bytes, out.bytes, out.len);
  ma->len = out.len;
  return 0;
}

/* ---- text output -------------------------------------------------------------------------- */

typedef struct {
  char *out;
  size_t cap;
  size_t len;
  bool overflow;
} writer_t;

static void put(writer_t *w, const void *s, size_t n) {
  if (w->overflow || n >= w->cap - w->len) {
    w->overflow = true;
    return;
  }
  memcpy(w->out + w->len, s, n);
  w->len += n;
  w->out[w->len] = '\0';
}

static void put_str(writer_t *w, const char *s) {
  put(w, s, strlen(s));
}

/* go-multiaddr prints IPv4-mapped addresses as ::ffff:a.b.c.d (as inet_ntop does) but
 * IPv4-compatible ones (::a.b.c.d in inet_ntop) as plain hex groups. */
static void format_ip6(const uint8_t *v, char *out, size_t cap) {
  static const uint8_t zeros[12];
  if (memcmp(v, zeros, 12) == 0 && (v[12] != 0 || v[13] != 0)) {
    snprintf(out, cap, "::%x:%x", (unsigned)(v[12] << 8 | v[13]), (unsigned)(v[14] << 8 | v[15]));
    return;
  }
  if (inet_ntop(AF_INET6, v, out, (socklen_t)cap) == NULL)
    out[0] = '\0';
}

static int put_p2p(writer_t *w, const uint8_t *v, size_t n) {
  ld_peerid_t id;
  char text[LD_PEERID_TEXT_MAX];
  if (ld_peerid_from_bytes(&id, v, n) != 0 || ld_peerid_to_text(&id, text, sizeof text) < 0)
    return LD_ERR_BAD_MULTIADDR;
  put_str(w, text);
  return 0;
}

static int put_multibase(writer_t *w, const uint8_t *v, size_t n) {
  char text[LD_BASE64URL_ENCODED_LEN(LD_MULTIADDR_MAX) + 1];
  if (ld_base64url_encode(v, n, text, sizeof text) < 0)
    return LD_ERR_BAD_MULTIADDR;
  put(w, "u", 1);
  put_str(w, text);
  return 0;
}

static int put_value(writer_t *w, const proto_t *p, const uint8_t *v, size_t n) {
  char tmp[INET6_ADDRSTRLEN + 8];
  switch (p->kind) {
  case K_IP4:
    if (inet_ntop(AF_INET, v, tmp, sizeof tmp) == NULL)
      return LD_ERR_BAD_MULTIADDR;
    break;
  case K_IP6:
    format_ip6(v, tmp, sizeof tmp);
    break;
  case K_PORT:
    snprintf(tmp, sizeof tmp, "%u", (unsigned)(v[0] << 8 | v[1]));
    break;
  case K_U8:
    snprintf(tmp, sizeof tmp, "%u", (unsigned)v[0]);
    break;
  case K_P2P:
    return put_p2p(w, v, n);
  case K_MULTIHASH:
    return put_multibase(w, v, n);
  default: /* K_NAME, K_PATH */
    put(w, v, n);
    return 0;
  }
  put_str(w, tmp);
  return 0;
}

int ld_multiaddr_to_text(const ld_multiaddr_t *ma, char *out, size_t cap) {
  if (ma == NULL || out == NULL || cap == 0 || ma->len > LD_MULTIADDR_MAX)
    return LD_ERR_INVALID_ARG;
  writer_t w = {out, cap, 0, false};
  out[0] = '\0';
  ld_cursor_t c;
  ld_cursor_init(&c, ma->bytes, ma->len);
  while (!ld_cursor_empty(&c)) {
    const proto_t *p;
    ld_multiaddr_component_t comp;
    if (read_component(&c, &p, &comp) != 0)
      return LD_ERR_BAD_MULTIADDR;
    put(&w, "/", 1);
    put_str(&w, p->name);
    if (p->size == 0)
      continue;
    if (p->kind != K_PATH)
      put(&w, "/", 1);
    if (put_value(&w, p, comp.value, comp.value_len) != 0)
      return LD_ERR_BAD_MULTIADDR;
  }
  if (w.overflow) {
    out[0] = '\0';
    return LD_ERR_LIMIT;
  }
  return (int)w.len;
}

/* ---- socket addresses, peer IDs, equality ------------------------------------------------- */

int ld_multiaddr_from_sockaddr(ld_multiaddr_t *ma, const void *sockaddr) {
  if (ma == NULL || sockaddr == NULL)
    return LD_ERR_INVALID_ARG;
  sa_family_t family;
  memcpy(&family, (const char *)sockaddr + offsetof(struct sockaddr, sa_family), sizeof family);
  ld_multiaddr_t out = {0};
  uint16_t port;
  if (family == AF_INET) {
    struct sockaddr_in sin;
    memcpy(&sin, sockaddr, sizeof sin);
    port = ntohs(sin.sin_port);
    ld_multiaddr_push(&out, LD_MA_IP4, (const uint8_t *)&sin.sin_addr, 4);
  } else if (family == AF_INET6) {
    struct sockaddr_in6 sin6;
    memcpy(&sin6, sockaddr, sizeof sin6);
    port = ntohs(sin6.sin6_port);
    ld_multiaddr_push(&out, LD_MA_IP6, sin6.sin6_addr.s6_addr, 16);
  } else {
    return LD_ERR_UNSUPPORTED;
  }
  uint8_t be[2] = {(uint8_t)(port >> 8), (uint8_t)port};
  ld_multiaddr_push(&out, LD_MA_TCP, be, 2);
  *ma = out;
  return 0;
}

int ld_multiaddr_to_sockaddr(const ld_multiaddr_t *ma, void *sockaddr_storage) {
  if (ma == NULL || sockaddr_storage == NULL)
    return LD_ERR_INVALID_ARG;
  size_t off = 0;
  ld_multiaddr_component_t ip, tcp;
  if (ld_multiaddr_next(ma, &off, &ip) != 1 || ld_multiaddr_next(ma, &off, &tcp) != 1 ||
      tcp.code != LD_MA_TCP || (ip.code != LD_MA_IP4 && ip.code != LD_MA_IP6))
    return LD_ERR_UNSUPPORTED;
  uint16_t port = htons((uint16_t)(tcp.value[0] << 8 | tcp.value[1]));
  memset(sockaddr_storage, 0, sizeof(struct sockaddr_storage));
  if (ip.code == LD_MA_IP4) {
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = port};
    memcpy(&sin.sin_addr, ip.value, 4);
    memcpy(sockaddr_storage, &sin, sizeof sin);
  } else {
    struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_port = port};
    memcpy(sin6.sin6_addr.s6_addr, ip.value, 16);
    memcpy(sockaddr_storage, &sin6, sizeof sin6);
  }
  return 0;
}

bool ld_multiaddr_peerid(ld_multiaddr_t *ma, ld_peerid_t *id, bool strip) {
  if (ma == NULL)
    return false;
  size_t off = 0, last_off = 0, prev = 0;
  ld_multiaddr_component_t comp, last = {0};
  while (ld_multiaddr_next(ma, &off, &comp) == 1) {
    last_off = prev;
    last = comp;
    prev = off;
  }
  if (last.code != LD_MA_P2P)
    return false;
  if (id != NULL && ld_peerid_from_bytes(id, last.value, last.value_len) != 0)
    return false;
  if (strip)
    ma->len = last_off;
  return true;
}

bool ld_multiaddr_equal(const ld_multiaddr_t *a, const ld_multiaddr_t *b) {
  return a->len == b->len && a->len <= LD_MULTIADDR_MAX && memcmp(a->bytes, b->bytes, a->len) == 0;
}
