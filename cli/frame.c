/* The frame every command starts in: parse, standard output, the one model
 * argument, the options it cannot do without (cli.h: cli_frame). */
#include "cli.h"

int cli_frame_parse(const cli_frame *f, int argc, char **argv, const char **model, int *exit_code)
{
    const char *pos[1];
    int n_pos = 0;
    int rc = cli_parse(argc, argv, f->opts, pos, 1, &n_pos, f->help);
    if (rc == CLI_OK && f->nir_out)
        rc = cli_refuse_stdout(f->cmd, f->nir_out_flag, *f->nir_out);
    if (rc == CLI_OK && f->data_out && cli_is_stdout(*f->data_out))
        rc = cli_stdout_for_data();
    if (rc == CLI_OK && n_pos != 1)
        rc = cli_usage_error(f->cmd, "%s", f->one_arg);
    for (const cli_required *r = f->required; rc == CLI_OK && r->message; r++)
        if (!*r->value)
            rc = cli_usage_error(f->cmd, "%s", r->message);
    *exit_code = rc < 0 ? CLI_OK : rc; /* -1: --help was printed */
    if (rc != CLI_OK)
        return 0;
    *model = pos[0];
    return 1;
}
