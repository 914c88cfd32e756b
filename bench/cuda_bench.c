/* The GPU benchmark of scripts/gpu-check, for machines where the neuroc
 * program cannot be built (no HDF5, protobuf-c or OpenBLAS; see
 * cmake/gpu_check.cmake). Where it can, use bench/cuda_bench.sh (neuroc bench
 * on the converted example CNN) instead: this program has no ONNX import, so
 * it runs the example CNN's shapes (conv 16, pool, conv 32, pool, fc 128,
 * fc 10) with random weights, whose spike densities differ from the trained
 * model's. Prints images/s and synaptic events/s for cpu, cpu-fast and cuda
 * with each strategy at batch 1, 64 and 1024, T = 8, and the speed-up of
 * each over cpu at the same batch.
 *
 * `cuda_bench resnet18 [PX [BATCH [MIN_SECONDS]]]`: ResNet-18's shapes
 * (random weights; spike densities about 0.3, printed) at PX × PX
 * (default 224), T = 8, batch BATCH (default 64), on the cuda backend only
 * (event, dense, auto): images/s, synaptic events/s and the mean spike
 * density of its IF layers (the CPU backends would take minutes a batch).
 * usage: cuda_bench [MIN_SECONDS (default 0.5)] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "neuroc/neuroc.h"
#include "tests/random_nets.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* images/s and synaptic events/s of one configuration; 0 if it cannot run. */
static double g_density; /* mean spike density of the IF layers in the last bench() */

static int bench(const nc_snn *s, const char *backend, const char *strategy, int N, int T, double min_time,
                 double *img_s, double *ev_s)
{
    nc_session_options o = {.backend = backend, .timesteps = T, .cuda_strategy = strategy};
    nc_session *ss = NULL;
    nc_tensor *x = net_rand_input(s, 0, N), *y = NULL;
    nc_status st = nc_session_create(s, &o, &ss);
    if (st == NC_OK)
        st = nc_session_run(ss, x, &y); /* makes the plan (and the first-run strategy choice) */
    nc_tensor_free(y);
    int runs = 0;
    double t0 = now_s(), t = 0;
    while (st == NC_OK && (t < min_time || runs < 1)) {
        y = NULL;
        st = nc_session_run(ss, x, &y);
        nc_tensor_free(y);
        runs++;
        t = now_s() - t0;
    }
    int64_t ops = 0, spikes = 0, neurons = 0;
    for (int i = 0; st == NC_OK && i < nc_snn_num_layers(s); i++) {
        int64_t n = 0;
        nc_session_synops(ss, (int)i, &n);
        ops += n;
        nc_snn_layer_info L;
        nc_snn_layer_at(s, i, &L);
        if (L.kind == NC_SNN_IF && nc_session_spike_count(ss, i, &n) == NC_OK) {
            int64_t size = 1;
            for (int d = 0; d < L.ndim; d++)
                size *= L.shape[d];
            spikes += n;
            neurons += size;
        }
    }
    g_density = neurons ? (double)spikes / ((double)neurons * N * T) : 0;
    if (st != NC_OK)
        fprintf(stderr, "%s %s batch %d: %s: %s\n", backend, strategy ? strategy : "", N, nc_status_str(st),
                nc_last_error());
    nc_session_free(ss);
    nc_tensor_free(x);
    *img_s = st == NC_OK ? runs * (double)N / t : 0;
    *ev_s = st == NC_OK ? runs * (double)ops / t : 0;
    return st == NC_OK;
}

static int bench_resnet18(int argc, char **argv)
{
    int64_t px = argc > 2 ? atoll(argv[2]) : 224;
    int N = argc > 3 ? atoi(argv[3]) : 64, T = 8, fails = 0;
    double min_time = argc > 4 ? atof(argv[4]) : 1.0;
    if (px < 32 || px % 32 || N < 1) {
        fprintf(stderr, "cuda_bench resnet18: PX must be a multiple of 32, BATCH at least 1\n");
        return 2;
    }
    nc_snn *s = net_resnet18_shapes(px);
    printf("ResNet-18 shapes at %lld px, random weights, T = %d, batch %d, at least %.2g s a configuration\n",
           (long long)px, T, N, min_time);
    printf("%-14s %14s %20s %14s\n", "backend", "images/s", "synaptic events/s", "spike density");
    static const char *strategies[] = {"event", "dense", "auto"};
    for (int k = 0; k < 3; k++) {
        double img = 0, ev = 0;
        if (!bench(s, "cuda", strategies[k], N, T, min_time, &img, &ev)) {
            fails++;
            continue;
        }
        printf("cuda:%-9s %14.1f %20.4g %14.4f\n", strategies[k], img, ev, g_density);
        fflush(stdout);
    }
    nc_snn_free(s);
    return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "resnet18") == 0)
        return bench_resnet18(argc, argv);
    double min_time = argc > 1 ? atof(argv[1]) : 0.5;
    static const char *cfg[][2] = {{"cpu", NULL},          {"cpu-fast", NULL},      {"cuda", "event"},
                                   {"cuda", "dense"},      {"cuda", "sparse"},      {"cuda", "auto"}};
    static const int batches[] = {1, 64, 1024};
    const int T = 8, n_cfg = 6;
    nc_snn *s = net_cnn_shapes();
    printf("example CNN shapes, random weights, T = %d, at least %.2g s a configuration\n", T, min_time);
    printf("%-14s %6s %14s %20s %10s\n", "backend", "batch", "images/s", "synaptic events/s", "vs cpu");
    for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++) {
        double base = 0;
        for (int k = 0; k < n_cfg; k++) {
            double img = 0, ev = 0;
            char name[32];
            snprintf(name, sizeof name, "%s%s%s", cfg[k][0], cfg[k][1] ? ":" : "", cfg[k][1] ? cfg[k][1] : "");
            if (!bench(s, cfg[k][0], cfg[k][1], batches[b], T, k == 0 ? 0 : min_time, &img, &ev))
                continue;
            if (k == 0)
                base = img;
            printf("%-14s %6d %14.1f %20.4g %9.1fx\n", name, batches[b], img, ev, base > 0 ? img / base : 0);
            fflush(stdout);
        }
    }
    nc_snn_free(s);
    return 0;
}
