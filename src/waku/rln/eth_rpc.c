/* Ethereum JSON-RPC over libcurl's multi interface on libuv (eth_rpc.h). */
#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dynlib.h"
#include "base/error.h"
#include "waku/rln/eth_abi.h"
#include "waku/rln/eth_rpc.h"

#define TOPIC "rln"

/* ---- libcurl, loaded at run time ---------------------------------------------------------- */

typedef struct curl_api {
  CURLcode (*global_init)(long);
  CURLM *(*multi_init)(void);
  CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
  CURLMcode (*multi_add_handle)(CURLM *, CURL *);
  CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
  CURLMcode (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
  CURLMcode (*multi_assign)(CURLM *, curl_socket_t, void *);
  CURLMsg *(*multi_info_read)(CURLM *, int *);
  CURLMcode (*multi_cleanup)(CURLM *);
  CURL *(*easy_init)(void);
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  void (*easy_cleanup)(CURL *);
  const char *(*easy_strerror)(CURLcode);
  struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
  void (*slist_free_all)(struct curl_slist *);
} curl_api_t;

static curl_api_t g_curl;
static int g_curl_status = LD_ERR_IO;
static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;

#define SYM(field, name)                                                                           \
  { name, (void **)&g_curl.field }

static void load_curl(void) {
  static const ld_dynlib_sym_t syms[] = {
      SYM(global_init, "curl_global_init"),
      SYM(multi_init, "curl_multi_init"),
      SYM(multi_setopt, "curl_multi_setopt"),
      SYM(multi_add_handle, "curl_multi_add_handle"),
      SYM(multi_remove_handle, "curl_multi_remove_handle"),
      SYM(multi_socket_action, "curl_multi_socket_action"),
      SYM(multi_assign, "curl_multi_assign"),
      SYM(multi_info_read, "curl_multi_info_read"),
      SYM(multi_cleanup, "curl_multi_cleanup"),
      SYM(easy_init, "curl_easy_init"),
      SYM(easy_setopt, "curl_easy_setopt"),
      SYM(easy_getinfo, "curl_easy_getinfo"),
      SYM(easy_cleanup, "curl_easy_cleanup"),
      SYM(easy_strerror, "curl_easy_strerror"),
      SYM(slist_append, "curl_slist_append"),
      SYM(slist_free_all, "curl_slist_free_all"),
  };
  g_curl_status = ld_dynlib_load("libcurl.so.4", "libcurl.so", syms, sizeof syms / sizeof syms[0],
                                 TOPIC, "no Ethereum JSON-RPC client (on-chain RLN group)");
  if (g_curl_status == 0 && g_curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    g_curl_status = LD_ERR_IO;
}

/* ---- the client --------------------------------------------------------------------------- */

typedef struct sock_watch {
  uv_poll_t poll;
  ld_eth_rpc_t *rpc;
  curl_socket_t fd;
  struct sock_watch *next;
} sock_watch_t;

typedef struct call {
  ld_eth_rpc_t *rpc;
  CURL *easy;
  uint64_t id;
  char *request;
  char *body;
  size_t len, cap;
  bool too_large;
  ld_eth_rpc_cb cb;
  void *user;
  struct call *next;
} call_t;

struct ld_eth_rpc {
  uv_loop_t *loop;
  CURLM *multi;
  uv_timer_t timer;
  struct curl_slist *headers;
  char *url;
  uint32_t timeout_ms;
  size_t max_response;
  uint64_t next_id;
  size_t pending;
  call_t *calls;
  sock_watch_t *watches;
  unsigned open_handles;
  bool closing;
  void (*closed)(void *user);
  void *closed_user;
};

static void release(ld_eth_rpc_t *rpc) {
  if (--rpc->open_handles == 0 && rpc->closing) {
    void (*closed)(void *) = rpc->closed;
    void *user = rpc->closed_user;
    free(rpc->url);
    free(rpc);
    if (closed != NULL)
      closed(user);
  }
}

static void on_watch_closed(uv_handle_t *h) {
  sock_watch_t *w = h->data;
  ld_eth_rpc_t *rpc = w->rpc;
  free(w);
  release(rpc);
}

static void on_timer_closed(uv_handle_t *h) {
  release(h->data);
}

static void unlink_watch(ld_eth_rpc_t *rpc, sock_watch_t *w) {
  for (sock_watch_t **p = &rpc->watches; *p != NULL; p = &(*p)->next)
    if (*p == w) {
      *p = w->next;
      return;
    }
}

static void close_watch(ld_eth_rpc_t *rpc, sock_watch_t *w) {
  unlink_watch(rpc, w);
  uv_poll_stop(&w->poll);
  uv_close((uv_handle_t *)&w->poll, on_watch_closed);
}

static void free_call(call_t *c) {
  if (c->easy != NULL) {
    g_curl.multi_remove_handle(c->rpc->multi, c->easy);
    g_curl.easy_cleanup(c->easy);
  }
  for (call_t **p = &c->rpc->calls; *p != NULL; p = &(*p)->next)
    if (*p == c) {
      *p = c->next;
      break;
    }
  c->rpc->pending--;
  free(c->request);
  free(c->body);
  free(c);
}

static int finish_status(call_t *c, CURLcode code, char *why, size_t whylen) {
  if (c->too_large)
    return ld_error_fmt(why, whylen, LD_ERR_TOO_LARGE, "the answer exceeds %zu bytes",
                        c->rpc->max_response);
  if (code == CURLE_OPERATION_TIMEDOUT)
    return ld_error_fmt(why, whylen, LD_ERR_TIMEOUT, "no answer within %u ms", c->rpc->timeout_ms);
  if (code != CURLE_OK)
    return ld_error_fmt(why, whylen, LD_ERR_IO, "%s", g_curl.easy_strerror(code));
  long http = 0;
  g_curl.easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &http);
  if (http < 200 || http > 299)
    return ld_error_fmt(why, whylen, LD_ERR_IO, "HTTP status %ld", http);
  return 0;
}

static void finish(call_t *c, CURLcode code) {
  char why[256] = "";
  json_t *root = NULL;
  const json_t *result = NULL;
  int rc = finish_status(c, code, why, sizeof why);
  if (rc == 0)
    rc = ld_eth_rpc_response(c->body != NULL ? c->body : "", c->len, c->id, &root, &result, why,
                             sizeof why);
  ld_eth_rpc_cb cb = c->cb;
  void *user = c->user;
  free_call(c);
  cb(user, rc, rc == 0 ? result : NULL, rc == 0 ? NULL : why);
  json_decref(root);
}

static void check_done(ld_eth_rpc_t *rpc) {
  CURLMsg *m;
  int left = 0;
  while (!rpc->closing && (m = g_curl.multi_info_read(rpc->multi, &left)) != NULL) {
    if (m->msg != CURLMSG_DONE)
      continue;
    call_t *c = NULL;
    g_curl.easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&c);
    finish(c, m->data.result);
  }
}

static void on_poll(uv_poll_t *p, int status, int events) {
  sock_watch_t *w = p->data;
  ld_eth_rpc_t *rpc = w->rpc;
  int flags = status < 0 ? CURL_CSELECT_ERR : 0;
  flags |= (events & UV_READABLE) ? CURL_CSELECT_IN : 0;
  flags |= (events & UV_WRITABLE) ? CURL_CSELECT_OUT : 0;
  int running = 0;
  g_curl.multi_socket_action(rpc->multi, w->fd, flags, &running);
  check_done(rpc);
}

static void on_timer(uv_timer_t *t) {
  ld_eth_rpc_t *rpc = t->data;
  int running = 0;
  g_curl.multi_socket_action(rpc->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  check_done(rpc);
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp) {
  (void)easy;
  ld_eth_rpc_t *rpc = userp;
  sock_watch_t *w = socketp;
  if (what == CURL_POLL_REMOVE) {
    if (w != NULL) {
      g_curl.multi_assign(rpc->multi, fd, NULL);
      close_watch(rpc, w);
    }
    return 0;
  }
  if (w == NULL) {
    w = calloc(1, sizeof *w);
    if (w == NULL || uv_poll_init_socket(rpc->loop, &w->poll, fd) != 0) {
      free(w);
      return -1;
    }
    w->poll.data = w;
    w->rpc = rpc;
    w->fd = fd;
    w->next = rpc->watches;
    rpc->watches = w;
    rpc->open_handles++;
    g_curl.multi_assign(rpc->multi, fd, w);
  }
  int events = (what & CURL_POLL_IN ? UV_READABLE : 0) | (what & CURL_POLL_OUT ? UV_WRITABLE : 0);
  uv_poll_start(&w->poll, events, on_poll);
  return 0;
}

static int on_timeout(CURLM *multi, long ms, void *userp) {
  (void)multi;
  ld_eth_rpc_t *rpc = userp;
  if (ms < 0)
    uv_timer_stop(&rpc->timer);
  else
    uv_timer_start(&rpc->timer, on_timer, (uint64_t)ms, 0);
  return 0;
}

static size_t on_write(char *data, size_t size, size_t n, void *userp) {
  call_t *c = userp;
  size_t len = size * n;
  if (len > c->rpc->max_response - c->len) {
    c->too_large = true;
    return 0; /* cuts the transfer */
  }
  if (c->len + len + 1 > c->cap) {
    size_t cap = c->cap == 0 ? 1024 : c->cap;
    while (cap < c->len + len + 1)
      cap *= 2;
    char *b = realloc(c->body, cap);
    if (b == NULL)
      return 0;
    c->body = b;
    c->cap = cap;
  }
  memcpy(c->body + c->len, data, len);
  c->len += len;
  c->body[c->len] = '\0';
  return len;
}

int ld_eth_rpc_new(ld_eth_rpc_t **out, uv_loop_t *loop, const char *url, uint32_t timeout_ms,
                   size_t max_response) {
  pthread_once(&g_curl_once, load_curl);
  if (g_curl_status != 0)
    return g_curl_status;
  ld_eth_rpc_t *rpc = calloc(1, sizeof *rpc);
  if (rpc == NULL || (rpc->url = strdup(url)) == NULL ||
      (rpc->multi = g_curl.multi_init()) == NULL) {
    if (rpc != NULL)
      free(rpc->url);
    free(rpc);
    return LD_ERR_NOMEM;
  }
  rpc->loop = loop;
  rpc->timeout_ms = timeout_ms;
  rpc->max_response = max_response;
  rpc->next_id = 1;
  rpc->headers = g_curl.slist_append(NULL, "Content-Type: application/json");
  uv_timer_init(loop, &rpc->timer);
  rpc->timer.data = rpc;
  rpc->open_handles = 1;
  g_curl.multi_setopt(rpc->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
  g_curl.multi_setopt(rpc->multi, CURLMOPT_SOCKETDATA, rpc);
  g_curl.multi_setopt(rpc->multi, CURLMOPT_TIMERFUNCTION, on_timeout);
  g_curl.multi_setopt(rpc->multi, CURLMOPT_TIMERDATA, rpc);
  *out = rpc;
  return 0;
}

static CURL *make_easy(ld_eth_rpc_t *rpc, call_t *c) {
  CURL *e = g_curl.easy_init();
  if (e == NULL)
    return NULL;
  g_curl.easy_setopt(e, CURLOPT_URL, rpc->url);
  g_curl.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  g_curl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  g_curl.easy_setopt(e, CURLOPT_HTTPHEADER, rpc->headers);
  g_curl.easy_setopt(e, CURLOPT_POSTFIELDS, c->request);
  g_curl.easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)rpc->timeout_ms);
  g_curl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)rpc->timeout_ms);
  g_curl.easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
  g_curl.easy_setopt(e, CURLOPT_WRITEDATA, c);
  g_curl.easy_setopt(e, CURLOPT_PRIVATE, c);
  return e;
}

int ld_eth_rpc_call(ld_eth_rpc_t *rpc, const char *method, json_t *params, ld_eth_rpc_cb cb,
                    void *user) {
  if (rpc->closing) {
    json_decref(params);
    return LD_ERR_STATE;
  }
  if (rpc->pending >= LD_ETH_RPC_MAX_PENDING) {
    json_decref(params);
    return LD_ERR_LIMIT;
  }
  call_t *c = calloc(1, sizeof *c);
  uint64_t id = rpc->next_id++;
  json_t *req = ld_eth_rpc_request(id, method, params);
  if (c != NULL && req != NULL)
    c->request = json_dumps(req, JSON_COMPACT);
  json_decref(req);
  if (c == NULL || c->request == NULL) {
    if (c != NULL)
      free(c);
    return LD_ERR_NOMEM;
  }
  c->rpc = rpc;
  c->id = id;
  c->cb = cb;
  c->user = user;
  c->next = rpc->calls;
  rpc->calls = c;
  rpc->pending++;
  c->easy = make_easy(rpc, c);
  if (c->easy == NULL || g_curl.multi_add_handle(rpc->multi, c->easy) != CURLM_OK) {
    free_call(c);
    return LD_ERR_NOMEM;
  }
  return 0;
}

void ld_eth_rpc_free(ld_eth_rpc_t *rpc, void (*closed)(void *user), void *user) {
  if (rpc == NULL || rpc->closing)
    return;
  rpc->closed = closed;
  rpc->closed_user = user;
  while (rpc->calls != NULL)
    free_call(rpc->calls);
  g_curl.multi_cleanup(rpc->multi);
  rpc->multi = NULL;
  g_curl.slist_free_all(rpc->headers);
  rpc->closing = true;
  while (rpc->watches != NULL)
    close_watch(rpc, rpc->watches);
  uv_timer_stop(&rpc->timer);
  uv_close((uv_handle_t *)&rpc->timer, on_timer_closed);
}
