/* args.h - the command line split into options (api/options.h) and the input. */
#ifndef PPQ_ARGS_H
#define PPQ_ARGS_H

#include "../api/options.h"

/* Fills o from argv; on error returns PPQ_EUSAGE with a message in d. */
int options_parse(Options *o, int argc, char **argv, Diag *d);

#endif
