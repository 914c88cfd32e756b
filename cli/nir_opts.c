/* The options every command that loads a .nir file shares: how neuroc
 * reads the neurons of another tool's NIR file (nc_nir_options), and the
 * line `neuroc info` and `run --verbose` print about the choice. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_nir_given(const cli_nir_opts *n)
{
    return n->reset || n->spike || n->dt || n->integration;
}

int cli_nir_options(const char *cmd, const cli_nir_opts *n, nc_nir_options *o)
{
    nc_nir_options_init(o);
    static const char *const resets[] = {"spec", "zero", "subtract", "subtract-snntorch"};
    static const nc_reset_mode modes[] = {NC_RESET_DEFAULT, NC_RESET_ZERO, NC_RESET_SUBTRACT, NC_RESET_SUBTRACT};
    static const char *const spikes[] = {"gt", ">", "ge", ">="};
    static const char *const integ[] = {"euler", "exact"};
    int v, rc;
    if ((rc = cli_parse_choice(cmd, "--nir-reset", n->reset, resets, 4, 0, &v)) != CLI_OK)
        return rc;
    o->reset = modes[v];
    o->snntorch_subtract = v == 3;
    if ((rc = cli_parse_choice(cmd, "--nir-spike", n->spike, spikes, 4, 0, &v)) != CLI_OK)
        return rc;
    o->spike = v < 2 ? NC_SPIKE_GT : NC_SPIKE_GE;
    if ((rc = cli_parse_choice(cmd, "--integration", n->integration, integ, 2, 0, &v)) != CLI_OK)
        return rc;
    o->integration = v ? NC_INTEGRATION_EXACT : NC_INTEGRATION_EULER;
    if (n->dt) {
        char *end;
        errno = 0;
        double dt = strtod(n->dt, &end);
        if (errno || *end || end == n->dt || !(dt > 0 && dt < 1e6))
            return cli_usage_error(cmd, "--dt must be a positive number of seconds, not '%s'", n->dt);
        o->dt = dt;
    }
    return CLI_OK;
}

int cli_portable_options(const char *cmd, int portable, const char *v0, const char *T, const char *scale,
                         nc_portable_options *o)
{
    static const char *const modes[] = {"drop", "spread", "pulse"};
    int v, rc;
    nc_portable_options_init(o);
    if (!portable && (v0 || T || scale))
        return cli_usage_error(cmd, "--v0 and -T go with --portable");
    if ((rc = cli_parse_choice(cmd, "--v0", v0, modes, 3, 0, &v)) != CLI_OK)
        return rc;
    o->v0 = v == 0 ? NC_PORTABLE_V0_DROP : v == 1 ? NC_PORTABLE_V0_SPREAD : NC_PORTABLE_V0_PULSE;
    long long t = 0;
    if (T && !cli_parse_ll(T, 1, 1 << 20, 0, &t))
        return cli_usage_error(cmd, "-T must be a whole number from 1 to 2^20, not '%s'", T);
    if ((o->v0 == NC_PORTABLE_V0_SPREAD) != (T != NULL))
        return cli_usage_error(cmd, "--v0 spread needs -T (and -T goes with --v0 spread)");
    o->timesteps = (int)t;
    if (scale) {
        char *end;
        errno = 0;
        double x = strtod(scale, &end);
        if (!portable || errno || *end || end == scale || !(x > 0 && x <= 1))
            return cli_usage_error(cmd, "--threshold-scale goes with --portable and is in (0, 1], not '%s'", scale);
        o->threshold_scale = (float)x;
    }
    return CLI_OK;
}

void cli_print_nir_semantics(const nc_snn *s)
{
    int n = nc_snn_num_layers(s), shown = 0;
    for (int i = 0; i < n; i++) {
        nc_snn_neuron_info ni;
        nc_snn_layer_info L;
        if (nc_snn_layer_at(s, i, &L) != NC_OK || nc_snn_neuron_at(s, i, &ni) != NC_OK)
            continue;
        if (!shown++)
            printf("\nneuron semantics:\n");
        char dt[48] = "";
        if (ni.dt > 0)
            snprintf(dt, sizeof dt, ", dt %g s, %s", ni.dt,
                     ni.integration == NC_INTEGRATION_EXACT ? "exact integration" : "forward Euler");
        const char *reset = ni.reset != NC_RESET_SUBTRACT ? (ni.has_v_reset ? "v = v_reset" : "v = 0")
                            : ni.snntorch_subtract ? "v -= θ (snntorch's test: m - θ > θ while v > θ)" : "v -= θ";
        if (L.kind == NC_SNN_LI || L.kind == NC_SNN_CUBALI || L.kind == NC_SNN_INTEGRATOR)
            printf("  %-24.24s  %-10s no spikes, outputs v%s%s\n", L.name, nc_snn_kind_name(L.kind), dt,
                   ni.limit_params ? ", tau = r = inf: v += I" : "");
        else if (L.kind == NC_SNN_THRESHOLD)
            printf("  %-24.24s  %-10s 1 where x %s θ\n", L.name, nc_snn_kind_name(L.kind), ni.spike_gt ? ">" : ">=");
        else
            printf("  %-24.24s  %-10s spike when v %s θ, then %s; v(0) = %s%s%s%s\n", L.name,
                   nc_snn_kind_name(L.kind), ni.spike_gt ? ">" : ">=", reset, ni.v_init_half ? "θ/2" : "as stored",
                   ni.has_r ? ", input resistance r" : "", dt, ni.limit_params ? ", tau = r = inf: v += I" : "");
    }
}

void cli_print_nir_graphs(const char *path)
{
    nc_nir_file_info info;
    if (nc_nir_file_info_read(path, &info) != NC_OK)
        return;
    if (info.exact_graph)
        printf("NIR graphs: neuroc reads its exact network (/neuroc/graph); other NIR tools read /node, its "
               "standard form\n");
    else if (info.neuroc_format && info.loss_known)
        printf("NIR graph: /node, standard NIR, read by neuroc and other NIR tools alike\n");
    else if (info.neuroc_format)
        printf("NIR graph: /node, written before neuroc wrote a standard graph (neuroc.<kind> nodes in it, if any, "
               "are for neuroc only; neuroc export rewrites it)\n");
    else
        printf("NIR graph: /node, another tool's file, read with NIR's semantics\n");
    if (info.loss_known && info.standard_loss[0]) {
        printf("what the standard graph (/node) loses:\n");
        for (const char *l = info.standard_loss; *l;) {
            const char *e = strchr(l, '\n');
            int n = e ? (int)(e - l) : (int)strlen(l);
            printf("  %.*s\n", n, l);
            l += n + (e != NULL);
        }
    } else if (info.exact_graph || info.loss_known) {
        printf("the standard graph (/node) loses nothing\n");
    }
}

/* Appends s to buf (at *len, capacity cap) as the inside of a JSON string. */
static void json_chars(char *buf, size_t *len, size_t cap, const char *s, size_t n)
{
    for (size_t k = 0; k < n && *len + 8 < cap; k++) {
        unsigned char c = (unsigned char)s[k];
        if (c == '"' || c == '\\')
            *len += (size_t)snprintf(buf + *len, cap - *len, "\\%c", c);
        else if (c < 0x20)
            *len += (size_t)snprintf(buf + *len, cap - *len, "\\u%04x", c);
        else
            buf[(*len)++] = (char)c;
    }
    buf[*len] = '\0';
}

char *cli_report_with_nir(const char *json, const char *nir_path)
{
    nc_nir_file_info info;
    const char *end = strrchr(json, '}');
    if (nc_nir_file_info_read(nir_path, &info) != NC_OK || !end)
        return strdup(json);
    size_t cap = strlen(json) + 2 * sizeof info.standard_loss + 256, len = (size_t)(end - json);
    char *out = malloc(cap);
    if (!out)
        return NULL;
    memcpy(out, json, len);
    while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' '))
        len--;
    len += (size_t)snprintf(out + len, cap - len, ",\n  \"nir_standard_graph\": {\"neuroc_reads\": \"%s\", \"loss\": [",
                            info.exact_graph ? "/neuroc/graph" : "/node");
    int first = 1;
    for (const char *l = info.standard_loss; *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        len += (size_t)snprintf(out + len, cap - len, "%s\"", first ? "" : ", ");
        json_chars(out, &len, cap, l, n);
        len += (size_t)snprintf(out + len, cap - len, "\"");
        first = 0;
        l += n + (e != NULL);
    }
    snprintf(out + len, cap - len, "]}\n}\n");
    return out;
}
