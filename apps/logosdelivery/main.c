/* logosdelivery: the node program. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--version") == 0) {
    printf("logosdelivery %s\n", LD_VERSION);
    return 0;
  }
  fprintf(stderr, "logosdelivery %s: the node is not assembled yet\n", LD_VERSION);
  return 1;
}
