/* Kernel tier: waku_dns_discovery (c-api.md §3): syncs an EIP-1459 tree through the given name
 * server (c-ares, waku/discovery/dns_resolver.h) and answers with the records' dialable
 * multiaddrs, each ending in /p2p/<peer id>, joined by ','; failures answer with the walk's named
 * error and reason. */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "lib/kernel_internal.h"
#include "waku/discovery/dns_resolver.h"

static void dns_cancel(ld_kernel_op_t *op) {
  if (op->data != NULL) {
    ld_dns_discovery_cancel(op->data);
    op->data = NULL;
    ld_kernel_op_release(op);
  }
}

/* "<addr>/p2p/<id>" for each record's dialable addresses, joined by ','. */
static int join_addrs(const ld_enr_t *enrs, size_t n, ld_buf_t *out) {
  for (size_t i = 0; i < n; i++) {
    ld_peerid_t id;
    ld_multiaddr_t addrs[8];
    if (ld_enr_peer_id(&enrs[i], &id) != 0)
      continue;
    size_t count = ld_enr_dial_addrs(&enrs[i], addrs, 8);
    for (size_t k = 0; k < count && k < 8; k++) {
      char text[LD_MULTIADDR_TEXT_MAX];
      if (ld_multiaddr_push(&addrs[k], LD_MA_P2P, id.bytes, id.len) != 0 ||
          ld_multiaddr_to_text(&addrs[k], text, sizeof text) < 0)
        continue;
      if ((out->len > 0 && ld_buf_append(out, ",", 1) != 0) ||
          ld_buf_append(out, text, strlen(text)) != 0)
        return LD_ERR_NOMEM;
    }
  }
  return 0;
}

static void on_dns_done(void *arg, int err, const char *reason, const ld_enr_t *enrs, size_t n,
                        const ld_dns_walker_stats_t *stats) {
  (void)stats;
  ld_kernel_op_t *op = arg;
  op->data = NULL;
  if (err != 0) {
    ld_kernel_op_err(op, "error in dnsDiscovery: %s (%s)", ld_errname(err),
                     reason != NULL ? reason : "");
  } else {
    ld_buf_t out;
    ld_buf_init(&out);
    if (join_addrs(enrs, n, &out) != 0)
      ld_kernel_op_err(op, "error in dnsDiscovery: out of memory");
    else
      ld_kernel_op_ok(op, out.len > 0 ? (const char *)out.data : "", out.len);
    ld_buf_clear(&out);
  }
  ld_kernel_op_release(op);
}

static void h_dns_discovery(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_kernel_t *k = ld_kernel_get(ctx, req, "dnsDiscovery");
  if (k == NULL)
    return;
  ld_kernel_op_t *op = ld_kernel_op_new(k, req, "dnsDiscovery", ld_kernel_timeout_ms(a->n[0]),
                                        "DNS discovery timed out");
  if (op == NULL)
    return;
  const char *server = a->s[1] != NULL && a->s[1][0] != '\0' ? a->s[1] : NULL;
  ld_dns_discovery_t *d = NULL;
  int rc = ld_dns_discovery_start(ld_lib_ctx_loop(ctx), a->s[0] != NULL ? a->s[0] : "", &server,
                                  server != NULL ? 1 : 0, NULL, 0, on_dns_done, op, &d);
  if (rc == 0) {
    op->data = d;
    op->cancel = dns_cancel;
    op->refs++;
  } else {
    ld_kernel_op_err(op, "error in dnsDiscovery: %s",
                     rc == LD_ERR_DNS_BAD_URL ? "invalid enrtree:// URL" : ld_strerror(rc));
  }
  ld_kernel_op_release(op);
}

int waku_dns_discovery(void *ctx, FFICallBack callback, void *userData, const char *entTreeUrl,
                       const char *nameDnsServer, int timeoutMs) {
  return ld_kernel_call(ctx, callback, userData, h_dns_discovery, entTreeUrl, nameDnsServer, NULL,
                        timeoutMs, 0);
}
