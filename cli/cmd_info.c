/* neuroc info: the layer table of a model, its totals, inputs and outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char CMD_INFO_HELP[] =
    "usage: neuroc info MODEL.onnx|MODEL.nir\n"
    "\n"
    "Shows the model's layers (index, name, op, input -> output shape, parameters,\n"
    "multiply-accumulates), the totals, and the graph inputs and outputs.\n"
    "Layer shapes are for a batch of one (or the model's fixed batch); in the\n"
    "input/output list a symbolic dimension is shown as N.\n"
    "A model with ops neuroc cannot run is still described: those layers are\n"
    "marked with *, shapes after them show as ? when unknown, and a note lists\n"
    "them (neuroc run and convert refuse such a model).\n"
    "For a spiking network (.nir): its layers (kind, inputs, per-sample shape,\n"
    "parameters, neurons), which layer is the output, and the semantics each\n"
    "neuron layer runs with (for another tool's file, as the options below choose).\n"
    "\n";

#define NAME_MAX_SHOWN 40

typedef struct row {
    char idx[24], name[NAME_MAX_SHOWN + 4], op[32], shapes[2 * 200 + 8], params[24], macs[24];
} row;

static void clip_copy(char *dst, size_t cap, const char *src, size_t max_shown)
{
    size_t n = strlen(src ? src : "");
    if (n > max_shown)
        snprintf(dst, cap, "%.*s...", (int)(max_shown - 3), src);
    else
        snprintf(dst, cap, "%s", src ? src : "");
}

static void widen(int *w, const char *s)
{
    int n = (int)strlen(s);
    if (n > *w)
        *w = n;
}

static int print_values(const nc_model *m, int inputs)
{
    size_t n = inputs ? nc_model_num_inputs(m) : nc_model_num_outputs(m);
    printf("%s:\n", inputs ? "inputs" : "outputs");
    for (size_t i = 0; i < n; i++) {
        nc_value_info v;
        nc_status st = inputs ? nc_model_input(m, i, &v) : nc_model_output(m, i, &v);
        if (st != NC_OK)
            return cli_fail(st);
        char sb[200];
        printf("  %-20s %-8s %s\n", v.name ? v.name : "?", cli_dtype_name(v.dtype),
               cli_shape(v.ndim, v.shape, sb, sizeof sb));
    }
    return CLI_OK;
}

int cmd_info(int argc, char **argv)
{
    cli_nir_opts nir = {0};
    cli_opt opts[] = {CLI_NIR_OPT_ROWS(nir), {NULL, NULL, NULL, NULL}};
    const cli_frame frame = {.cmd = "info", .help = CMD_INFO_HELP, .opts = opts, .one_arg = "expected one model file"};
    const char *path;
    int rc;
    if (!cli_frame_parse(&frame, argc, argv, &path, &rc))
        return rc;

    if (cli_is_nir(path)) {
        nc_nir_options nopt;
        if ((rc = cli_nir_options("info", &nir, &nopt)) != CLI_OK)
            return rc;
        return cli_info_snn(path, &nopt);
    }
    if (cli_nir_given(&nir))
        return cli_usage_error("info", "--nir-reset, --nir-spike, --dt and --integration apply to .nir files");
    nc_model *m = NULL;
    nc_load_options lo;
    nc_load_options_init(&lo);
    lo.describe_only = 1; /* describe what parses, even ops the oracle cannot run */
    nc_status st = nc_model_load_onnx(path, &lo, &m);
    if (st != NC_OK)
        return cli_fail(st);

    size_t n = nc_model_num_layers(m);
    row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows) {
        nc_model_free(m);
        return cli_failf(NC_ERR_NOMEM, "out of memory");
    }
    int64_t total_params = 0, total_macs = 0;
    int n_unsupported = 0;
    int w[6] = {1, 4, 2, 14, 6, 4}; /* header widths: #, name, op, shapes, params, MACs */
    for (size_t i = 0; i < n; i++) {
        nc_layer_info L;
        if ((st = nc_model_layer(m, i, &L)) != NC_OK) {
            free(rows);
            nc_model_free(m);
            return cli_fail(st);
        }
        row *r = &rows[i];
        char a[200], b[200];
        snprintf(r->idx, sizeof r->idx, "%zu", i);
        clip_copy(r->name, sizeof r->name, L.name, NAME_MAX_SHOWN);
        clip_copy(r->op, sizeof r->op, L.op, sizeof r->op - 2);
        if (!L.supported) {
            strcat(r->op, "*");
            n_unsupported++;
        }
        snprintf(r->shapes, sizeof r->shapes, "%s -> %s",
                 L.in_ndim < 0 ? "?" : cli_shape(L.in_ndim, L.in_shape, a, sizeof a),
                 L.out_ndim < 0 ? "?" : cli_shape(L.out_ndim, L.out_shape, b, sizeof b));
        snprintf(r->params, sizeof r->params, "%lld", (long long)L.params);
        snprintf(r->macs, sizeof r->macs, "%lld", (long long)L.macs);
        total_params += L.params;
        total_macs += L.macs;
        widen(&w[0], r->idx);
        widen(&w[1], r->name);
        widen(&w[2], r->op);
        widen(&w[3], r->shapes);
        widen(&w[4], r->params);
        widen(&w[5], r->macs);
    }

    printf("model: %s\n\n", path);
    printf("%*s  %-*s  %-*s  %-*s  %*s  %*s\n", w[0], "#", w[1], "name", w[2], "op", w[3],
           "input -> output", w[4], "params", w[5], "MACs");
    for (size_t i = 0; i < n; i++) {
        row *r = &rows[i];
        printf("%*s  %-*s  %-*s  %-*s  %*s  %*s\n", w[0], r->idx, w[1], r->name, w[2], r->op, w[3],
               r->shapes, w[4], r->params, w[5], r->macs);
    }
    char hp[32], hm[32];
    printf("\ntotal: %zu layers, %lld params (%s), %lld MACs (%s) per sample\n\n", n,
           (long long)total_params, cli_human(total_params, hp, sizeof hp), (long long)total_macs,
           cli_human(total_macs, hm, sizeof hm));
    if (n_unsupported) {
        printf("* %d layer(s) of ops neuroc cannot run:", n_unsupported);
        for (size_t i = 0; i < n; i++) {
            nc_layer_info L;
            if (nc_model_layer(m, (int)i, &L) == NC_OK && !L.supported)
                printf(" %s '%s'", L.op, L.name);
        }
        printf("\n  (neuroc run and neuroc convert refuse this model)\n\n");
    }
    free(rows);
    rc = print_values(m, 1);
    if (rc == CLI_OK)
        rc = print_values(m, 0);
    nc_model_free(m);
    return rc;
}
