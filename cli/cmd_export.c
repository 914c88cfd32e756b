/* neuroc export: reads a .nir (neuroc's or another tool's) and writes it
 * again, strict (plain NIR only) or portable (nc_snn_make_portable). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char CMD_EXPORT_HELP[] =
    "usage: neuroc export IN.nir -o OUT.nir [--portable [--v0 drop|spread|pulse] [-T T] | --nir-strict]\n"
    "                     [--nir-reset M] [--nir-spike S] [--dt S] [--integration M]\n"
    "\n"
    "Reads a spiking network and writes it as NIR.\n"
    "\n"
    "  -o, --output F     the file written (complete or not at all)\n"
    "      --nir-strict   refuse what the standard graph (/node) would approximate\n"
    "      --portable     the portable form (implies --nir-strict): every IF becomes\n"
    "                     NIR's own (spike when v > θ⁻ = the float below θ, reset to 0,\n"
    "                     v(0) = 0), so that a tool following NIR's definitions runs\n"
    "                     what neuroc runs; reset to zero instead of by subtraction\n"
    "                     costs accuracy (docs/nir.md)\n"
    "      --v0 M         the old v(0): drop (default), spread (v(0)/T more bias a\n"
    "                     step, with -T) or pulse (a first-step current from a one-shot\n"
    "                     neuron that resets to v_reset = -1e30: exact where v_reset is\n"
    "                     honoured)\n"
    "  -T, --timesteps T  the T of --v0 spread\n"
    "      --threshold-scale S  portable thresholds times S in (0, 1] (the spikes still\n"
    "                     carry θ): makes up for part of the charge a reset to zero loses\n"
    "      --nir-reset, --nir-spike, --dt, --integration\n"
    "                     how IN.nir is read when another tool wrote it (see run)\n";

int cmd_export(int argc, char **argv)
{
    const char *output = NULL, *v0 = NULL, *T = NULL, *scale = NULL;
    int strict = 0, portable = 0;
    cli_nir_opts nir = {0};
    cli_opt opts[] = {
        {"--output", "-o", &output, NULL},        {"--nir-strict", NULL, NULL, &strict},
        {"--portable", NULL, NULL, &portable},    {"--v0", NULL, &v0, NULL},
        {"--timesteps", "-T", &T, NULL},          {"--threshold-scale", NULL, &scale, NULL},
        CLI_NIR_OPT_ROWS(nir),                    {NULL, NULL, NULL, NULL},
    };
    const cli_frame frame = {.cmd = "export", .help = CMD_EXPORT_HELP, .opts = opts, .nir_out_flag = "-o",
                             .nir_out = &output, .one_arg = "expected one .nir file",
                             .required = {{&output, "-o OUT.nir is required"}}};
    const char *path;
    int rc;
    if (!cli_frame_parse(&frame, argc, argv, &path, &rc))
        return rc;
    nc_portable_options po = {0};
    if ((rc = cli_portable_options("export", portable, v0, T, scale, &po)) != CLI_OK)
        return rc;
    nc_nir_options nopt;
    if ((rc = cli_nir_options("export", &nir, &nopt)) != CLI_OK)
        return rc;
    nc_snn *s = NULL;
    nc_status st = nc_snn_load_nir(path, &nopt, &s);
    if (st != NC_OK)
        return cli_fail(st);
    if (portable) {
        nc_snn *p = NULL;
        int pulses = 0;
        st = nc_snn_make_portable(s, &po, &p, &pulses);
        nc_snn_free(s);
        if (st != NC_OK)
            return cli_fail(st);
        s = p;
        printf("portable: NIR's IF (v > θ⁻, reset to 0, v(0) = 0), v(0) %s (%d layers)\n",
               po.v0 == NC_PORTABLE_V0_PULSE ? "fed by a first-step pulse" : po.v0 ? "spread over T steps" : "dropped",
               po.v0 ? pulses : 0);
    }
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    so.strict = strict || portable;
    st = nc_snn_save_nir_with(s, output, &so);
    nc_snn_free(s);
    if (st != NC_OK)
        return cli_fail(st);
    printf("wrote %s\n", output);
    cli_print_nir_graphs(output);
    return CLI_OK;
}
