/* `logosdelivery query --peer <multiaddr> [--pubsub-topic P] [--content-topic T]... [--start-time
 * ns] [--end-time ns] [--hash 0x…]... [--cursor 0x…] [--page-size N] [--backward] [--no-data]
 * [--all]`: one store v3 query to the peer from a node without relay. Prints each message of the
 * answer as one JSON line (ld_client_message_json; {"hash":"0x…"} with --no-data) in the order
 * the store sends them (ascending time), then {"cursor":"0x…"} when more results exist (pass it
 * back with --cursor). --all follows the cursors through every page instead. A status other than
 * 200 prints the code and description on stderr and exits with LD_EXIT_SERVICE. With --all the
 * pages and messages fetched and the rate go to stderr as they come (logosdelivery/progress.h:
 * a line redrawn in place on a terminal, plain lines otherwise). */
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "logosdelivery/app.h"
#include "logosdelivery/client.h"
#include "logosdelivery/hints.h"
#include "logosdelivery/progress.h"
#include "waku/store/client.h"

typedef struct query_state {
  ld_client_query_t query;
  ld_store_call_t *call; /* the query in flight */
  bool started;
  ld_progress_t progress; /* --all */
} query_state_t;

static void print_entries(const ld_store_response_t *res) {
  for (size_t i = 0; i < res->n_entries; i++) {
    const ld_store_entry_t *e = &res->entries[i];
    if (e->pubsub_topic != NULL)
      ld_client_print_message(e->pubsub_topic, &e->message, e->hash);
    else
      ld_client_print_hash("hash", e->hash);
  }
}

/* Ends the command after the final answer: 200 succeeds, anything else is reported. */
static void conclude(ld_client_t *c, int err, uint32_t status, const char *desc) {
  query_state_t *s = c->user_data;
  s->call = NULL;
  if (c->finished)
    return;
  if (err == 0 && status == LD_STORE_STATUS_OK) {
    ld_client_finish(c, LD_EXIT_OK);
    return;
  }
  fprintf(stderr, "query: store query failed: %u %s", status, desc != NULL ? desc : "");
  if (err != 0)
    fprintf(stderr, " (%s)", ld_errname(err));
  char buf[256];
  fprintf(stderr, "; %s\n",
          ld_app_service_hint(status, err, desc, "--store=true", buf, sizeof buf));
  ld_client_finish(c, ld_client_service_exit(err));
}

static void on_answer(int err, ld_store_response_t *res, void *user_data) {
  ld_client_t *c = user_data;
  if (!c->finished && err == 0 && res->status_code == LD_STORE_STATUS_OK) {
    print_entries(res);
    if (res->has_cursor)
      ld_client_print_hash("cursor", res->cursor);
  }
  conclude(c, err, res->status_code, res->status_desc);
}

static bool on_page(ld_store_response_t *page, void *user_data) {
  ld_client_t *c = user_data;
  if (c->finished)
    return false;
  query_state_t *s = c->user_data;
  ld_progress_clear(&s->progress);
  print_entries(page);
  fflush(stdout);
  ld_progress_page(&s->progress, page->n_entries, ld_now_ms());
  return true;
}

static void on_all_done(int err, uint32_t status, const char *desc, size_t pages, void *user_data) {
  (void)pages;
  ld_client_t *c = user_data;
  query_state_t *s = c->user_data;
  if (!c->finished)
    ld_progress_done(&s->progress, ld_now_ms());
  conclude(c, err, status, desc);
}

static void start_query(ld_client_t *c) {
  query_state_t *s = c->user_data;
  if (s->started)
    return;
  s->started = true;
  ld_progress_init(&s->progress, stderr, ld_progress_is_tty(stderr), "query", "messages");
  s->progress.start_ms = ld_now_ms();
  ld_store_target_t to = {c->conn, NULL};
  ld_switch_t *sw = ld_node_switch(c->node);
  int rc = c->opts.all ? ld_store_client_query_all(sw, &to, &s->query.q, NULL, on_page, on_all_done,
                                                   c, &s->call)
                       : ld_store_client_query(sw, &to, &s->query.q, NULL, on_answer, c, &s->call);
  if (rc == 0)
    return;
  s->call = NULL;
  char buf[256];
  fprintf(stderr, "query: cannot query: %s (%s); %s\n", ld_strerror(rc), ld_errname(rc),
          rc == LD_ERR_INVALID_ARG || rc == LD_ERR_LIMIT || rc == LD_ERR_TOO_LARGE
              ? "check the query's flags (`logosdelivery query --help`)"
              : ld_app_service_hint(0, rc, NULL, "--store=true", buf, sizeof buf));
  bool usage = rc == LD_ERR_INVALID_ARG || rc == LD_ERR_LIMIT || rc == LD_ERR_TOO_LARGE;
  ld_client_finish(c, usage ? LD_EXIT_USAGE : ld_client_exit_code(rc));
}

static void query_finishing(ld_client_t *c) {
  query_state_t *s = c->user_data;
  if (s->call != NULL)
    ld_store_client_cancel(s->call);
  s->call = NULL;
  ld_client_stop(c);
}

static int parse(ld_client_t *c, query_state_t *s, int argc, char **argv) {
  const char *positional[8];
  size_t n_positional = 0;
  char err[512], why[480];
  int rc = ld_client_parse(LD_CLIENT_QUERY, argc, argv, &c->opts, positional, &n_positional, err,
                           sizeof err);
  if (rc == 0 && c->opts.help)
    return LD_EXIT_OK;
  if (rc == 0 && n_positional != 0) {
    snprintf(err, sizeof err,
             "query: unexpected argument '%.200s'; query takes only flags (`logosdelivery query "
             "--help`)",
             positional[0]);
    rc = LD_ERR_INVALID_ARG;
  }
  if (rc == 0 && ld_client_query_build(&c->opts, &s->query, why, sizeof why) != 0) {
    snprintf(err, sizeof err, "query: %s", why);
    rc = LD_ERR_INVALID_ARG;
  }
  if (rc != 0)
    fprintf(stderr, "%s\n", err);
  return rc != 0 ? LD_EXIT_USAGE : LD_EXIT_OK;
}

int ld_app_query(int argc, char **argv) {
  static ld_client_t c;
  static query_state_t s;
  static const ld_client_hooks_t hooks = {.on_peer_ready = start_query,
                                          .on_finishing = query_finishing};
  memset(&c, 0, sizeof c);
  memset(&s, 0, sizeof s);
  int code = parse(&c, &s, argc, argv);
  if (code == LD_EXIT_OK && !c.opts.help) {
    c.user_data = &s;
    code = ld_client_run(&c, &hooks);
  }
  ld_client_opts_clear(&c.opts);
  return code;
}
