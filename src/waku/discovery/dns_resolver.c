#include "waku/discovery/dns_resolver.h"

#include <ares.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dynlib.h"
#include "base/error.h"
#include "base/log.h"

#define LOG_TOPIC "dnsdisc"
#define DNS_CLASS_IN 1
#define DNS_TYPE_TXT 16
#define MAX_RECORDS 64 /* TXT records of one name passed on */

/* ---- libcares, loaded at run time ----------------------------------------------------------- */

typedef struct cares_api {
  int (*library_init)(int flags);
  int (*init_options)(ares_channel *channel, struct ares_options *options, int optmask);
  void (*destroy)(ares_channel channel);
  int (*set_servers_ports_csv)(ares_channel channel, const char *servers);
  void (*query)(ares_channel channel, const char *name, int dnsclass, int type,
                ares_callback callback, void *arg);
  int (*parse_txt_reply_ext)(const unsigned char *abuf, int alen, struct ares_txt_ext **out);
  void (*free_data)(void *data);
  void (*process_fd)(ares_channel channel, ares_socket_t read_fd, ares_socket_t write_fd);
  struct timeval *(*timeout)(ares_channel channel, struct timeval *maxtv, struct timeval *tv);
  const char *(*strerror)(int code);
} cares_api_t;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static cares_api_t g_ares;
static int g_status = LD_ERR_IO;

#define SYM(field, name)                                                                           \
  { name, (void **)&g_ares.field }

static const ld_dynlib_sym_t SYMS[] = {
    SYM(library_init, "ares_library_init"),
    SYM(init_options, "ares_init_options"),
    SYM(destroy, "ares_destroy"),
    SYM(set_servers_ports_csv, "ares_set_servers_ports_csv"),
    SYM(query, "ares_query"),
    SYM(parse_txt_reply_ext, "ares_parse_txt_reply_ext"),
    SYM(free_data, "ares_free_data"),
    SYM(process_fd, "ares_process_fd"),
    SYM(timeout, "ares_timeout"),
    SYM(strerror, "ares_strerror"),
};

static void load_once(void) {
  g_status = ld_dynlib_load(LD_CARES_SONAME, LD_CARES_SONAME_FALLBACK, SYMS,
                            sizeof SYMS / sizeof SYMS[0], LOG_TOPIC, "no DNS discovery available");
  if (g_status == 0 && g_ares.library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS)
    g_status = LD_ERR_IO;
}

/* ---- the resolver --------------------------------------------------------------------------- */

typedef struct sock_watch {
  struct sock_watch *next;
  ld_dns_resolver_t *r;
  uv_poll_t poll;
  ares_socket_t fd;
} sock_watch_t;

struct ld_dns_resolver {
  uv_loop_t *loop;
  ares_channel channel;
  bool has_channel;
  uv_timer_t timer;
  sock_watch_t *watches;
  size_t open_handles; /* the timer and the polls not yet closed */
  unsigned depth;      /* nested calls into c-ares */
  bool closing;
};

typedef struct query {
  ld_dns_resolver_t *r;
  ld_dns_txt_cb cb;
  void *arg;
  char name[LD_DNS_NAME_MAX + 1];
} query_t;

static void release_handle(ld_dns_resolver_t *r) {
  if (--r->open_handles == 0 && r->closing)
    free(r);
}

static void on_poll_closed(uv_handle_t *h) {
  sock_watch_t *w = h->data;
  ld_dns_resolver_t *r = w->r;
  free(w);
  release_handle(r);
}

static void on_timer_closed(uv_handle_t *h) {
  release_handle(h->data);
}

static void destroy_channel(ld_dns_resolver_t *r) {
  if (r->has_channel) {
    r->has_channel = false;
    r->depth++;
    g_ares.destroy(r->channel); /* cancels the lookups: their callbacks get ARES_EDESTRUCTION */
    r->depth--;
  }
  while (r->watches != NULL) {
    sock_watch_t *w = r->watches;
    r->watches = w->next;
    uv_poll_stop(&w->poll);
    uv_close((uv_handle_t *)&w->poll, on_poll_closed);
  }
  if (!uv_is_closing((uv_handle_t *)&r->timer)) {
    uv_timer_stop(&r->timer);
    uv_close((uv_handle_t *)&r->timer, on_timer_closed);
  }
}

static void on_timer(uv_timer_t *t);

/* After every call into c-ares: the next timeout, or the deferred close. */
static void settle(ld_dns_resolver_t *r) {
  if (r->depth > 0)
    return;
  if (r->closing) {
    destroy_channel(r);
    return;
  }
  struct timeval tv, *tvp = g_ares.timeout(r->channel, NULL, &tv);
  if (tvp == NULL) {
    uv_timer_stop(&r->timer);
    return;
  }
  uint64_t ms = (uint64_t)tvp->tv_sec * 1000 + (uint64_t)tvp->tv_usec / 1000;
  uv_timer_start(&r->timer, on_timer, ms, 0);
}

static void process(ld_dns_resolver_t *r, ares_socket_t rfd, ares_socket_t wfd) {
  r->depth++;
  g_ares.process_fd(r->channel, rfd, wfd);
  r->depth--;
  settle(r);
}

static void on_timer(uv_timer_t *t) {
  ld_dns_resolver_t *r = t->data;
  if (r->has_channel)
    process(r, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
}

static void on_poll(uv_poll_t *p, int status, int events) {
  sock_watch_t *w = p->data;
  ld_dns_resolver_t *r = w->r;
  if (!r->has_channel)
    return;
  bool rd = status < 0 || (events & UV_READABLE) != 0;
  bool wr = status < 0 || (events & UV_WRITABLE) != 0;
  process(r, rd ? w->fd : ARES_SOCKET_BAD, wr ? w->fd : ARES_SOCKET_BAD);
}

/* c-ares opens, watches and closes its UDP and TCP sockets through this. */
static void on_sock_state(void *data, ares_socket_t fd, int readable, int writable) {
  ld_dns_resolver_t *r = data;
  sock_watch_t **link = &r->watches;
  while (*link != NULL && (*link)->fd != fd)
    link = &(*link)->next;
  sock_watch_t *w = *link;
  if (!readable && !writable) {
    if (w != NULL) {
      *link = w->next;
      uv_poll_stop(&w->poll);
      uv_close((uv_handle_t *)&w->poll, on_poll_closed);
    }
    return;
  }
  if (w == NULL) {
    w = calloc(1, sizeof *w);
    if (w == NULL)
      return; /* the lookup times out */
    w->r = r;
    w->fd = fd;
    if (uv_poll_init_socket(r->loop, &w->poll, fd) != 0) {
      free(w);
      return;
    }
    w->poll.data = w;
    w->next = r->watches;
    r->watches = w;
    r->open_handles++;
  }
  uv_poll_start(&w->poll, (readable ? UV_READABLE : 0) | (writable ? UV_WRITABLE : 0), on_poll);
}

static int servers_csv(const char *const *servers, size_t n, char **out) {
  size_t len = 1;
  for (size_t i = 0; i < n; i++)
    len += strlen(servers[i]) + 1;
  char *csv = calloc(1, len);
  if (csv == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < n; i++) {
    if (servers[i][0] == '\0' || strchr(servers[i], ',') != NULL) {
      free(csv);
      return LD_ERR_INVALID_ARG;
    }
    if (i > 0)
      strcat(csv, ",");
    strcat(csv, servers[i]);
  }
  *out = csv;
  return 0;
}

int ld_dns_resolver_new(uv_loop_t *loop, const char *const *servers, size_t n_servers,
                        ld_dns_resolver_t **out) {
  pthread_once(&g_once, load_once);
  if (g_status != 0)
    return g_status;
  ld_dns_resolver_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return LD_ERR_NOMEM;
  r->loop = loop;
  struct ares_options opts;
  memset(&opts, 0, sizeof opts);
  opts.sock_state_cb = on_sock_state;
  opts.sock_state_cb_data = r;
  opts.timeout = LD_DNS_QUERY_TIMEOUT_MS;
  opts.tries = LD_DNS_QUERY_TRIES;
  int optmask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES;
  if (g_ares.init_options(&r->channel, &opts, optmask) != ARES_SUCCESS) {
    free(r);
    return LD_ERR_NOMEM;
  }
  r->has_channel = true;
  if (n_servers > 0) {
    char *csv = NULL;
    int rc = servers_csv(servers, n_servers, &csv);
    if (rc == 0 && g_ares.set_servers_ports_csv(r->channel, csv) != ARES_SUCCESS)
      rc = LD_ERR_INVALID_ARG;
    free(csv);
    if (rc != 0) {
      g_ares.destroy(r->channel);
      free(r);
      return rc;
    }
  }
  uv_timer_init(loop, &r->timer);
  r->timer.data = r;
  r->open_handles = 1;
  *out = r;
  return 0;
}

/* Joins each record's strings; calls the lookup's callback. */
static void deliver_txt(query_t *q, const unsigned char *abuf, int alen) {
  struct ares_txt_ext *head = NULL;
  int status = g_ares.parse_txt_reply_ext(abuf, alen, &head);
  if (status == ARES_ENODATA) {
    q->cb(q->arg, q->name, 0, NULL, NULL, NULL, 0);
    return;
  }
  if (status != ARES_SUCCESS) {
    q->cb(q->arg, q->name, LD_ERR_DNS_QUERY, g_ares.strerror(status), NULL, NULL, 0);
    return;
  }
  size_t n = 0, lens[MAX_RECORDS] = {0};
  for (struct ares_txt_ext *t = head; t != NULL; t = t->next) {
    if (t->record_start || n == 0)
      n++;
    if (n > MAX_RECORDS)
      break;
    size_t room = LD_DNS_TXT_READ_MAX - lens[n - 1];
    lens[n - 1] += t->length < room ? t->length : room;
  }
  if (n > MAX_RECORDS)
    n = MAX_RECORDS;
  char *buf = malloc(n * LD_DNS_TXT_READ_MAX + 1);
  const char *records[MAX_RECORDS];
  if (buf == NULL) {
    g_ares.free_data(head);
    q->cb(q->arg, q->name, LD_ERR_DNS_QUERY, "out of memory", NULL, NULL, 0);
    return;
  }
  size_t i = 0, used = 0;
  for (struct ares_txt_ext *t = head; t != NULL; t = t->next) {
    if (t->record_start && used > 0)
      i++, used = 0;
    if (i >= n)
      break;
    size_t room = LD_DNS_TXT_READ_MAX - used;
    size_t take = t->length < room ? t->length : room;
    memcpy(buf + i * LD_DNS_TXT_READ_MAX + used, t->txt, take);
    used += take;
  }
  for (i = 0; i < n; i++)
    records[i] = buf + i * LD_DNS_TXT_READ_MAX;
  g_ares.free_data(head);
  q->cb(q->arg, q->name, 0, NULL, records, lens, n);
  free(buf);
}

static void on_answer(void *arg, int status, int timeouts, unsigned char *abuf, int alen) {
  (void)timeouts;
  query_t *q = arg;
  if (status == ARES_SUCCESS)
    deliver_txt(q, abuf, alen);
  else if (status == ARES_ENODATA)
    q->cb(q->arg, q->name, 0, NULL, NULL, NULL, 0);
  else if (status == ARES_EDESTRUCTION || status == ARES_ECANCELLED)
    q->cb(q->arg, q->name, LD_ERR_CANCELED, "resolver closed", NULL, NULL, 0);
  else
    q->cb(q->arg, q->name, LD_ERR_DNS_QUERY, g_ares.strerror(status), NULL, NULL, 0);
  free(q);
}

int ld_dns_resolver_txt(ld_dns_resolver_t *r, const char *name, ld_dns_txt_cb cb, void *arg) {
  if (r->closing || !r->has_channel)
    return LD_ERR_STATE;
  if (strlen(name) > LD_DNS_NAME_MAX)
    return LD_ERR_INVALID_ARG;
  query_t *q = calloc(1, sizeof *q);
  if (q == NULL)
    return LD_ERR_NOMEM;
  q->r = r;
  q->cb = cb;
  q->arg = arg;
  snprintf(q->name, sizeof q->name, "%s", name);
  r->depth++;
  g_ares.query(r->channel, name, DNS_CLASS_IN, DNS_TYPE_TXT, on_answer, q);
  r->depth--;
  settle(r);
  return 0;
}

void ld_dns_resolver_close(ld_dns_resolver_t *r) {
  if (r == NULL || r->closing)
    return;
  r->closing = true;
  settle(r); /* now, or when the c-ares call we are inside of returns */
}

/* ---- DNS discovery -------------------------------------------------------------------------- */

struct ld_dns_discovery {
  uv_loop_t *loop;
  ld_dns_resolver_t *resolver;
  ld_dns_walker_t *walker;
  size_t parallel, in_flight;
  ld_dns_discovery_cb cb;
  void *arg;
  uv_timer_t finish; /* reports the end from the loop, outside c-ares */
  bool pumping, finished, canceled;
};

static void on_txt(void *arg, const char *name, int err, const char *reason,
                   const char *const *records, const size_t *lens, size_t n);

static void on_finish_closed(uv_handle_t *h) {
  free(h->data);
}

static void release(ld_dns_discovery_t *d) {
  ld_dns_resolver_close(d->resolver);
  ld_dns_walker_free(d->walker);
  d->walker = NULL;
  uv_close((uv_handle_t *)&d->finish, on_finish_closed);
}

static void on_finish(uv_timer_t *t) {
  ld_dns_discovery_t *d = t->data;
  const char *reason = NULL;
  int err = ld_dns_walker_error(d->walker, &reason);
  ld_dns_walker_stats_t stats;
  ld_dns_walker_get_stats(d->walker, &stats);
  if (err == 0) {
    d->cb(d->arg, 0, NULL, ld_dns_walker_enr(d->walker, 0), ld_dns_walker_enr_count(d->walker),
          &stats);
  } else {
    d->cb(d->arg, err, reason, NULL, 0, &stats);
  }
  release(d);
}

/* Hands out names until `parallel` are in flight; reports the end once. */
static void pump(ld_dns_discovery_t *d) {
  if (d->pumping || d->finished)
    return;
  d->pumping = true;
  char name[LD_DNS_NAME_MAX + 1];
  while (d->in_flight < d->parallel && ld_dns_walker_next(d->walker, name, sizeof name) == 1) {
    d->in_flight++;
    int rc = ld_dns_resolver_txt(d->resolver, name, on_txt, d);
    if (rc != 0) {
      d->in_flight--;
      ld_dns_walker_fail(d->walker, name, rc, ld_strerror(rc));
    }
  }
  d->pumping = false;
  if (ld_dns_walker_done(d->walker) && !d->finished) {
    d->finished = true;
    uv_timer_start(&d->finish, on_finish, 0, 0);
  }
}

static void on_txt(void *arg, const char *name, int err, const char *reason,
                   const char *const *records, const size_t *lens, size_t n) {
  ld_dns_discovery_t *d = arg;
  d->in_flight--;
  if (d->canceled || d->walker == NULL)
    return;
  if (err != 0)
    ld_dns_walker_fail(d->walker, name, err, reason);
  else
    ld_dns_walker_answer(d->walker, name, records, lens, n);
  pump(d);
}

int ld_dns_discovery_start(uv_loop_t *loop, const char *url, const char *const *servers,
                           size_t n_servers, const ld_dns_limits_t *limits, size_t parallel,
                           ld_dns_discovery_cb cb, void *arg, ld_dns_discovery_t **out) {
  ld_dns_url_t parsed;
  int rc = ld_dns_url_parse(url, strlen(url), &parsed);
  if (rc != 0)
    return rc;
  ld_dns_discovery_t *d = calloc(1, sizeof *d);
  if (d == NULL)
    return LD_ERR_NOMEM;
  d->loop = loop;
  d->cb = cb;
  d->arg = arg;
  d->parallel = parallel > 0 ? parallel : LD_DNS_DEFAULT_PARALLEL;
  d->walker = ld_dns_walker_new(&parsed, limits);
  if (d->walker == NULL) {
    free(d);
    return LD_ERR_NOMEM;
  }
  rc = ld_dns_resolver_new(loop, servers, n_servers, &d->resolver);
  if (rc != 0) {
    ld_dns_walker_free(d->walker);
    free(d);
    return rc;
  }
  uv_timer_init(loop, &d->finish);
  d->finish.data = d;
  if (out != NULL)
    *out = d;
  pump(d);
  return 0;
}

void ld_dns_discovery_cancel(ld_dns_discovery_t *d) {
  if (d == NULL || d->canceled)
    return;
  d->canceled = true;
  uv_timer_stop(&d->finish);
  release(d);
}
