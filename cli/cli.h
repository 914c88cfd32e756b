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
int cmd_convert(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_finetune(int argc, char **argv);
int cmd_export(int argc, char **argv);
extern const char CMD_INFO_HELP[];
extern const char CMD_RUN_HELP[];
extern const char CMD_CONVERT_HELP[];
extern const char CMD_EVAL_HELP[];
extern const char CMD_SIM_HELP[];
extern const char CMD_BENCH_HELP[];
extern const char CMD_FINETUNE_HELP[];
extern const char CMD_EXPORT_HELP[];

/* Exit codes: 0 success, 1 failure, 2 bad command line. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* Prints "neuroc: <status>: <nc_last_error()>" and returns CLI_FAIL. */
int cli_fail(nc_status st);
/* Same, with the CLI's own message (for checks the CLI makes itself). */
int cli_failf(nc_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "neuroc <cmd>: <message>" and a hint, returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "-" names standard output for the outputs that can go there (a .npy, a
 * JSON report). cli_stdout_for_data makes standard output carry that data
 * alone: call it before printing anything; what the command prints for a
 * person then goes to stderr. */
int cli_is_stdout(const char *path);
int cli_stdout_for_data(void);
/* A usage error when path is "-" for a .nir output (flag: the option). */
int cli_refuse_stdout(const char *cmd, const char *flag, const char *path);
/* nc_npy_save, or the .npy on standard output for "-". */
nc_status cli_save_npy(const char *path, const nc_tensor *t);
int cli_write_stdout(const char *text, size_t len);

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

/* The frame of a command: cli_parse, then "-" refused for a .nir output,
 * standard output given to a data output named "-", exactly one positional
 * argument (the model), and the options it requires, checked in that order
 * so that each command says the same thing for the same slip. */
typedef struct cli_required {
    const char *const *value; /* the option's value: missing when NULL */
    const char *message;      /* the usage error then; NULL ends the list */
} cli_required;
typedef struct cli_frame {
    const char *cmd, *help;
    const cli_opt *opts;
    const char *one_arg;                        /* the usage error unless one positional argument */
    const char *nir_out_flag;                   /* "-o" */
    const char *const *nir_out;                 /* a .nir output (NULL: none) */
    const char *const *data_out;                /* an output that may be "-" (NULL: none) */
    cli_required required[6];
} cli_frame;
/* 1 with *model set: go on. 0: return *exit_code (after --help, CLI_OK). */
int cli_frame_parse(const cli_frame *f, int argc, char **argv, const char **model, int *exit_code);

/* "[N, 1, 28, 28]": negative (symbolic) dims as "N". Returns buf. */
char *cli_shape(int ndim, const int64_t *shape, char *buf, size_t len);
/* A layer's kind as the tables show it: its kind name, with a Nonlinear
 * layer's function ("Nonlinear SiLU") and "two-sided" after a two-sided
 * SignedIF. Returns buf. */
char *cli_kind_label(const nc_snn_layer_info *L, char *buf, size_t len);
/* "1.23 M" style abbreviation of a count. Returns buf. */
char *cli_human(int64_t n, char *buf, size_t len);
const char *cli_dtype_name(nc_dtype dt);
/* "4G", "512M", "64K", "1000" (powers of 1024) into *out; 0 if malformed. */
int cli_parse_bytes(const char *s, int64_t *out);
size_t cli_dtype_size(nc_dtype dt);

/* How a .nir file of another tool is read (cli/nir_opts.c): the strings
 * of --nir-reset, --nir-spike, --dt and --integration. */
typedef struct cli_nir_opts {
    const char *reset, *spike, *dt, *integration;
} cli_nir_opts;
#define CLI_NIR_OPT_ROWS(n)                                                                                     \
    {"--nir-reset", NULL, &(n).reset, NULL}, {"--nir-spike", NULL, &(n).spike, NULL},                           \
        {"--dt", NULL, &(n).dt, NULL}, {"--integration", NULL, &(n).integration, NULL}
/* Parses them into *o (nc_nir_options_init first); CLI_OK or a usage error. */
int cli_nir_options(const char *cmd, const cli_nir_opts *n, nc_nir_options *o);
/* 1 if any was given. */
int cli_nir_given(const cli_nir_opts *n);
/* --portable's --v0 drop|spread|pulse and -T into *o. */
int cli_portable_options(const char *cmd, int portable, const char *v0, const char *T, const char *scale,
                         nc_portable_options *o);
/* "neuron semantics:" and a line per neuron layer (what the reader chose). */
void cli_print_nir_semantics(const nc_snn *s);
/* Which graph of the .nir file at path neuroc reads, which other tools
 * read, and what the standard one loses (nc_nir_file_info_read). */
void cli_print_nir_graphs(const char *path);
/* The conversion report `json` (an object) with "nir_standard_graph": which
 * graph of the .nir at nir_path neuroc reads and the standard graph's loss
 * lines, as a new string (free()); NULL out of memory. */
char *cli_report_with_nir(const char *json, const char *nir_path);

/* Options of `neuroc run` (shared by the ANN and SNN paths). */
typedef struct run_args {
    const char *model, *input, *output, *labels, *batch;
    int raw_input;                /* --raw-input or --no-scale */
    const char *mean, *std;       /* --mean / --std (data_opts.c) */
    /* spiking networks (.nir) */
    const char *timesteps, *backend, *record, *layer, *encoding, *seed;
    cli_nir_opts nir;             /* --nir-reset, --nir-spike, --dt, --integration */
    int per_step;
    const char *cuda_strategy, *cuda_threshold, *cuda_precision; /* the cuda backend's options */
    int verbose;                  /* the library's notes (e.g. cuda's strategy per layer) on stderr */
    int rate_limit;               /* --rate-limit: nc_snn_rate_limit instead of T steps */
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
/* Loads --labels and checks there is one per sample, each a class of the
 * output's (classes <= 0: not known before the run). */
int cli_check_labels(const run_args *a, int64_t n, int64_t classes, nc_tensor **out);
/* Prints the argmax accuracy of y's rows against the labels (from file
 * labels_path, named when a label is beyond the output's classes). */
int cli_accuracy(const nc_tensor *y, const nc_tensor *labels, const char *labels_path);
/* A whole number in [lo, hi] from s into *out (dflt when s is NULL); 0 if s is not one. */
int cli_parse_ll(const char *s, long long lo, long long hi, long long dflt, long long *out);
/* A finite number in [lo, 1e30] from s into *out; 0 if s is not one. */
int cli_parse_float(const char *s, double lo, float *out);
/* The spiking network's input as a model input description, batch first (-1). */
void cli_snn_input_info(const nc_snn *s, nc_value_info *in);
/* s (NULL = dflt) as the index of one of n names into *out; otherwise a usage
 * error "OPT must be a, b or c, not 's'" (exit 2). */
int cli_parse_choice(const char *cmd, const char *opt, const char *s, const char *const *names,
                     int n, int dflt, int *out);
/* --encoding direct|poisson and the reset options subtract|zero. */
int cli_parse_encoding(const char *cmd, const char *s, nc_encoding *out);
int cli_parse_reset(const char *cmd, const char *opt, const char *s, nc_reset_mode *out);
/* 1 if the file is to be read as a spiking network (NIR, HDF5): it starts
 * with HDF5's signature, or its name ends in .nir, so that a damaged .nir is
 * reported by the NIR reader as a bad NIR file, not as a bad ONNX model. */
int cli_is_nir(const char *path);
/* CLI_OK if `path` is a file that holds a spiking network (.nir, HDF5);
 * else prints why (a missing file, a directory: exit 1; an ONNX model: a
 * usage error) and returns the exit status. */
int cli_need_nir(const char *cmd, const char *path);

/* ---- data options shared by convert, eval and run (data_opts.c) */

typedef struct data_opts {
    int no_scale;              /* --no-scale (= run's --raw-input): uint8 stays 0..255 */
    const char *mean, *std;    /* --mean m1,m2,... --std s1,s2,...: one value or one per channel */
} data_opts;
#define CLI_DATA_OPTS(d)                                                                      \
    {"--no-scale", NULL, NULL, &(d).no_scale}, {"--raw-input", NULL, NULL, &(d).no_scale},    \
        {"--mean", NULL, &(d).mean, NULL}, {"--std", NULL, &(d).std, NULL}
#define CLI_DATA_OPTS_HELP                                                                    \
    "      --no-scale     keep uint8 data as 0..255 (by default it is scaled into\n"         \
    "                     [0,1], as torchvision's ToTensor does); --raw-input is\n"          \
    "                     the same\n"                                                         \
    "      --mean M1,M2,.. --std S1,S2,..\n"                                                  \
    "                     normalise each channel (dimension 1 of the model input)\n"         \
    "                     after scaling: x = (x - mean) / std; one value or one\n"           \
    "                     per channel\n"

/* Usage error (exit 2) on --mean/--std text that is not a list of numbers. */
int cli_data_opts_check(const char *cmd, const data_opts *d);
/* Applies --mean/--std in place; channel = dimension 1 of the model input `in`. */
int cli_normalize(const char *cmd, const data_opts *d, const nc_value_info *in, nc_tensor *t);
/* raw (uint8, int64 or float32 data; taken) as float32: uint8 scaled by
 * 1/255 (torchvision's ToTensor) unless no_scale, integers as they are. */
nc_status cli_to_f32(nc_tensor *raw, int no_scale, nc_tensor **out);
/* Loads a data file (npy, IDX, file.h5:/dataset) as float32 rows of model
 * input `in`: uint8 scaled unless no_scale, integers converted, normalised,
 * then reshaped to the input's per-sample shape where the number of values
 * per sample agrees ([N,28,28] -> [N,1,28,28]); else a shape error naming
 * the file. */
int cli_load_data(const char *cmd, const char *path, const data_opts *d, const nc_value_info *in,
                  nc_tensor **out);
/* Keeps the first n rows (no-op when there are not more). */
int cli_take_rows(nc_tensor **t, int64_t n);
/* Integer labels (npy or IDX); n >= 0: there must be n of them; each in
 * 0 .. classes - 1 (classes <= 0: not known yet, only >= 0 is checked).
 * Every command checks labels here, so each error names the labels file. */
int cli_load_labels(const char *path, int64_t n, const char *data_path, int64_t classes, nc_tensor **out);
int cli_check_label_range(const nc_tensor *labels, int64_t classes, const char *path);
/* The classes of a network's output (its per-sample size), 0 when unknown. */
int64_t cli_snn_classes(const nc_snn *s);
int64_t cli_model_classes(const nc_model *m);
/* FNV-1a (64 bits) of a file's bytes; 0 with *ok = 0 when it cannot be read. */
unsigned long long cli_file_fnv1a(const char *path, int *ok);
/* Writes text (plus a final newline) to a temporary file, then renames it. */
int cli_write_text(const char *path, const char *text);

/* ---- progress on stderr when it is a terminal (progress.c) */

typedef struct cli_progress {
    int on, drawn;
    char what[48];
    double t0, last;
    int64_t done;
} cli_progress;
void cli_progress_init(cli_progress *p);
/* Seconds on a monotonic clock. */
double cli_now_s(void);
/* An nc_progress_fn: `user` is a cli_progress. */
void cli_progress_cb(const char *what, int64_t done, int64_t total, void *user);
/* Ends a bar that is still drawn (before printing anything else). */
void cli_progress_end(cli_progress *p);

/* ---- running under mpirun (cli_dist.c)
 * In an MPI build, a program started by an MPI launcher (mpirun, mpiexec,
 * srun with PMI/PMIx) loads its MPI module (cli/mpi/cli_mpi.h; the program
 * links no MPI) and joins MPI_COMM_WORLD; a module that cannot be loaded
 * ends every rank with one line on stderr and CLI_FAIL. Otherwise, and in
 * a build without MPI, it is one process, loads no MPI and these are
 * no-ops. Rank 0 prints and writes files; the other ranks' stdout goes to
 * /dev/null (stderr stays). */
void cli_dist_init(int *argc, char ***argv);
/* Ends MPI and returns the exit code. A rank that fails waits up to 10 s
 * for the others to end too (a failure every rank saw), then aborts the
 * job, so one rank's error never leaves the others waiting. */
int cli_dist_finish(int rc);
/* The group for the library's options (NULL for one process). */
const nc_dist *cli_dist(void);
/* 1 on the rank that prints and writes (rank 0, or a single process). */
int cli_is_root(void);
/* Collective: a usage or load error on one rank becomes CLI_FAIL on all
 * (rank 0 says which rank failed); returns rc on a rank that failed. */
int cli_dist_agree(int rc);
/* Collective: CLI_OK if `path` has the same bytes on every rank, else a
 * clear error from rank 0 naming the rank and file, CLI_FAIL everywhere. */
int cli_dist_same_file(const char *what, const char *path);
/* The "(N ranks)" note of the commands' banners; "" for one process. */
const char *cli_dist_note(void);

/* ---- conversion options shared by convert, eval and bench (convert_opts.c) */

typedef struct convert_args {
    const char *calib, *timesteps, *levels, *threshold, *calib_samples, *reset, *v0, *maxpool;
    const char *qcfs_epochs, *lr, *qcfs_batch, *seed, *correction_rounds, *burst;
    int per_channel, count_zeros, binary_spikes, bias_correction, potential_correction, signed_spikes, plain_spikes;
    int graded_nonlinear;
    const char *target_loss, *target_max_t, *holdout;
    int keep_avgpool;
} convert_args;
/* The options both commands spell the same way. */
#define CLI_CONVERT_OPTS(c)                                                                       \
    {"--levels", NULL, &(c).levels, NULL}, {"--threshold", NULL, &(c).threshold, NULL},          \
        {"--per-channel", NULL, NULL, &(c).per_channel},                                           \
        {"--count-zeros", NULL, NULL, &(c).count_zeros},                                           \
        {"--calib-samples", NULL, &(c).calib_samples, NULL}, {"--reset", NULL, &(c).reset, NULL}, \
        {"--v0", NULL, &(c).v0, NULL}, {"--binary-spikes", NULL, NULL, &(c).binary_spikes},        \
        {"--maxpool", NULL, &(c).maxpool, NULL}, {"--qcfs-epochs", NULL, &(c).qcfs_epochs, NULL},  \
        {"--lr", NULL, &(c).lr, NULL}, {"--seed", NULL, &(c).seed, NULL},                          \
        {"--bias-correction", NULL, NULL, &(c).bias_correction},                                   \
        {"--potential-correction", NULL, NULL, &(c).potential_correction},                         \
        {"--correction-rounds", NULL, &(c).correction_rounds, NULL},                               \
        {"--signed-spikes", NULL, NULL, &(c).signed_spikes},                                       \
        {"--plain-spikes", NULL, NULL, &(c).plain_spikes}, {"--burst", NULL, &(c).burst, NULL},    \
        {"--graded-nonlinear", NULL, NULL, &(c).graded_nonlinear},                                 \
        {"--target-loss", NULL, &(c).target_loss, NULL},                                           \
        {"--target-max-T", NULL, &(c).target_max_t, NULL}, {"--holdout", NULL, &(c).holdout, NULL}, \
        {"--keep-avgpool", NULL, NULL, &(c).keep_avgpool}
/* Fills *o from the arguments; a usage error (exit 2) names the bad one. */
int cli_convert_options(const char *cmd, const convert_args *a, nc_convert_options *o);
/* 1 if any conversion option was given (calib and seed aside). */
int cli_convert_args_given(const convert_args *a);
/* The operating point line (--target-loss), when the conversion searched one. */
void cli_print_operating_point(const nc_convert_report *r);
/* Prints what conversion made: layers, thresholds, warnings. */
void cli_print_conversion(const char *model, const nc_snn *s, const nc_convert_report *r);

/* The spiking-network (.nir) halves of `info` and `run` (run_info_nir.c). */
int cli_info_snn(const char *path, const nc_nir_options *nopt);
int cli_run_snn(const run_args *a, int64_t batch);

#endif
