/* neuroc: command dispatch, --help and --version. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_command COMMANDS[] = {
    {"info", "show a model's layers, shapes, parameters and MACs", CMD_INFO_HELP, cmd_info},
    {"run", "run a model's ANN forward pass on data (npy or IDX files)", CMD_RUN_HELP, cmd_run},
    {"convert", "convert an ONNX ANN into a spiking network (.nir), calibrated on data",
     CMD_CONVERT_HELP, cmd_convert},
    {"eval", "SNN accuracy at every timestep vs the ANN, spike rates, synaptic ops, energy",
     CMD_EVAL_HELP, cmd_eval},
    {"sim", "a spiking network on a simulated Loihi chip: fixed-point accuracy, cores, energy",
     CMD_SIM_HELP, cmd_sim},
    {"bench", "images/s, synaptic events/s and memory of an SNN on each backend and batch size",
     CMD_BENCH_HELP, cmd_bench},
    {"finetune", "fine-tune a spiking network with BPTT and surrogate gradients, with checkpoints",
     CMD_FINETUNE_HELP, cmd_finetune},
    {"export", "rewrite a spiking network (.nir) as NIR: strict, or portable for other tools",
     CMD_EXPORT_HELP, cmd_export},
};
#define N_COMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

/* "backends: cpu (available), ..., cuda (unavailable: why)": whether each
 * can run here (loads the CUDA module and probes for a device). */
static void print_backends(void)
{
    printf("backends:");
    for (int i = 0; i < nc_backend_count(); i++) {
        nc_backend_info b;
        if (nc_backend_get_info(i, &b) != NC_OK)
            continue;
        printf("%s %s (%s%s%s)", i ? "," : "", b.name, b.available ? "available" : "unavailable",
               b.available ? "" : ": ", b.reason);
    }
    printf("\n");
}

static void usage(FILE *f)
{
    fputs("usage: neuroc [--max-tensor-size BYTES] [--no-isolate] <command> [options]\n"
          "       neuroc --help | --version\n"
          "\n"
          "Convert trained ANNs (ONNX) into spiking networks and run them.\n"
          "\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fputs("\n--max-tensor-size BYTES (e.g. 512M; default 4G) refuses any input file whose\n"
          "tensors, or the tensors a model computes, would be larger.\n"
          "HDF5 files (.nir, file.h5:/dataset) are first read in a child process, so that a\n"
          "corrupt file that crashes or stalls the HDF5 library fails with a message;\n"
          "--no-isolate reads them directly (trusted files, a little faster).\n"
          "\nRun 'neuroc <command> --help' for a command's options.\n"
          "Exit status: 0 success, 1 failure, 2 bad command line.\n",
          f);
}

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(COMMANDS[i].name, name) == 0)
            return &COMMANDS[i];
    return NULL;
}

/* Interrupted: delete the half-written outputs, then die of the signal. */
static void on_signal(int sig)
{
    nc_remove_temp_files();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}

static int dispatch(int argc, char **argv)
{
    catch_signals();
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    /* HDF5 files (.nir, file.h5:/x) are read in a child process first, so a
     * corrupt one that crashes HDF5 is an error message, not a crash */
    nc_limits lim;
    nc_limits_current(&lim);
    lim.isolate_hdf5 = 1;
    /* Options before the command apply to every command: the input limits. */
    for (;;) {
        if (argc > 2 && strcmp(argv[1], "--max-tensor-size") == 0) {
            if (!cli_parse_bytes(argv[2], &lim.max_tensor_bytes))
                return cli_usage_error(NULL, "--max-tensor-size wants bytes such as 4G or 512M, not '%s'",
                                       argv[2]);
            argc -= 2;
            argv += 2;
        } else if (argc > 1 && strcmp(argv[1], "--no-isolate") == 0) {
            lim.isolate_hdf5 = 0;
            argc--;
            argv++;
        } else {
            break;
        }
    }
    nc_set_limits(&lim);
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *a = argv[1];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
        printf("neuroc %s\nfeatures: %s\n", nc_version(), nc_build_features());
        print_backends();
        return CLI_OK;
    }
    if (strcmp(a, "help") == 0) {
        const cli_command *c = argc > 2 ? find_command(argv[2]) : NULL;
        if (argc > 2 && !c)
            return cli_usage_error(NULL, "unknown command '%s'", argv[2]);
        if (c)
            fputs(c->help, stdout);
        else
            usage(stdout);
        return CLI_OK;
    }
    if (a[0] == '-') {
        fprintf(stderr, "neuroc: unknown option '%s'\n\n", a);
        usage(stderr);
        return CLI_USAGE;
    }
    const cli_command *c = find_command(a);
    if (!c) {
        fprintf(stderr, "neuroc: unknown command '%s'\n\n", a);
        usage(stderr);
        return CLI_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}

/* The library's warnings (a file of a newer format version, ...); commands
 * that want its notes too set their own callback. */
static void warn_cb(nc_log_level level, const char *msg, void *user)
{
    (void)user;
    if (level <= NC_LOG_WARN)
        fprintf(stderr, "neuroc: warning: %s\n", msg);
}

int main(int argc, char **argv)
{
    nc_set_log_callback(warn_cb, NULL);
    /* under mpirun every rank runs the same command on its share */
    cli_dist_init(&argc, &argv);
    return cli_dist_finish(dispatch(argc, argv));
}
