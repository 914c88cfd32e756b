/* The neuroc program: shared helpers and the command table.
 * The CLI uses only the public header (DESIGN §2: cli → include). */
#ifndef NC_CLI_H
#define NC_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "neuroc/neuroc.h"

/* One sub-command. `help` is printed by `neuroc <name> --help`. To add a
 * command (convert, eval, sim, finetune...), write cmd_<name>.c and add a row
 * to the table in main.c. */
typedef struct cli_command {
    const char *name;
    const char *summary;
    const char *help;
    int (*run)(int argc, char **argv); /* argv[0] is the command name; returns the exit code */
} cli_command;

int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
extern const char CMD_INFO_HELP[];
extern const char CMD_RUN_HELP[];

/* Exit codes: 0 success, 1 failure, 2 bad command line. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* Prints "neuroc: <status>: <nc_last_error()>" and returns CLI_FAIL. */
int cli_fail(nc_status st);
/* Same, with the CLI's own message (for checks the CLI makes itself). */
int cli_failf(nc_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "neuroc <cmd>: <message>" and a hint, returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A command-line option. Exactly one of `value` (takes an argument:
 * "--name VALUE" or "--name=VALUE") and `flag` (set to 1) is non-NULL. */
typedef struct cli_opt {
    const char *name;  /* "--input" */
    const char *alias; /* "-i" or NULL */
    const char **value;
    int *flag;
} cli_opt;

/* Parses argv[1..argc) against `opts` (a NULL-name-terminated array);
 * positional arguments go to pos[0..max_pos). Returns -1 after printing
 * `help` for --help (exit 0), CLI_USAGE after a usage error, or CLI_OK. */
int cli_parse(int argc, char **argv, const cli_opt *opts, const char **pos, int max_pos,
              int *n_pos, const char *help);

/* "[N, 1, 28, 28]": negative (symbolic) dims as "N". Returns buf. */
char *cli_shape(int ndim, const int64_t *shape, char *buf, size_t len);
/* "1.23 M" style abbreviation of a count. Returns buf. */
char *cli_human(int64_t n, char *buf, size_t len);
const char *cli_dtype_name(nc_dtype dt);
size_t cli_dtype_size(nc_dtype dt);

/* Options of `neuroc run` (shared by the ANN and SNN paths). */
typedef struct run_args {
    const char *model, *input, *output, *labels, *batch;
    int raw_input;
    /* spiking networks (.nir) */
    const char *timesteps, *backend, *record, *layer, *encoding, *seed, *nir_reset;
    int per_step;
} run_args;

/* The input samples in the model's dtype, reshaped: n samples of `per`
 * elements, each of shape sample[0..sample_ndim). */
typedef struct samples {
    nc_tensor *t; /* owns the data */
    int64_t n, per;
    int sample_ndim;
    int64_t sample[NC_MAX_DIMS];
} samples;

/* Loads --input; uint8 data becomes floats in [0,1] unless raw_input. `want`
 * is the dtype the model takes. */
int cli_load_input(const run_args *a, const nc_value_info *in, nc_tensor **out);
/* Views the data as samples of the model input's per-sample shape. */
int cli_fit_samples(const run_args *a, const nc_value_info *in, nc_tensor *t, samples *s);
/* Loads --labels and checks there is one per sample. */
int cli_check_labels(const run_args *a, int64_t n, nc_tensor **out);
/* Prints the argmax accuracy of y's rows against the labels. */
int cli_accuracy(const nc_tensor *y, const nc_tensor *labels);
/* 1 if the file starts with HDF5's signature (a .nir file). */
int cli_is_hdf5(const char *path);

/* The spiking-network (.nir) halves of `info` and `run` (cmd_snn.c). */
int cli_info_snn(const char *path);
int cli_run_snn(const run_args *a, int64_t batch);

#endif
