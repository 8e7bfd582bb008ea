/* logosdelivery: the node program. */
#include "logosdelivery/app.h"

int main(int argc, char **argv) {
  return ld_app_main(argc, argv);
}
