#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli_fail(nc_status st)
{
    const char *detail = nc_last_error();
    if (detail && *detail)
        fprintf(stderr, "neuroc: %s: %s\n", nc_status_str(st), detail);
    else
        fprintf(stderr, "neuroc: %s\n", nc_status_str(st));
    return CLI_FAIL;
}

int cli_failf(nc_status st, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "neuroc: %s: ", nc_status_str(st));
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_FAIL;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    if (cmd)
        fprintf(stderr, "neuroc %s: ", cmd);
    else
        fputs("neuroc: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'neuroc %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
    return CLI_USAGE;
}

static const cli_opt *find_opt(const cli_opt *opts, const char *arg, size_t len)
{
    for (const cli_opt *o = opts; o->name; o++) {
        if (strlen(o->name) == len && strncmp(o->name, arg, len) == 0)
            return o;
        if (o->alias && strlen(o->alias) == len && strncmp(o->alias, arg, len) == 0)
            return o;
    }
    return NULL;
}

int cli_parse(int argc, char **argv, const cli_opt *opts, const char **pos, int max_pos,
              int *n_pos, const char *help)
{
    const char *cmd = argv[0];
    int only_pos = 0;
    *n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_pos && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
            fputs(help, stdout);
            return -1;
        }
        if (!only_pos && strcmp(a, "--") == 0) {
            only_pos = 1;
            continue;
        }
        if (only_pos || a[0] != '-' || a[1] == '\0') {
            if (!a[0]) /* every argument of neuroc's names something: '' is a slip ("$UNSET") */
                return cli_usage_error(cmd, "an empty argument ('') names no file");
            if (*n_pos >= max_pos)
                return cli_usage_error(cmd, "unexpected argument '%s'", a);
            pos[(*n_pos)++] = a;
            continue;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const cli_opt *o = find_opt(opts, a, len);
        if (!o)
            return cli_usage_error(cmd, "unknown option '%.*s'", (int)len, a);
        if (o->flag) {
            if (eq)
                return cli_usage_error(cmd, "option '%s' takes no value", o->name);
            *o->flag = 1;
        } else if (eq) {
            *o->value = eq + 1;
        } else if (i + 1 < argc) {
            *o->value = argv[++i];
        } else {
            return cli_usage_error(cmd, "option '%s' needs a value", o->name);
        }
        if (!o->flag && !**o->value)
            return cli_usage_error(cmd, "option '%s' needs a value, not an empty string", o->name);
    }
    return CLI_OK;
}

char *cli_shape(int ndim, const int64_t *shape, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    off += (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < ndim && off < len; i++) {
        if (shape[i] < 0)
            off += (size_t)snprintf(buf + off, len - off, i ? ", N" : "N");
        else
            off += (size_t)snprintf(buf + off, len - off, i ? ", %lld" : "%lld", (long long)shape[i]);
    }
    if (off < len)
        snprintf(buf + off, len - off, "]");
    return buf;
}

char *cli_kind_label(const nc_snn_layer_info *L, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s", nc_snn_kind_name(L->kind), L->two_sided ? " two-sided" : "",
             L->kind == NC_SNN_NONLINEAR ? " " : "");
    if (L->kind == NC_SNN_NONLINEAR)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s", nc_nonlinear_fn_name(L->nonlinear.fn));
    return buf;
}

char *cli_human(int64_t n, char *buf, size_t len)
{
    static const char *suffix[] = {"", " K", " M", " G", " T"};
    double v = (double)n;
    int k = 0;
    while (v >= 1000.0 && k < 4) {
        v /= 1000.0;
        k++;
    }
    if (k == 0)
        snprintf(buf, len, "%lld", (long long)n);
    else
        snprintf(buf, len, "%.2f%s", v, suffix[k]);
    return buf;
}

const char *cli_dtype_name(nc_dtype dt)
{
    switch (dt) {
    case NC_DTYPE_F32: return "float32";
    case NC_DTYPE_U8: return "uint8";
    case NC_DTYPE_I64: return "int64";
    }
    return "?";
}

size_t cli_dtype_size(nc_dtype dt)
{
    switch (dt) {
    case NC_DTYPE_F32: return 4;
    case NC_DTYPE_U8: return 1;
    case NC_DTYPE_I64: return 8;
    }
    return 0;
}

int cli_is_nir(const char *path)
{
    size_t len = strlen(path);
    if (len >= 4 && strcasecmp(path + len - 4, ".nir") == 0)
        return 1;
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char head[8];
    struct stat sb; /* opening a FIFO would wait for a writer: the loader names what it is */
    FILE *f = stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? fopen(path, "rb") : NULL;
    if (!f)
        return 0; /* the loader reports the missing file */
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, sig, sizeof sig) == 0;
}

int cli_need_nir(const char *cmd, const char *path)
{
    nc_status st = nc_check_input_file(path);
    if (st != NC_OK)
        return cli_fail(st);
    if (!cli_is_nir(path))
        return cli_usage_error(cmd, "%s is not a spiking network (.nir); convert it first with 'neuroc convert'",
                               path);
    return CLI_OK;
}

int cli_parse_float(const char *s, double lo, float *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || end == s || !isfinite(v) || v < lo || v > 1e30)
        return 0;
    *out = (float)v;
    return 1;
}

int cli_parse_ll(const char *s, long long lo, long long hi, long long dflt, long long *out)
{
    if (!s) {
        *out = dflt;
        return 1;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

void cli_snn_input_info(const nc_snn *s, nc_value_info *in)
{
    nc_snn_layer_info L;
    memset(in, 0, sizeof *in);
    if (nc_snn_layer_at(s, 0, &L) != NC_OK)
        return;
    in->name = L.name;
    in->dtype = NC_DTYPE_F32;
    in->ndim = L.ndim + 1;
    in->shape[0] = -1;
    memcpy(in->shape + 1, L.shape, (size_t)L.ndim * sizeof *in->shape);
}

int cli_parse_choice(const char *cmd, const char *opt, const char *s, const char *const *names,
                     int n, int dflt, int *out)
{
    *out = dflt;
    if (!s)
        return CLI_OK;
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return CLI_OK;
        }
    char list[256];
    size_t off = 0;
    list[0] = '\0';
    for (int i = 0; i < n && off < sizeof list; i++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", i ? (i == n - 1 ? " or " : ", ") : "",
                                names[i]);
    return cli_usage_error(cmd, "%s must be %s, not '%s'", opt, list, s);
}

int cli_parse_encoding(const char *cmd, const char *s, nc_encoding *out)
{
    static const char *const names[] = {"direct", "poisson"}; /* in nc_encoding order */
    int v, rc = cli_parse_choice(cmd, "--encoding", s, names, 2, NC_ENCODING_DIRECT, &v);
    *out = (nc_encoding)v;
    return rc;
}

int cli_parse_reset(const char *cmd, const char *opt, const char *s, nc_reset_mode *out)
{
    static const char *const names[] = {"subtract", "zero"};
    static const nc_reset_mode modes[] = {NC_RESET_SUBTRACT, NC_RESET_ZERO};
    int v, rc = cli_parse_choice(cmd, opt, s, names, 2, -1, &v); /* an index of names, -1 when not given */
    *out = v < 0 ? NC_RESET_SUBTRACT : modes[v];
    return rc;
}

unsigned long long cli_file_fnv1a(const char *path, int *ok)
{
    unsigned long long h = 0xcbf29ce484222325ull;
    struct stat sb;
    FILE *f = stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? fopen(path, "rb") : NULL;
    *ok = f != NULL;
    if (!f)
        return 0;
    unsigned char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++) {
            h ^= buf[i];
            h *= 0x100000001b3ull;
        }
    *ok = !ferror(f);
    fclose(f);
    return *ok ? h : 0;
}

/* "4G", "512M", "64K", "1000": bytes, powers of 1024. */
int cli_parse_bytes(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v > 0.0))
        return 0;
    double mul = 1.0;
    if (*end) {
        switch (*end == 'k' ? 'K' : *end == 'm' ? 'M' : *end == 'g' ? 'G' : *end == 't' ? 'T' : *end) {
        case 'K': mul = 1024.0; break;
        case 'M': mul = 1048576.0; break;
        case 'G': mul = 1073741824.0; break;
        case 'T': mul = 1099511627776.0; break;
        default: return 0;
        }
        end++;
        if (*end == 'B' || *end == 'b' || (*end == 'i' && end[1] == 'B' && end++))
            end++;
        if (*end)
            return 0;
    }
    v *= mul;
    if (v < 1.0 || v > 9.0e18)
        return 0;
    *out = (int64_t)v;
    return 1;
}

/* ---- "-": an output on standard output ---- */

int cli_is_stdout(const char *path)
{
    return path && strcmp(path, "-") == 0;
}

static int data_fd = -1; /* the original standard output, once it carries data */

int cli_stdout_for_data(void)
{
    if (data_fd >= 0)
        return CLI_OK;
    fflush(stdout);
    /* what the command prints for a person goes to stderr from here on, so
       that standard output holds the data alone (a pipe into numpy or jq) */
    data_fd = dup(STDOUT_FILENO);
    if (data_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        return cli_failf(NC_ERR_IO, "standard output: %s", strerror(errno));
    return CLI_OK;
}

static int data_out(void)
{
    return data_fd >= 0 ? data_fd : STDOUT_FILENO;
}

int cli_refuse_stdout(const char *cmd, const char *flag, const char *path)
{
    if (!cli_is_stdout(path))
        return CLI_OK;
    return cli_usage_error(cmd, "%s -: a .nir cannot go to standard output (HDF5 writes a file it can seek in); "
                                "name a file", flag);
}

nc_status cli_save_npy(const char *path, const nc_tensor *t)
{
    if (!cli_is_stdout(path))
        return nc_npy_save(path, t);
    return nc_npy_write(data_out(), t, "standard output");
}

int cli_write_stdout(const char *text, size_t len)
{
    for (size_t done = 0; done < len;) {
        ssize_t w = write(data_out(), text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return cli_failf(NC_ERR_IO, "standard output: cannot write: %s", strerror(errno));
        done += (size_t)w;
    }
    return CLI_OK;
}
