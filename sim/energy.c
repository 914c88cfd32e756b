/* Energy and latency of one inference from the run's counters and the
 * per-operation figures of Davies et al. 2018 (Table 2; pre-silicon).
 *
 * Energy = synaptic ops × E_synop + active and inactive compartment updates
 * × E_update + spike messages × E_spike (within a tile). Left out: static
 * power, the energy of tile hops between cores (3.0–4.0 pJ a hop in the same
 * table, but it depends on placement on the mesh), the host or embedded
 * processors, and off-chip traffic.
 *
 * Latency: the cores of a step run in parallel and then synchronise, so a
 * step takes as long as its busiest core plus the barrier. A layer's load
 * is spread evenly over its cores (the simulator counts per layer, not per
 * core), and the load is the mean over samples. */
#include <math.h>
#include <stdio.h>

#include "sim_internal.h"

void ls_cost(nc_loihi_result *r)
{
    const ls_const *c = r->params.c;
    double N = (double)r->N;
    double syn = 0, act = 0, inact = 0, msgs = 0;
    for (int p = 0; p < r->n_pops; p++) {
        syn += (double)r->pops[p].cnt[CNT_SYNOPS];
        act += (double)r->pops[p].cnt[CNT_ACTIVE];
        inact += (double)r->pops[p].cnt[CNT_INACTIVE];
        msgs += (double)r->pops[p].cnt[CNT_MSGS];
    }
    nc_loihi_cost *k = &r->cost;
    k->synop_j = syn / N * c[P_E_SYNOP].value;
    k->update_j = (act * c[P_E_NU_ACTIVE].value + inact * c[P_E_NU_INACTIVE].value) / N;
    k->spike_j = msgs / N * c[P_E_SPIKE].value;
    k->static_j = 0;
    k->energy_j = k->synop_j + k->update_j + k->spike_j;

    double per_tile = c[P_CORES_PER_TILE].value > 0 ? c[P_CORES_PER_TILE].value : 1;
    double tiles = ceil((double)r->cores / per_tile);
    double f = tiles <= 1 ? 0 : (fmin(tiles, 32) - 1) / 31.0;
    double barrier = c[P_T_BARRIER_MIN].value + f * (c[P_T_BARRIER_MAX].value - c[P_T_BARRIER_MIN].value);
    double total = 0;
    for (int s = 0; s < r->steps; s++) {
        double busiest = 0;
        for (int p = 1; p < r->n_pops; p++) {
            const ls_rpop *P = &r->pops[p];
            if (P->cores < 1)
                continue;
            double ops = (double)r->step_syn[(size_t)s * r->n_pops + p] / N;
            double a = (double)r->step_act[(size_t)s * r->n_pops + p] / N;
            double t = (ops * c[P_T_SYNOP].value + a * c[P_T_NU_ACTIVE].value +
                        ((double)P->compartments - a) * c[P_T_NU_INACTIVE].value) /
                       (double)P->cores;
            busiest = fmax(busiest, t);
        }
        total += busiest + barrier;
    }
    k->latency_s = total;
    k->step_s = r->steps > 0 ? total / r->steps : 0;
    k->host_macs = (double)r->host_macs;
    k->ann_macs = (double)r->ann_macs;
    k->e_mac_gpu = c[P_E_MAC_GPU].value;
    k->ann_gpu_j = k->ann_macs * k->e_mac_gpu;
    snprintf(r->energy_source, sizeof r->energy_source, "%s", c[P_E_SYNOP].source);
    snprintf(r->evidence, sizeof r->evidence, "%s", c[P_E_SYNOP].grade);
    k->energy_source = r->energy_source;
    k->gpu_source = c[P_E_MAC_GPU].source;
    k->evidence = r->evidence;
}
