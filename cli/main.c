/* STUB: to be replaced by the CLI. */
#include <stdio.h>
#include "neuroc/neuroc.h"
int main(void) { printf("neuroc %s\n", nc_version()); return 0; }
