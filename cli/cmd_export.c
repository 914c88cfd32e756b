/* neuroc export: reads a .nir (neuroc's or another tool's) and writes it
 * again, strict (plain NIR only) or portable (nc_snn_make_portable). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char CMD_EXPORT_HELP[] =
    "usage: neuroc export IN.nir -o OUT.nir [--portable | --nir-strict] [--no-v0-pulse]\n"
    "                     [--nir-reset M] [--nir-spike S] [--dt S] [--integration M]\n"
    "\n"
    "Reads a spiking network and writes it as NIR.\n"
    "\n"
    "  -o, --output F     the file written (complete or not at all)\n"
    "      --nir-strict   only what NIR can express (refuses neuroc extension nodes)\n"
    "      --portable     the portable form (implies --nir-strict): every IF becomes\n"
    "                     NIR's own (spike when v > θ⁻ = the float below θ, reset to 0,\n"
    "                     v(0) = 0) with v(0) fed as a current in the first step from\n"
    "                     a one-shot pulse neuron, so that a tool following NIR's\n"
    "                     definitions runs what neuroc runs; reset to zero instead of\n"
    "                     by subtraction costs accuracy (README, NIR: portable export)\n"
    "      --no-v0-pulse  portable without the pulses: v(0) is dropped\n"
    "      --nir-reset, --nir-spike, --dt, --integration\n"
    "                     how IN.nir is read when another tool wrote it (see run)\n";

int cmd_export(int argc, char **argv)
{
    const char *pos[1], *output = NULL;
    int n_pos, strict = 0, portable = 0, no_pulse = 0;
    cli_nir_opts nir = {0};
    cli_opt opts[] = {
        {"--output", "-o", &output, NULL},        {"--nir-strict", NULL, NULL, &strict},
        {"--portable", NULL, NULL, &portable},    {"--no-v0-pulse", NULL, NULL, &no_pulse},
        CLI_NIR_OPT_ROWS(nir),                    {NULL, NULL, NULL, NULL},
    };
    int rc = cli_parse(argc, argv, opts, pos, 1, &n_pos, CMD_EXPORT_HELP);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    if (n_pos != 1)
        return cli_usage_error("export", "expected one .nir file");
    if (!output)
        return cli_usage_error("export", "-o OUT.nir is required");
    if (no_pulse && !portable)
        return cli_usage_error("export", "--no-v0-pulse goes with --portable");
    nc_nir_options nopt;
    if ((rc = cli_nir_options("export", &nir, &nopt)) != CLI_OK)
        return rc;
    nc_snn *s = NULL;
    nc_status st = nc_snn_load_nir(pos[0], &nopt, &s);
    if (st != NC_OK)
        return cli_fail(st);
    if (portable) {
        nc_portable_options po = {.no_v0_pulse = no_pulse};
        nc_snn *p = NULL;
        int pulses = 0;
        st = nc_snn_make_portable(s, &po, &p, &pulses);
        nc_snn_free(s);
        if (st != NC_OK)
            return cli_fail(st);
        s = p;
        printf("portable: NIR's IF (v > θ⁻, reset to 0, v(0) = 0), %d first-step v(0) pulses\n", pulses);
    }
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    so.strict = strict || portable;
    st = nc_snn_save_nir_with(s, output, &so);
    nc_snn_free(s);
    if (st != NC_OK)
        return cli_fail(st);
    printf("wrote %s\n", output);
    return CLI_OK;
}
