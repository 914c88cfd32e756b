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
#include <stdio.h>
#include <string.h>

#include "sim_internal.h"
#include "snn/base/error.h"
#include "snn/base/json_read.h"

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

/* ---- the override file, read with snn/base/json_read */

/* One constant: a number or {"value": x, "source": s, "grade": g} (other
 * members, such as "unit", are documentation and ignored). */
static nc_status take_const(const nc_json_doc *d, const nc_json_value *v, const char *key, ls_const *c)
{
    if (v->type == NC_JSON_NUMBER) {
        c->value = v->num;
    } else if (v->type == NC_JSON_OBJECT) {
        const nc_json_value *val = nc_json_get(d, v, "value"), *src = nc_json_get(d, v, "source"),
                            *grade = nc_json_get(d, v, "grade");
        if (!val)
            return nc_json_errorf(d, v, NC_ERR_PARSE, "parameter '%s': a constant object needs \"value\"", key);
        if (val->type != NC_JSON_NUMBER)
            return nc_json_errorf(d, val, NC_ERR_PARSE, "parameter '%s': \"value\" must be a number, not %s", key,
                                  nc_json_type_name(val->type));
        for (const nc_json_value *t = src; t; t = t == src ? grade : NULL)
            if (t->type != NC_JSON_STRING)
                return nc_json_errorf(d, t, NC_ERR_PARSE, "parameter '%s': \"%s\" must be a string", key, t->key);
        c->value = val->num;
        if (src)
            snprintf(c->source, sizeof c->source, "%s", src->str);
        if (grade)
            snprintf(c->grade, sizeof c->grade, "%s", grade->str);
    } else {
        return nc_json_errorf(d, v, NC_ERR_PARSE, "parameter '%s' must be a number or an object, not %s", key,
                              nc_json_type_name(v->type));
    }
    if (c->value < 0)
        return nc_json_errorf(d, v, NC_ERR_PARSE, "parameter '%s' is negative", key);
    return NC_OK;
}

/* Applies section `want` ("common", "loihi1" or "loihi2") of the file, in
 * file order (a section given twice applies twice: the last value wins). */
static nc_status apply_section(const nc_json_doc *d, ls_params *p, const char *want)
{
    for (const nc_json_value *sec = nc_json_first(d, nc_json_root(d)); sec; sec = nc_json_next(d, sec)) {
        if (strcmp(sec->key, want) != 0)
            continue;
        for (const nc_json_value *m = nc_json_first(d, sec); m; m = nc_json_next(d, m)) {
            int k = 0;
            while (k < P_COUNT && strcmp(p->c[k].key, m->key) != 0)
                k++;
            if (k == P_COUNT)
                return nc_json_errorf(d, m, NC_ERR_PARSE, "unknown parameter '%s' in section '%s'", m->key, want);
            nc_status st = take_const(d, m, m->key, &p->c[k]);
            if (st != NC_OK)
                return st;
        }
    }
    return NC_OK;
}

nc_status ls_params_load(ls_params *p, int loihi1, const char *path)
{
    nc_json_doc *d = NULL;
    nc_status st = nc_json_read_file(path, 0, 0, &d);
    if (st != NC_OK)
        return st;
    const nc_json_value *root = nc_json_root(d);
    if (root->type != NC_JSON_OBJECT)
        st = nc_json_errorf(d, root, NC_ERR_PARSE, "expected a JSON object, not %s", nc_json_type_name(root->type));
    /* the three sections must be objects wherever they are used; other
     * top-level members (e.g. "comment") are free */
    for (const nc_json_value *m = nc_json_first(d, root); st == NC_OK && m; m = nc_json_next(d, m))
        if ((!strcmp(m->key, "common") || !strcmp(m->key, "loihi1") || !strcmp(m->key, "loihi2")) &&
            m->type != NC_JSON_OBJECT)
            st = nc_json_errorf(d, m, NC_ERR_PARSE, "section '%s' must be an object", m->key);
    if (st == NC_OK)
        st = apply_section(d, p, "common");
    if (st == NC_OK)
        st = apply_section(d, p, loihi1 ? "loihi1" : "loihi2");
    nc_json_doc_free(d);
    return st;
}
