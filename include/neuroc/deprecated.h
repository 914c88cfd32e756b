/*
 * neuroc — the old names of renamed functions and constants, kept so that
 * programs written against neuroc 0.1's headers still compile (with a
 * deprecation warning naming the new name). All of them live here, so they
 * can be dropped together; define NC_NO_DEPRECATED to hide them now.
 * Included by <neuroc/neuroc.h>.
 *
 * They are inline wrappers: source compatible, not binary compatible (a
 * program linked against 0.1's library must be rebuilt).
 */
/* The umbrella header first: it includes every public header in the order
 * their types need, this one among them, so this header stands alone. */
#include "neuroc/neuroc.h"

#ifndef NEUROC_DEPRECATED_H
#define NEUROC_DEPRECATED_H

#ifndef NC_NO_DEPRECATED

#ifdef __cplusplus
extern "C" {
#endif

/* neuroc.h */
NC_DEPRECATED("use nc_limits_current")
static inline void nc_get_limits(nc_limits *out) { nc_limits_current(out); }

/* snn.h */
NC_DEPRECATED("use nc_snn_layer_at")
static inline nc_status nc_snn_get_layer(const nc_snn *s, int id, nc_snn_layer_info *out)
{
    return nc_snn_layer_at(s, id, out);
}

/* convert.h: the evaluation result's accessors are nc_eval_result_<noun> */
NC_DEPRECATED("use nc_eval_result_timesteps")
static inline int nc_eval_timesteps(const nc_eval_result *r) { return nc_eval_result_timesteps(r); }
NC_DEPRECATED("use nc_eval_result_samples")
static inline int64_t nc_eval_samples(const nc_eval_result *r) { return nc_eval_result_samples(r); }
NC_DEPRECATED("use nc_eval_result_accuracy_at")
static inline double nc_eval_accuracy_at(const nc_eval_result *r, int t)
{
    return nc_eval_result_accuracy_at(r, t);
}
NC_DEPRECATED("use nc_eval_result_ann_accuracy")
static inline double nc_eval_ann_accuracy(const nc_eval_result *r) { return nc_eval_result_ann_accuracy(r); }
NC_DEPRECATED("use nc_eval_result_num_layers")
static inline size_t nc_eval_num_layers(const nc_eval_result *r)
{
    return (size_t)nc_eval_result_num_layers(r);
}
NC_DEPRECATED("use nc_eval_result_layer")
static inline nc_status nc_eval_layer(const nc_eval_result *r, size_t i, nc_eval_layer_stats *out)
{
    return nc_eval_result_layer(r, i > (size_t)INT32_MAX ? -1 : (int)i, out);
}
NC_DEPRECATED("use nc_eval_result_cost")
static inline nc_status nc_eval_cost_get(const nc_eval_result *r, nc_eval_cost *out)
{
    return nc_eval_result_cost(r, out);
}

/* sim.h: the compiled net's accessors are nc_loihi_net_<noun>, the run's
 * nc_loihi_result_<noun>; the reset modes are nc_reset_mode's */
NC_DEPRECATED("use nc_loihi_net_num_layers")
static inline size_t nc_loihi_num_layers(const nc_loihi_net *n) { return (size_t)nc_loihi_net_num_layers(n); }
NC_DEPRECATED("use nc_loihi_net_layer")
static inline nc_status nc_loihi_layer(const nc_loihi_net *n, size_t i, nc_loihi_layer_info *out)
{
    return nc_loihi_net_layer(n, i > (size_t)INT32_MAX ? -1 : (int)i, out);
}
NC_DEPRECATED("use nc_loihi_net_mapping")
static inline nc_status nc_loihi_mapping_get(const nc_loihi_net *n, nc_loihi_mapping *out)
{
    return nc_loihi_net_mapping(n, out);
}
NC_DEPRECATED("use nc_loihi_net_systems")
static inline size_t nc_loihi_systems(const nc_loihi_net *n, nc_loihi_system *out, size_t cap)
{
    return nc_loihi_net_systems(n, out, cap);
}
NC_DEPRECATED("use nc_loihi_result_accuracy_at")
static inline double nc_loihi_accuracy_at(const nc_loihi_result *r, int t)
{
    return nc_loihi_result_accuracy_at(r, t);
}
NC_DEPRECATED("use nc_loihi_result_accuracy_at_step")
static inline double nc_loihi_accuracy_at_step(const nc_loihi_result *r, int step)
{
    return nc_loihi_result_accuracy_at_step(r, step);
}

/* NC_LOIHI_RESET_DEFAULT, _ZERO and _SUBTRACT are deprecated members of
 * nc_reset_mode (<neuroc/snn.h>: an enum cannot be reopened here). */
typedef nc_reset_mode nc_loihi_reset NC_DEPRECATED("use nc_reset_mode");

#ifdef __cplusplus
}
#endif

#endif /* NC_NO_DEPRECATED */
#endif /* NEUROC_DEPRECATED_H */
