/* logosdelivery(1) and the bash completion are written from the option tables: every node option,
 * every sub-command and every flag of each appears in both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "logosdelivery/app.h"
#include "logosdelivery/client.h"
#include "logosdelivery/flags.h"
#include "node/options.h"

/* The stream's buffer pointer lives on the heap: GCC's -Wdangling-pointer takes a local one,
 * whose address the stream keeps, for a pointer that outlives its frame. */
typedef struct captured {
  char *buf;
  size_t len;
} captured_t;

static char *capture(void (*print)(FILE *)) {
  captured_t *c = calloc(1, sizeof *c);
  assert_non_null(c);
  FILE *f = open_memstream(&c->buf, &c->len);
  assert_non_null(f);
  print(f);
  fclose(f);
  char *buf = c->buf;
  free(c);
  return buf;
}

/* "--name" as roff writes it in the man page: \fB\-\-na\-me\fR. */
static void expect_man_flag(const char *man, const char *name) {
  char want[256] = "\\fB\\-\\-";
  size_t n = strlen(want);
  for (const char *p = name; *p != '\0' && n + 3 < sizeof want; p++) {
    if (*p == '-')
      want[n++] = '\\';
    want[n++] = *p;
  }
  snprintf(want + n, sizeof want - n, "\\fR");
  if (strstr(man, want) == NULL)
    fail_msg("the man page lacks %s", want);
}

static void expect_word(const char *text, const char *name) {
  char want[256];
  snprintf(want, sizeof want, "--%s", name);
  for (const char *p = strstr(text, want); p != NULL; p = strstr(p + 1, want)) {
    char before = p == text ? ' ' : p[-1];
    char after = p[strlen(want)];
    if ((before == ' ' || before == '\'') && (after == ' ' || after == '\''))
      return;
  }
  fail_msg("the completion lacks %s", want);
}

typedef struct command {
  const char *name;
  size_t n;
  ld_flag_t flags[64];
} command_t;

static size_t commands(command_t *out) {
  static const char *const names[] = {"canary", "send",   "subscribe",
                                      "query",  "discv5", "generateRlnKeystore"};
  for (size_t i = 0; i < 6; i++) {
    out[i].name = names[i];
    if (i == 0)
      out[i].n = ld_app_canary_flags(out[i].flags, 64);
    else if (i == 4)
      out[i].n = ld_app_discv5_flags(out[i].flags, 64);
    else if (i == 5)
      out[i].n = ld_app_rln_keystore_flags(out[i].flags, 64);
    else
      out[i].n = ld_client_flags((ld_client_command_t)(i - 1), out[i].flags, 64);
    assert_true(out[i].n > 0);
  }
  return 6;
}

static void man_page_has_every_option_and_command(void **state) {
  (void)state;
  char *man = capture(ld_app_print_man);
  assert_non_null(strstr(man, ".TH LOGOSDELIVERY 1 "));
  assert_true(ld_node_options_count() > 50);
  for (size_t i = 0; i < ld_node_options_count(); i++)
    expect_man_flag(man, ld_node_option_at(i)->cli);
  command_t cmds[6];
  for (size_t i = 0; i < commands(cmds); i++) {
    char section[64];
    snprintf(section, sizeof section, ".SS %s\n", cmds[i].name);
    if (strstr(man, section) == NULL)
      fail_msg("the man page lacks the command %s", cmds[i].name);
    for (size_t k = 0; k < cmds[i].n; k++)
      expect_man_flag(strstr(man, section), cmds[i].flags[k].name);
  }
  free(man);
}

static void completion_has_every_option_and_command(void **state) {
  (void)state;
  char *bash = capture(ld_app_print_bash_completion);
  assert_non_null(strstr(bash, "complete -o default -F _logosdelivery logosdelivery\n"));
  for (size_t i = 0; i < ld_node_options_count(); i++)
    expect_word(bash, ld_node_option_at(i)->cli);
  command_t cmds[6];
  for (size_t i = 0; i < commands(cmds); i++) {
    char var[64];
    snprintf(var, sizeof var, "_logosdelivery_%s_flags='", cmds[i].name);
    const char *line = strstr(bash, var);
    if (line == NULL)
      fail_msg("the completion lacks %s", var);
    char *copy = strndup(line, strcspn(line, "\n"));
    for (size_t k = 0; k < cmds[i].n; k++)
      expect_word(copy + strlen(var) - 1, cmds[i].flags[k].name);
    free(copy);
  }
  free(bash);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(man_page_has_every_option_and_command),
      cmocka_unit_test(completion_has_every_option_and_command),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
