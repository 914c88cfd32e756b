/* A C program that brings its own MPI and hands the library a group made by
 * libneuroc_mpi (<neuroc/mpi.h>): converts MODEL (calibration shared by the
 * ranks) and evaluates it on IMAGES/LABELS (batches shared), then writes
 * the evaluation report from rank 0 to REPORT. tests/test_mpi.sh runs it
 * with 1 and 2 ranks: the reports must be identical, and each rank checks
 * that the group's rank and size are MPI's.
 * usage: mpirun -np N mpi_c_user MODEL IMAGES LABELS REPORT */
#include <stdio.h>

#include <neuroc/mpi.h>

static int check(nc_status st, int rank, const char *what)
{
    if (st == NC_OK)
        return 1;
    fprintf(stderr, "mpi_c_user: rank %d: %s failed: %s: %s\n", rank, what, nc_status_str(st), nc_last_error());
    return 0;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    int rank = 0, size = 1, ok = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nc_dist *d = NULL;
    nc_model *m = NULL;
    nc_tensor *x = NULL, *y = NULL;
    nc_snn *s = NULL;
    nc_eval_result *r = NULL;
    if (argc != 5) {
        fprintf(stderr, "usage: %s MODEL IMAGES LABELS REPORT\n", argv[0]);
        goto done;
    }
    if (!check(nc_dist_from_mpi_comm(MPI_COMM_WORLD, &d), rank, "nc_dist_from_mpi_comm"))
        goto done;
    if (nc_dist_rank(d) != rank || nc_dist_size(d) != size) {
        fprintf(stderr, "mpi_c_user: the group says rank %d of %d, MPI rank %d of %d\n", nc_dist_rank(d),
                nc_dist_size(d), rank, size);
        goto done;
    }
    nc_convert_options co = {.calib_samples = 128, .dist = d};
    nc_eval_options eo = {.timesteps = 8, .batch = 48, .dist = d};
    if (!check(nc_model_load_onnx(argv[1], NULL, &m), rank, "loading the model") ||
        !check(nc_data_load(argv[2], NC_DTYPE_F32, &x), rank, "loading the images") ||
        !check(nc_data_load(argv[3], NC_DTYPE_I64, &y), rank, "loading the labels") ||
        !check(nc_convert(m, x, NULL, &co, &s, NULL), rank, "converting") ||
        !check(nc_snn_evaluate(s, m, x, y, &eo, &r), rank, "evaluating"))
        goto done;
    ok = 1;
    if (rank == 0) {
        FILE *f = fopen(argv[4], "w");
        ok = f && fputs(nc_eval_result_json(r), f) >= 0;
        if (f && fclose(f) != 0)
            ok = 0;
        printf("mpi_c_user: %d ranks, %lld samples, accuracy %.4f\n", size, (long long)nc_eval_result_samples(r),
               nc_eval_result_accuracy_at(r, nc_eval_result_timesteps(r)));
    }
done:
    nc_eval_result_free(r);
    nc_snn_free(s);
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_model_free(m);
    nc_dist_free(d);
    MPI_Finalize();
    return ok ? 0 : 1;
}
