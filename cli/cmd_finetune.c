/* neuroc finetune: BPTT fine-tuning of a spiking network (.nir) with a
 * checkpoint after every epoch and --resume. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char CMD_FINETUNE_HELP[] =
    "usage: neuroc finetune MODEL.nir --train X --labels Y -o TUNED.nir [-T 4]\n"
    "                   [--epochs 3] [--lr 1e-4] [--batch 64] [--val X2 --val-labels Y2]\n"
    "                   [--max-memory 4G] [--surrogate triangle] [--seed S] [-j N]\n"
    "                   [--resume]\n"
    "                   [--no-scale] [--mean M1,.. --std S1,..]\n"
    "\n"
    "Fine-tunes a spiking network with backpropagation through time: the network\n"
    "runs T steps, the loss is the cross-entropy of the readout averaged over the\n"
    "steps, and the spike's derivative is replaced by a surrogate. Weights and\n"
    "biases (and with --train-thresholds the thresholds) are updated with Adam\n"
    "and a cosine learning-rate schedule over all epochs.\n"
    "\n"
    "After every epoch the network is written to OUT.ckpt.nir, the optimiser's\n"
    "moments to OUT.ckpt.optim.npy and the epoch, options and file hashes to\n"
    "OUT.ckpt.json; --resume continues from there with the next epoch, exactly\n"
    "as if the run had not stopped.\n"
    "One line per epoch on stdout: loss, accuracy, validation accuracy at T,\n"
    "samples/s and the time left.\n"
    "\n"
    "      --train X      training samples (.npy, IDX, or file.h5:/dataset)\n"
    "  -l, --labels Y     their integer labels (.npy or IDX)\n"
    "  -o, --output F     the fine-tuned network (.nir)\n"
    "      --nir-strict   refuse to write OUT if its standard NIR graph would\n"
    "                     approximate a layer (see neuroc convert)\n"
    "  -T, --timesteps T  steps per sample (default 4)\n"
    "      --epochs N     epochs (default 3)\n"
    "      --lr X         peak learning rate (default 1e-4)\n"
    "  -b, --batch B      mini-batch size (default 64)\n"
    "      --val X2 --val-labels Y2\n"
    "                     validation data, scored after every epoch\n"
    "      --max-memory M training memory budget (bytes, or with K/M/G): the\n"
    "                     batch is lowered until it fits; an error if one sample\n"
    "                     does not\n"
    "      --surrogate S  triangle (default), rectangle, sigmoid or atan\n"
    "      --surrogate-width W\n"
    "                     width as a fraction of each layer's threshold (default 1)\n"
    "      --detach-reset no gradient through the reset term\n"
    "      --energy-weight X  add X x (the spikes' energy / the ANN's on the same\n"
    "                     synapses) to the loss: fewer spikes for the accuracy\n"
    "                     (default 0)\n"
    "      --train-thresholds\n"
    "                     train the thresholds too\n"
    "      --optimizer O  adam (default) or sgd (momentum 0.9)\n"
    "      --weight-decay X  --grad-clip X\n"
    "      --seed S       shuffling seed (default 0)\n"
    "  -j, --threads N    threads for the element-wise layers (default 1; the\n"
    "                     results do not depend on it)\n"
    "      --resume       continue from the checkpoint (same options; --epochs\n"
    "                     may grow)\n" CLI_DATA_OPTS_HELP
    "\n"
    "Under mpirun (an MPI build) training is data parallel: --batch is per rank,\n"
    "gradients are summed across ranks, the learning rate is not scaled; rank 0\n"
    "writes the checkpoints and the output.\n"
    "\n"
    "Progress is shown on stderr when it is a terminal.\n";

typedef struct ft_args {
    const char *train, *labels, *output, *timesteps, *epochs, *lr, *batch, *val, *val_labels, *max_memory;
    const char *surrogate, *width, *optimizer, *weight_decay, *grad_clip, *seed, *threads, *energy_weight;
    int resume, detach_reset, train_thresholds, nir_strict;
} ft_args;

static const char *const SURROGATES[] = {"triangle", "rectangle", "sigmoid", "atan"};

/* Fills *o from the arguments; a usage error names the bad one. */
static int ft_options(const ft_args *a, nc_finetune_options *o)
{
    long long v;
    memset(o, 0, sizeof *o);
    o->timesteps = 4;
    o->epochs = 3;
    o->lr = 1e-4f;
    o->batch = 64;
    if (a->timesteps) {
        if (!cli_parse_ll(a->timesteps, 1, 100000, 0, &v))
            return cli_usage_error("finetune", "-T wants a number of steps 1..100000, not '%s'", a->timesteps);
        o->timesteps = (int)v;
    }
    if (a->epochs) {
        if (!cli_parse_ll(a->epochs, 1, 1000000, 0, &v))
            return cli_usage_error("finetune", "--epochs wants a positive number, not '%s'", a->epochs);
        o->epochs = (int)v;
    }
    if (a->batch) {
        if (!cli_parse_ll(a->batch, 1, 1 << 24, 0, &v))
            return cli_usage_error("finetune", "--batch wants a positive number, not '%s'", a->batch);
        o->batch = (int)v;
    }
    if (a->seed) {
        if (!cli_parse_ll(a->seed, 0, 0x7fffffffffffffffLL, 0, &v))
            return cli_usage_error("finetune", "--seed wants a non-negative integer, not '%s'", a->seed);
        o->seed = (uint64_t)v;
    }
    if (a->threads) {
        if (!cli_parse_ll(a->threads, 1, 1024, 0, &v))
            return cli_usage_error("finetune", "--threads wants a number 1..1024, not '%s'", a->threads);
        o->threads = (int)v;
    }
    if (a->lr && (!cli_parse_float(a->lr, 0.0, &o->lr) || !(o->lr > 0.0f)))
        return cli_usage_error("finetune", "--lr wants a positive number, not '%s'", a->lr);
    if (a->width && (!cli_parse_float(a->width, 0.0, &o->surrogate_width) || !(o->surrogate_width > 0.0f)))
        return cli_usage_error("finetune", "--surrogate-width wants a positive number, not '%s'", a->width);
    if (a->weight_decay && !cli_parse_float(a->weight_decay, 0.0, &o->weight_decay))
        return cli_usage_error("finetune", "--weight-decay wants a number >= 0, not '%s'", a->weight_decay);
    if (a->energy_weight && !cli_parse_float(a->energy_weight, 0.0, &o->energy_weight))
        return cli_usage_error("finetune", "--energy-weight wants a number >= 0, not '%s'", a->energy_weight);
    if (a->grad_clip && !cli_parse_float(a->grad_clip, 0.0, &o->grad_clip))
        return cli_usage_error("finetune", "--grad-clip wants a number >= 0, not '%s'", a->grad_clip);
    if (a->max_memory && !cli_parse_bytes(a->max_memory, &o->max_memory))
        return cli_usage_error("finetune", "--max-memory wants bytes such as 4G, 512M or 1000000, not '%s'",
                               a->max_memory);
    if (a->surrogate) {
        int k = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(a->surrogate, SURROGATES[i]) == 0)
                k = i;
        if (k < 0)
            return cli_usage_error("finetune", "--surrogate is triangle, rectangle, sigmoid or atan, not '%s'",
                                   a->surrogate);
        o->surrogate = (nc_surrogate_kind)k;
    }
    if (a->optimizer) {
        if (strcmp(a->optimizer, "adam") != 0 && strcmp(a->optimizer, "sgd") != 0)
            return cli_usage_error("finetune", "--optimizer is adam or sgd, not '%s'", a->optimizer);
        o->optimizer = strcmp(a->optimizer, "sgd") == 0 ? NC_OPTIMIZER_SGD : NC_OPTIMIZER_ADAM;
    }
    o->detach_reset = a->detach_reset;
    o->train_thresholds = a->train_thresholds;
    return CLI_OK;
}

typedef struct ft_state {
    const char *output;
    char *ckpt_nir, *ckpt_json, *ckpt_optim;
    const nc_finetune_options *o;
    cli_progress *prog;
    double elapsed;
    int epochs_run;
} ft_state;

static char *with_suffix(const char *path, const char *suffix)
{
    size_t a = strlen(path), b = strlen(suffix);
    char *p = malloc(a + b + 1);
    if (p) {
        memcpy(p, path, a);
        memcpy(p + a, suffix, b + 1);
    }
    return p;
}

/* Ties the checkpoint's JSON to the .nir and the optimiser state written with it. */
static unsigned long long file_fnv1a(const char *path)
{
    int ok;
    return cli_file_fnv1a(path, &ok);
}

/* The run's options as the checkpoint records them; --resume requires the
 * same (they decide the shuffles and the schedule). */
static void ckpt_options(const nc_finetune_options *o, char *buf, size_t n)
{
    snprintf(buf, n,
             "\"epochs\": %d, \"timesteps\": %d, \"lr\": %g, \"batch\": %d, \"seed\": %llu, \"surrogate\": \"%s\", "
             "\"surrogate_width\": %g, \"optimizer\": \"%s\", \"train_thresholds\": %d, \"detach_reset\": %d, "
             "\"energy_weight\": %g",
             o->epochs, o->timesteps, (double)o->lr, o->batch, (unsigned long long)o->seed,
             SURROGATES[o->surrogate], (double)(o->surrogate_width ? o->surrogate_width : 1.0f),
             o->optimizer == NC_OPTIMIZER_SGD ? "sgd" : "adam", o->train_thresholds, o->detach_reset,
             (double)o->energy_weight);
}

/* Writes the optimiser state, then the network, then the JSON that names
 * both by hash: each file is renamed into place whole, and a JSON that does
 * not match its files shows an interrupted checkpoint. */
static nc_status on_epoch(const nc_snn *s, const nc_finetune_epoch *e, void *user)
{
    ft_state *f = user;
    cli_progress_end(f->prog);
    f->elapsed += e->seconds;
    f->epochs_run++;
    double left = f->elapsed / f->epochs_run * (e->epochs - e->epoch);
    char val[32] = "";
    if (e->val_accuracy >= 0.0)
        snprintf(val, sizeof val, "  val %.2f%%", 100.0 * e->val_accuracy);
    printf("epoch %d/%d  loss %.4f  acc %.2f%%%s  batch %d  %.0f samples/s  %.2f s  left %.0f s\n", e->epoch,
           e->epochs, e->loss, 100.0 * e->accuracy, val, e->batch,
           e->seconds > 0 ? (double)e->samples / e->seconds : 0.0, e->seconds, left);
    fflush(stdout);
    if (!cli_is_root()) /* under mpirun every rank holds the same weights; rank 0 writes them */
        return NC_OK;
    nc_status st;
    if ((st = nc_npy_save(f->ckpt_optim, e->optimizer_state)) != NC_OK ||
        (st = nc_snn_save_nir(s, f->ckpt_nir)) != NC_OK)
        return st;
    char opts[512], json[1024];
    ckpt_options(f->o, opts, sizeof opts);
    snprintf(json, sizeof json,
             "{\"epoch\": %d, %s, \"optimizer_steps\": %lld, \"nir_fnv1a\": \"%016llx\", "
             "\"optimizer_fnv1a\": \"%016llx\", \"loss\": %.6f, \"accuracy\": %.6f, \"val_accuracy\": %.6f}",
             e->epoch, opts, (long long)e->optimizer_steps, (unsigned long long)file_fnv1a(f->ckpt_nir),
             (unsigned long long)file_fnv1a(f->ckpt_optim), e->loss, e->accuracy, e->val_accuracy);
    return cli_write_text(f->ckpt_json, json) == CLI_OK ? NC_OK : NC_ERR_IO;
}

/* The text after `"key": ` in a checkpoint's JSON, or NULL. */
static const char *json_value(const char *json, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\": ", key);
    const char *p = strstr(json, k);
    return p ? p + strlen(k) : NULL;
}

/* What --resume needs from a checkpoint: its epoch and optimiser step count,
 * after checking that it belongs to this run and that its files are whole.
 * CLI_OK, or the exit status with the message printed. */
static int read_checkpoint(const ft_state *f, int *epoch, int64_t *steps)
{
    FILE *fp = fopen(f->ckpt_json, "rb");
    if (!fp)
        return cli_failf(NC_ERR_IO, "--resume: cannot open %s: %s", f->ckpt_json, strerror(errno));
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    const char *ep = json_value(buf, "epoch"), *sp = json_value(buf, "optimizer_steps");
    long long e, t;
    char num[32];
    if (!ep || sscanf(ep, "%31[0-9]", num) != 1 || !cli_parse_ll(num, 1, 1000000, 0, &e) || !sp ||
        sscanf(sp, "%31[0-9]", num) != 1 || !cli_parse_ll(num, 0, 0x7fffffffffffffffLL, 0, &t))
        return cli_failf(NC_ERR_PARSE, "--resume: %s does not record an epoch and optimiser steps", f->ckpt_json);
    char opts[512];
    ckpt_options(f->o, opts, sizeof opts);
    /* every recorded option but the epoch count must match this command line */
    const char *mine = strstr(opts, "\"timesteps\""), *theirs = strstr(buf, "\"timesteps\"");
    if (!theirs || strncmp(theirs, mine, strlen(mine)) != 0)
        return cli_failf(NC_ERR_INVALID_ARG,
                         "--resume: %s was written with other options (%.300s); resume with the same T, lr, batch, "
                         "seed, surrogate and optimiser options",
                         f->ckpt_json, buf);
    const char *fields[2] = {"nir_fnv1a", "optimizer_fnv1a"};
    const char *files[2] = {f->ckpt_nir, f->ckpt_optim};
    for (int i = 0; i < 2; i++) {
        const char *h = json_value(buf, fields[i]);
        unsigned long long want;
        if (!h || sscanf(h, "\"%16llx\"", &want) != 1 || want != file_fnv1a(files[i]))
            return cli_failf(NC_ERR_PARSE,
                             "--resume: %s does not match %s (missing, changed, or the checkpoint was interrupted)",
                             f->ckpt_json, files[i]);
    }
    *epoch = (int)e;
    *steps = t;
    return CLI_OK;
}

/* --resume: the checkpoint's epoch and optimizer state into *o, and its
 * network as the model to start from. */
static int ft_resume(const ft_state *f, nc_finetune_options *o, nc_tensor **optim, const char **model)
{
    int e = 0;
    int rc = read_checkpoint(f, &e, &o->optimizer_steps);
    if (rc != CLI_OK)
        return rc;
    if (e >= o->epochs)
        return cli_failf(NC_ERR_INVALID_ARG, "--resume: %s records epoch %d; all %d epochs are done", f->ckpt_json,
                         e, o->epochs);
    nc_status st = nc_data_load(f->ckpt_optim, NC_DTYPE_F32, optim);
    if (st != NC_OK)
        return cli_fail(st);
    o->start_epoch = e;
    o->optimizer_state = *optim;
    *model = f->ckpt_nir;
    if (cli_is_root())
        fprintf(stderr, "neuroc finetune: resuming from %s after epoch %d of %d\n", f->ckpt_nir, e, o->epochs);
    return CLI_OK;
}

int cmd_finetune(int argc, char **argv)
{
    ft_args a = {0};
    data_opts d = {0};
    const cli_opt opts[] = {
        {"--train", NULL, &a.train, NULL},
        {"--labels", "-l", &a.labels, NULL},
        {"--output", "-o", &a.output, NULL},
        {"--timesteps", "-T", &a.timesteps, NULL},
        {"--epochs", NULL, &a.epochs, NULL},
        {"--lr", NULL, &a.lr, NULL},
        {"--batch", "-b", &a.batch, NULL},
        {"--val", NULL, &a.val, NULL},
        {"--val-labels", NULL, &a.val_labels, NULL},
        {"--max-memory", NULL, &a.max_memory, NULL},
        {"--surrogate", NULL, &a.surrogate, NULL},
        {"--surrogate-width", NULL, &a.width, NULL},
        {"--optimizer", NULL, &a.optimizer, NULL},
        {"--weight-decay", NULL, &a.weight_decay, NULL},
        {"--grad-clip", NULL, &a.grad_clip, NULL},
        {"--energy-weight", NULL, &a.energy_weight, NULL},
        {"--seed", NULL, &a.seed, NULL},
        {"--threads", "-j", &a.threads, NULL},
        {"--resume", NULL, NULL, &a.resume},
        {"--nir-strict", NULL, NULL, &a.nir_strict},
        {"--detach-reset", NULL, NULL, &a.detach_reset},
        {"--train-thresholds", NULL, NULL, &a.train_thresholds},
        CLI_DATA_OPTS(d),
        {NULL, NULL, NULL, NULL},
    };
    const cli_frame frame = {.cmd = "finetune", .help = CMD_FINETUNE_HELP, .opts = opts, .nir_out_flag = "-o",
                             .nir_out = &a.output, .one_arg = "expected one model (.nir)",
                             .required = {{&a.train, "--train (the training samples) is required"},
                                          {&a.labels, "--labels (the training labels) is required"},
                                          {&a.output, "-o (the output .nir) is required"}}};
    const char *model;
    int rc;
    if (!cli_frame_parse(&frame, argc, argv, &model, &rc))
        return rc;
    if (!a.val != !a.val_labels)
        return cli_usage_error("finetune", "--val and --val-labels go together");
    if ((rc = cli_data_opts_check("finetune", &d)) != CLI_OK)
        return rc;
    nc_finetune_options o;
    if ((rc = ft_options(&a, &o)) != CLI_OK)
        return rc;
    if ((rc = cli_need_nir("finetune", model)) != CLI_OK)
        return rc;

    ft_state f = {.output = a.output, .o = &o};
    f.ckpt_nir = with_suffix(a.output, ".ckpt.nir");
    f.ckpt_json = with_suffix(a.output, ".ckpt.json");
    f.ckpt_optim = with_suffix(a.output, ".ckpt.optim.npy");
    nc_snn *s = NULL;
    nc_tensor *x = NULL, *y = NULL, *vx = NULL, *vy = NULL, *optim = NULL;
    nc_status st;
    cli_progress prog;
    cli_progress_init(&prog);
    f.prog = &prog;
    if (!f.ckpt_nir || !f.ckpt_json || !f.ckpt_optim) {
        rc = cli_failf(NC_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = cli_dist_same_file("model", model)) != CLI_OK)
        goto done;
    if (a.resume && (rc = ft_resume(&f, &o, &optim, &model)) != CLI_OK)
        goto loaded;
    /* under mpirun every rank reads the checkpoint rank 0 wrote (a shared file system) */
    nc_value_info in;
    if ((st = nc_snn_load_nir(model, NULL, &s)) != NC_OK) {
        rc = cli_fail(st);
        goto loaded;
    }
    cli_snn_input_info(s, &in);
    if ((rc = cli_load_data("finetune", a.train, &d, &in, &x)) != CLI_OK ||
        (rc = cli_load_labels(a.labels, nc_tensor_shape(x)[0], a.train, cli_snn_classes(s), &y)) != CLI_OK)
        goto loaded;
    if (a.val && ((rc = cli_load_data("finetune", a.val, &d, &in, &vx)) != CLI_OK ||
                  (rc = cli_load_labels(a.val_labels, nc_tensor_shape(vx)[0], a.val, cli_snn_classes(s), &vy)) != CLI_OK))
        goto loaded;
loaded:
    if ((rc = cli_dist_agree(rc)) != CLI_OK)
        goto done;
    int batch;
    int64_t bytes;
    if ((st = nc_snn_finetune_plan(s, &o, &batch, &bytes)) != NC_OK) {
        rc = cli_fail(st);
        goto done;
    }
    char hb[32];
    if (cli_is_root())
        fprintf(stderr, "neuroc finetune: %lld samples, T = %d, batch %d (about %sB of training memory)\n",
                (long long)nc_tensor_shape(x)[0], o.timesteps, batch, cli_human(bytes, hb, sizeof hb));
    int ranks = nc_dist_size(cli_dist());
    if (ranks > 1)
        printf("data parallel over %d ranks: batch %d per rank, effective batch %lld; learning rate %g, not "
               "scaled (the steps of one process with batch %lld)\n",
               ranks, batch, (long long)batch * ranks, (double)o.lr, (long long)batch * ranks);
    o.dist = cli_dist();
    o.progress = cli_progress_cb;
    o.progress_user = &prog;
    o.on_epoch = on_epoch;
    o.epoch_user = &f;
    st = nc_snn_finetune(s, x, y, vx, vy, &o);
    cli_progress_end(&prog);
    if (st != NC_OK) {
        rc = cli_fail(st);
        goto done;
    }
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    so.strict = a.nir_strict;
    if (cli_is_root() && (st = nc_snn_save_nir_with(s, a.output, &so)) != NC_OK) {
        rc = cli_fail(st);
        goto done;
    }
    printf("wrote %s\n", a.output);
    if (cli_is_root())
        cli_print_nir_graphs(a.output);
    rc = CLI_OK;
done:
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_tensor_free(vx);
    nc_tensor_free(vy);
    nc_tensor_free(optim);
    nc_snn_free(s);
    free(f.ckpt_nir);
    free(f.ckpt_json);
    free(f.ckpt_optim);
    return rc;
}
