/* The bursts of the SignedIF layers (nc_convert_options.burst): how many
 * spikes a step each may send, and its threshold divided by that number, so
 * that the calibrated clip stays and the levels get finer. */
#ifndef NC_CONVERT_CONVERT_BURSTS_H
#define NC_CONVERT_CONVERT_BURSTS_H

#include "convert_graph.h"

/* The burst the option's 0 stands for once the graph is known: 1 where a
 * QCFS pattern gave a threshold, else NC_DEFAULT_BURST. */
int nc_default_burst(const nc_cgraph *cg);

/* The default burst of a calibrated network (before nc_apply_bursts):
 * `burst`, or the smallest power of two above it (up to 64) that the
 * network's readout, quantised as bursts of it give at T = 32, follows its
 * rate limit with on the first calibration rows (convert_bursts.c). A note
 * says why where it is more. */
nc_status nc_resolution_burst(const nc_cgraph *cg, const nc_tensor *calib, int burst, int *out,
                              nc_strlist *notes);

/* Sets max_spikes and divides θ (and v(0), spike values) of every SignedIF
 * layer by its burst (a spiking max pool reads bursts): `burst` each, two-sided
 * layers at least NC_NONLINEAR_BURST (more where heavy-tailed). Adds notes
 * saying what was chosen. */
nc_status nc_apply_bursts(const nc_cgraph *cg, int burst, nc_strlist *notes);

#endif
