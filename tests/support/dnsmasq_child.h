/* A real DNS server for the DNS discovery tests and benchmark: dnsmasq (Debian's dnsmasq-base)
 * started in the foreground on 127.0.0.1 at a free port, serving the TXT records of built
 * EIP-1459 trees from a generated configuration and nothing else (no upstream, no hosts file).
 * Header-only (static functions) so that bench/ can use it without the test support library. */
#ifndef LD_TESTS_DNSMASQ_CHILD_H
#define LD_TESTS_DNSMASQ_CHILD_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "waku/discovery/dns_tree.h"

#define DNSMASQ_PATHS                                                                              \
  { "/usr/sbin/dnsmasq", "/usr/bin/dnsmasq", "/sbin/dnsmasq" }

typedef struct dnsmasq_child {
  pid_t pid;
  uint16_t port;
  char dir[64];
  char server[32]; /* "127.0.0.1:<port>" for --dns-discovery-name-server */
} dnsmasq_child_t;

static const char *dnsmasq_path(void) {
  static const char *const paths[] = DNSMASQ_PATHS;
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    if (access(paths[i], X_OK) == 0)
      return paths[i];
  return NULL;
}

/* A port on 127.0.0.1 free right now for both UDP and TCP (dnsmasq binds both; a lost race
 * fails the start, which then tries another). */
static uint16_t dnsmasq_free_port(void) {
  for (int attempt = 0; attempt < 20; attempt++) {
    int u = socket(AF_INET, SOCK_DGRAM, 0), t = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    uint16_t port = 0;
    if (u >= 0 && t >= 0 && bind(u, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(u, (struct sockaddr *)&a, &len) == 0 &&
        bind(t, (struct sockaddr *)&a, sizeof a) == 0)
      port = ntohs(a.sin_port);
    if (u >= 0)
      close(u);
    if (t >= 0)
      close(t);
    if (port != 0)
      return port;
  }
  return 0;
}

/* True once dnsmasq accepts TCP connections on 127.0.0.1:port (it binds UDP and TCP first). */
static int dnsmasq_tcp_up(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {
      .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int up = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
  if (fd >= 0)
    close(fd);
  return up;
}

/* True once something listens on UDP 127.0.0.1:port (our bind is refused). */
static int dnsmasq_port_taken(uint16_t port) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in a = {
      .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int taken = bind(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno == EADDRINUSE;
  close(fd);
  return taken;
}

/* Appends the txt-record lines of `tree` (published under `domain`) to `f`. */
static void dnsmasq_write_tree(FILE *f, const ld_dns_built_t *tree, const char *domain) {
  for (size_t i = 0; i < tree->count; i++) {
    const char *text = tree->entries[i].text;
    if (strcmp(tree->entries[i].name, "@") == 0)
      fprintf(f, "txt-record=%s", domain);
    else
      fprintf(f, "txt-record=%s.%s", tree->entries[i].name, domain);
    size_t len = strlen(text);
    for (size_t off = 0; off < len; off += 255) /* one character-string holds 255 bytes */
      fprintf(f, ",\"%.*s\"", (int)(len - off < 255 ? len - off : 255), text + off);
    fprintf(f, "\n");
  }
}

/* Starts dnsmasq serving trees[0..n) (each under domains[i]) and waits until it listens. Returns
 * 0, or -1 with a message on stderr (dnsmasq not installed, did not start). */
static int dnsmasq_start(dnsmasq_child_t *d, const ld_dns_built_t *trees,
                         const char *const *domains, size_t n) {
  memset(d, 0, sizeof d[0]);
  const char *exe = dnsmasq_path();
  if (exe == NULL) {
    fprintf(stderr, "dnsmasq is not installed (Debian package dnsmasq-base; scripts/deps.sh)\n");
    return -1;
  }
  snprintf(d->dir, sizeof d->dir, "/tmp/ld-dnsmasq-XXXXXX");
  if (mkdtemp(d->dir) == NULL)
    return -1;
  char conf[128], pidfile[128], log[128];
  snprintf(conf, sizeof conf, "%s/dnsmasq.conf", d->dir);
  snprintf(pidfile, sizeof pidfile, "%s/pid", d->dir);
  snprintf(log, sizeof log, "%s/log", d->dir);
  FILE *f = fopen(conf, "w");
  if (f == NULL)
    return -1;
  for (size_t i = 0; i < n; i++)
    dnsmasq_write_tree(f, &trees[i], domains[i]);
  fclose(f);
  for (int attempt = 0; attempt < 5; attempt++) {
    d->port = dnsmasq_free_port();
    char port_arg[32], conf_arg[160], pid_arg[160], log_arg[160];
    snprintf(port_arg, sizeof port_arg, "--port=%u", d->port);
    snprintf(conf_arg, sizeof conf_arg, "--conf-file=%s", conf);
    snprintf(pid_arg, sizeof pid_arg, "--pid-file=%s", pidfile);
    snprintf(log_arg, sizeof log_arg, "--log-facility=%s", log);
    char *argv[] = {(char *)exe,
                    "--keep-in-foreground",
                    "--listen-address=127.0.0.1",
                    "--bind-interfaces",
                    "--no-resolv",
                    "--no-hosts",
                    "--no-poll",
                    port_arg,
                    conf_arg,
                    pid_arg,
                    log_arg,
                    geteuid() == 0 ? "--user=root" : "--cache-size=150",
                    NULL};
    d->pid = fork();
    if (d->pid == 0) {
      execv(exe, argv);
      _exit(127);
    }
    if (d->pid < 0)
      return -1;
    for (int i = 0; i < 500; i++) { /* 5 s */
      int status;
      if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
        d->pid = 0;
        break; /* exited: most likely the port was taken meanwhile; try another */
      }
      if (dnsmasq_port_taken(d->port) && dnsmasq_tcp_up(d->port)) {
        struct timespec settle = {0, 50 * 1000 * 1000};
        nanosleep(&settle, NULL);
        if (waitpid(d->pid, &status, WNOHANG) == d->pid) { /* it failed after all */
          d->pid = 0;
          break;
        }
        snprintf(d->server, sizeof d->server, "127.0.0.1:%u", d->port);
        return 0;
      }
      struct timespec ts = {0, 10 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
    if (d->pid > 0) {
      kill(d->pid, SIGKILL);
      waitpid(d->pid, NULL, 0);
      d->pid = 0;
    }
  }
  fprintf(stderr, "dnsmasq did not start (see %s)\n", log);
  return -1;
}

static void dnsmasq_stop(dnsmasq_child_t *d) {
  if (d->pid > 0) {
    kill(d->pid, SIGTERM);
    waitpid(d->pid, NULL, 0);
    d->pid = 0;
  }
  if (d->dir[0] != '\0') {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
    if (system(cmd) != 0)
      fprintf(stderr, "could not remove %s\n", d->dir);
    d->dir[0] = '\0';
  }
}

#endif
