/* Core limits and per-operation energy and time figures, each with its
 * source and evidence grade, and a loader for an override file in the
 * format of sim/loihi_params.json:
 *
 *   { "common": { "e_synop": {"value": 23.6e-12, "source": "...", "grade": "..."}, ... },
 *     "loihi1": { "compartments_per_core": 1024, ... },
 *     "loihi2": { ... } }
 *
 * A key's value is a number or an object with "value" (and optionally
 * "source" and "grade"); "common" applies to both targets, the target's own
 * section after it. Unknown keys are an error (a misspelt key would silently
 * keep the default). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"

#define DAVIES2018                                                                              \
    "M. Davies et al., \"Loihi: A Neuromorphic Manycore Processor with On-Chip Learning\", "   \
    "IEEE Micro 38(1), 2018, Table 2 (pre-silicon simulation, 0.75 V)"
#define DAVIES2018_CORE "M. Davies et al., IEEE Micro 38(1), 2018 (Loihi core resources)"
#define LOIHI2_BRIEF                                                                             \
    "Intel, \"Taking Neuromorphic Computing to the Next Level with Loihi 2\", technology brief, " \
    "2021: 128 neuro cores, up to 1M neurons and 120M synapses a chip"
#define PRE_SILICON "pre-silicon estimate"
#define PRE_SILICON_L2 "pre-silicon estimate for Loihi 1, applied to Loihi 2 (no per-op figures published)"

typedef struct pdef {
    const char *key, *unit;
    double l1, l2;              /* value for Loihi 1, Loihi 2 */
    const char *src1, *src2, *grade1, *grade2;
} pdef;

static const pdef DEFS[P_COUNT] = {
    [P_COMPARTMENTS] = {"compartments_per_core", "", 1024, 8192, DAVIES2018_CORE,
                        LOIHI2_BRIEF " (8192 neurons a core at most; configurable)", "published spec",
                        "published spec (maximum)"},
    [P_SYN_WORDS] = {"synapse_words_per_core", "64-bit words", 16384, 0,
                     DAVIES2018_CORE ": 128 KB of synaptic memory", "not modelled for Loihi 2 (0)",
                     "published spec", "not modelled"},
    [P_SYNAPSES] = {"synapses_per_core", "", 0, 937500, "not modelled for Loihi 1 (memory in words)",
                    LOIHI2_BRIEF "; 120M / 128 cores", "not modelled",
                    "derived from a published chip maximum (densest encoding)"},
    [P_IN_AXONS] = {"input_axons_per_core", "", 4096, 0, DAVIES2018_CORE,
                    "not published in our sources; not modelled (0)", "published spec", "not modelled"},
    [P_OUT_AXONS] = {"output_axons_per_core", "", 4096, 0, DAVIES2018_CORE,
                     "not published in our sources; not modelled (0)", "published spec", "not modelled"},
    [P_CORES_PER_CHIP] = {"cores_per_chip", "", 128, 128, DAVIES2018_CORE, LOIHI2_BRIEF, "published spec",
                          "published spec"},
    [P_SYN_INDEX_BITS] = {"synapse_index_bits", "bits", 10, 13,
                          "model: sparse synapse lists store a compartment index (log2 of the "
                          "compartments a core) beside each weight",
                          "model: log2 of 8192 neurons a core", "assumption", "assumption"},
    [P_SHARED_CONV] = {"shared_conv_weights", "0/1", 0, 1,
                       "model: Loihi 1 stores every synapse of a convolution explicitly",
                       "model: Loihi 2 supports convolutional connectivity with shared weights "
                       "(Intel Loihi 2 brief, 2021); a core stores the kernel once",
                       "assumption", "assumption from a vendor brief"},
    [P_WEIGHT_EXP_MIN] = {"weight_exp_min", "", 0, 0,
                          "the chip allows -8..7; negative exponents only truncate mantissa bits, "
                          "so the quantiser uses 0..7",
                          "as Loihi 1", "design choice", "design choice"},
    [P_WEIGHT_EXP_MAX] = {"weight_exp_max", "", 7, 7, "Lava / Loihi 1 weight exponent range -8..7",
                          "as Loihi 1", "published (Lava)", "assumed as Loihi 1"},
    [P_BIAS_EXP_MAX] = {"bias_exp_max", "", 7, 7, "assumed 3-bit bias exponent (Lava's model accepts any)",
                        "as Loihi 1", "assumption", "assumption"},
    [P_E_SYNOP] = {"e_synop", "J", 23.6e-12, 23.6e-12, DAVIES2018 ": energy a synaptic spike op (min)",
                   DAVIES2018 ": energy a synaptic spike op (min)", PRE_SILICON, PRE_SILICON_L2},
    [P_E_NU_ACTIVE] = {"e_update_active", "J", 81e-12, 81e-12, DAVIES2018 ": energy a neuron update (active)",
                       DAVIES2018 ": energy a neuron update (active)", PRE_SILICON, PRE_SILICON_L2},
    [P_E_NU_INACTIVE] = {"e_update_inactive", "J", 52e-12, 52e-12,
                         DAVIES2018 ": energy a neuron update (inactive)",
                         DAVIES2018 ": energy a neuron update (inactive)", PRE_SILICON, PRE_SILICON_L2},
    [P_E_SPIKE] = {"e_spike", "J", 1.7e-12, 1.7e-12, DAVIES2018 ": within-tile spike energy (a message)",
                   DAVIES2018 ": within-tile spike energy (a message)", PRE_SILICON, PRE_SILICON_L2},
    [P_T_SYNOP] = {"t_synop", "s", 3.5e-9, 3.5e-9, DAVIES2018 ": time a synaptic spike op (max)",
                   DAVIES2018 ": time a synaptic spike op (max)", PRE_SILICON, PRE_SILICON_L2},
    [P_T_NU_ACTIVE] = {"t_update_active", "s", 8.4e-9, 8.4e-9,
                       DAVIES2018 ": time a neuron update (active), as recalled from the table",
                       DAVIES2018 ": time a neuron update (active), as recalled from the table",
                       PRE_SILICON " (figure not cross-checked)", PRE_SILICON_L2},
    [P_T_NU_INACTIVE] = {"t_update_inactive", "s", 5.3e-9, 5.3e-9,
                         DAVIES2018 ": time a neuron update (inactive), as recalled from the table",
                         DAVIES2018 ": time a neuron update (inactive), as recalled from the table",
                         PRE_SILICON " (figure not cross-checked)", PRE_SILICON_L2},
    [P_T_BARRIER_MIN] = {"t_barrier_min", "s", 113e-9, 113e-9,
                         DAVIES2018 ": mesh-wide barrier sync time, 1 tile",
                         DAVIES2018 ": mesh-wide barrier sync time, 1 tile",
                         PRE_SILICON " (figure not cross-checked)", PRE_SILICON_L2},
    [P_T_BARRIER_MAX] = {"t_barrier_max", "s", 465e-9, 465e-9,
                         DAVIES2018 ": mesh-wide barrier sync time, 32 tiles (used for more too)",
                         DAVIES2018 ": mesh-wide barrier sync time, 32 tiles (used for more too)",
                         PRE_SILICON " (figure not cross-checked)", PRE_SILICON_L2},
    [P_CORES_PER_TILE] = {"cores_per_tile", "", 4, 4,
                          "assumed: 128 cores in the 32 tiles of the barrier figure", "as Loihi 1",
                          "assumption", "assumption"},
    [P_E_MAC_GPU] = {"e_mac_gpu", "J", 2.56e-12, 2.56e-12,
                     "NVIDIA A100 SXM datasheet: 312 TFLOPS dense FP16 Tensor Core at 400 W TDP, "
                     "i.e. 400 W / 156e12 MAC/s; board power at peak throughput (batch-1 inference "
                     "runs far below peak, so this favours the GPU)",
                     "NVIDIA A100 SXM datasheet: 312 TFLOPS dense FP16 Tensor Core at 400 W TDP, "
                     "i.e. 400 W / 156e12 MAC/s; board power at peak throughput (batch-1 inference "
                     "runs far below peak, so this favours the GPU)",
                     "vendor peak figure (best case for the GPU)", "vendor peak figure (best case for the GPU)"},
};

#define SRC_DAVIES21                                                                              \
    "M. Davies et al., \"Advancing Neuromorphic Computing With Loihi: A Survey of Results and "  \
    "Outlook\", Proc. IEEE 109(5), 2021"
const ls_system ls_systems[] = {
    {"Kapoho Bay", 1, 2, SRC_DAVIES21},
    {"Wolf Mountain", 1, 4, SRC_DAVIES21},
    {"Nahuku", 1, 32, SRC_DAVIES21},
    {"Pohoiki Beach", 1, 64, SRC_DAVIES21},
    {"Pohoiki Springs", 1, 768, SRC_DAVIES21},
    {"Oheo Gulch", 0, 1, "Intel, Loihi 2 technology brief, 2021 (single-chip board)"},
    {"Kapoho Point", 0, 8, "Intel Labs announcement, 2022 (8 Loihi 2 chips)"},
    {"Hala Point", 0, 1152, "Intel newsroom, April 2024 (1,152 Loihi 2 processors)"},
};
const int ls_n_systems = (int)(sizeof ls_systems / sizeof ls_systems[0]);

void ls_params_default(ls_params *p, int loihi1)
{
    for (int i = 0; i < P_COUNT; i++) {
        const pdef *d = &DEFS[i];
        ls_const *c = &p->c[i];
        c->key = d->key;
        c->unit = d->unit;
        c->value = loihi1 ? d->l1 : d->l2;
        snprintf(c->source, sizeof c->source, "%s", loihi1 ? d->src1 : d->src2);
        snprintf(c->grade, sizeof c->grade, "%s", loihi1 ? d->grade1 : d->grade2);
    }
}

/* ---- a minimal JSON reader: objects, strings, numbers, true/false/null;
 * arrays are skipped */

typedef struct jr {
    const char *s, *path;
    size_t i, n;
} jr;

static void ws(jr *r)
{
    while (r->i < r->n && strchr(" \t\r\n", r->s[r->i]))
        r->i++;
}

static nc_status jerr(jr *r, const char *what)
{
    size_t line = 1;
    for (size_t k = 0; k < r->i && k < r->n; k++)
        line += r->s[k] == '\n';
    return nc_errorf(NC_ERR_PARSE, "%s:%zu: %s", r->path, line, what);
}

/* A string into buf (escapes \" \\ \/ \n \t kept simple; \u written as '?'). */
static nc_status jstring(jr *r, char *buf, size_t len)
{
    ws(r);
    if (r->i >= r->n || r->s[r->i] != '"')
        return jerr(r, "expected a string");
    r->i++;
    size_t o = 0;
    while (r->i < r->n && r->s[r->i] != '"') {
        char ch = r->s[r->i++];
        if (ch == '\\' && r->i < r->n) {
            char e = r->s[r->i++];
            ch = e == 'n' ? '\n' : e == 't' ? '\t' : e;
            if (e == 'u') {
                r->i += 4;
                ch = '?';
            }
        }
        if (o + 1 < len)
            buf[o++] = ch;
    }
    if (r->i >= r->n)
        return jerr(r, "unterminated string");
    r->i++;
    buf[o] = 0;
    return NC_OK;
}

static nc_status jnumber(jr *r, double *v)
{
    ws(r);
    char tmp[64];
    size_t k = 0;
    while (r->i < r->n && k + 1 < sizeof tmp && strchr("+-0123456789.eE", r->s[r->i]))
        tmp[k++] = r->s[r->i++];
    tmp[k] = 0;
    char *end;
    errno = 0;
    *v = strtod(tmp, &end);
    if (k == 0 || *end || errno || !isfinite(*v))
        return jerr(r, "expected a number");
    return NC_OK;
}

static nc_status jskip(jr *r)
{
    ws(r);
    if (r->i >= r->n)
        return jerr(r, "unexpected end of file");
    char ch = r->s[r->i];
    if (ch == '"') {
        char dummy[8];
        return jstring(r, dummy, sizeof dummy);
    }
    if (ch == '{' || ch == '[') {
        char close = ch == '{' ? '}' : ']';
        r->i++;
        ws(r);
        if (r->i < r->n && r->s[r->i] == close) {
            r->i++;
            return NC_OK;
        }
        for (;;) {
            nc_status st;
            if (ch == '{') {
                char key[8];
                if ((st = jstring(r, key, sizeof key)) != NC_OK)
                    return st;
                ws(r);
                if (r->i >= r->n || r->s[r->i++] != ':')
                    return jerr(r, "expected ':'");
            }
            if ((st = jskip(r)) != NC_OK)
                return st;
            ws(r);
            if (r->i < r->n && r->s[r->i] == ',') {
                r->i++;
                continue;
            }
            if (r->i < r->n && r->s[r->i] == close) {
                r->i++;
                return NC_OK;
            }
            return jerr(r, "expected ',' or a closing bracket");
        }
    }
    const char *lit = ch == 't' ? "true" : ch == 'f' ? "false" : ch == 'n' ? "null" : NULL;
    if (lit) {
        size_t l = strlen(lit);
        if (r->n - r->i < l || strncmp(r->s + r->i, lit, l) != 0)
            return jerr(r, "unknown literal");
        r->i += l;
        return NC_OK;
    }
    double v;
    return jnumber(r, &v);
}

/* Reads one constant: a number or {"value": x, "source": s, "grade": g}. */
static nc_status jconst(jr *r, ls_const *c)
{
    ws(r);
    if (r->i < r->n && r->s[r->i] != '{')
        return jnumber(r, &c->value);
    r->i++;
    int have_value = 0;
    for (;;) {
        char key[32];
        nc_status st;
        ws(r);
        if (r->i < r->n && r->s[r->i] == '}') {
            r->i++;
            break;
        }
        if ((st = jstring(r, key, sizeof key)) != NC_OK)
            return st;
        ws(r);
        if (r->i >= r->n || r->s[r->i++] != ':')
            return jerr(r, "expected ':'");
        if (strcmp(key, "value") == 0) {
            if ((st = jnumber(r, &c->value)) != NC_OK)
                return st;
            have_value = 1;
        } else if (strcmp(key, "source") == 0) {
            if ((st = jstring(r, c->source, sizeof c->source)) != NC_OK)
                return st;
        } else if (strcmp(key, "grade") == 0) {
            if ((st = jstring(r, c->grade, sizeof c->grade)) != NC_OK)
                return st;
        } else if ((st = jskip(r)) != NC_OK) {
            return st;
        }
        ws(r);
        if (r->i < r->n && r->s[r->i] == ',')
            r->i++;
    }
    return have_value ? NC_OK : jerr(r, "a constant object needs \"value\"");
}

/* Applies section `want` ("common", "loihi1" or "loihi2") of the file. */
static nc_status apply_section(jr *r, ls_params *p, const char *want)
{
    r->i = 0;
    ws(r);
    if (r->i >= r->n || r->s[r->i++] != '{')
        return jerr(r, "expected a JSON object");
    for (;;) {
        char sec[32];
        nc_status st;
        ws(r);
        if (r->i < r->n && r->s[r->i] == '}')
            return NC_OK;
        if ((st = jstring(r, sec, sizeof sec)) != NC_OK)
            return st;
        ws(r);
        if (r->i >= r->n || r->s[r->i++] != ':')
            return jerr(r, "expected ':'");
        ws(r);
        int is_sec = !strcmp(sec, "common") || !strcmp(sec, "loihi1") || !strcmp(sec, "loihi2");
        if (strcmp(sec, want) != 0 || r->i >= r->n || r->s[r->i] != '{') {
            if (is_sec && (r->i >= r->n || r->s[r->i] != '{'))
                return jerr(r, "a section must be an object");
            if ((st = jskip(r)) != NC_OK)
                return st;
        } else {
            r->i++;
            for (;;) {
                char key[64];
                ws(r);
                if (r->i < r->n && r->s[r->i] == '}') {
                    r->i++;
                    break;
                }
                if ((st = jstring(r, key, sizeof key)) != NC_OK)
                    return st;
                ws(r);
                if (r->i >= r->n || r->s[r->i++] != ':')
                    return jerr(r, "expected ':'");
                int k = 0;
                while (k < P_COUNT && strcmp(p->c[k].key, key) != 0)
                    k++;
                if (k == P_COUNT)
                    return nc_errorf(NC_ERR_PARSE, "%s: unknown parameter '%s' in section '%s'", r->path, key,
                                     sec);
                if ((st = jconst(r, &p->c[k])) != NC_OK)
                    return st;
                if (p->c[k].value < 0)
                    return nc_errorf(NC_ERR_PARSE, "%s: parameter '%s' is negative", r->path, key);
                ws(r);
                if (r->i < r->n && r->s[r->i] == ',')
                    r->i++;
            }
        }
        ws(r);
        if (r->i < r->n && r->s[r->i] == ',')
            r->i++;
        else if (r->i < r->n && r->s[r->i] == '}')
            return NC_OK;
        else
            return jerr(r, "expected ',' or '}'");
    }
}

nc_status ls_params_load(ls_params *p, int loihi1, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return nc_errorf(NC_ERR_IO, "%s: cannot open the parameter file: %s", path, strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 > cap) {
            if (cap > ((size_t)1 << 24)) {
                fclose(f);
                nc_free(buf);
                return nc_errorf(NC_ERR_LIMIT, "%s: a parameter file over 16 MiB", path);
            }
            cap = cap ? 2 * cap : 8192;
            char *nb = nc_realloc(buf, cap);
            if (!nb) {
                fclose(f);
                nc_free(buf);
                return nc_errorf(NC_ERR_NOMEM, "out of memory reading %s", path);
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        nc_free(buf);
        return nc_errorf(NC_ERR_IO, "%s: read error", path);
    }
    jr r = {buf, path, 0, n};
    nc_status st = jskip(&r); /* validates the whole file first */
    if (st == NC_OK) {
        ws(&r);
        if (r.i != r.n)
            st = jerr(&r, "trailing text after the JSON object");
    }
    if (st == NC_OK)
        st = apply_section(&r, p, "common");
    if (st == NC_OK)
        st = apply_section(&r, p, loihi1 ? "loihi1" : "loihi2");
    nc_free(buf);
    return st;
}
