// The cuBLAS and cuSPARSE calls of the cuda backend on the CPU harness:
// arguments checked as the libraries document them (leading dimensions,
// types, every matrix inside one device allocation), the product queued on
// the handle's stream and computed there with OpenBLAS. TF32 and BF16
// compute types round the inputs to those formats first (round to nearest
// even), as the tensor cores read them. cuSPARSE's CSR is checked when the
// product runs (row offsets from 0 to nnz, non-decreasing; columns inside
// the matrix and ascending within a row), since only then is it on the
// device.
#include <cblas.h>
#include <cublas_v2.h>
#include <cusparse.h>
#include <stdio.h>
#include <string.h>

#include <vector>

#include "host_state.h"

struct cublasContext {
    cudaStream_t s;
};
struct cusparseContext {
    cudaStream_t s;
};
struct cusparseSpMatDescr {
    int64_t rows, cols, nnz;
    const int32_t *rowptr, *col;
    const float *val;
};
struct cusparseDnMatDescr {
    int64_t rows, cols, ld;
    float *values;
    cusparseOrder_t order;
};

using namespace nc_host;

namespace {

float round_mantissa(float x, int keep)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    if ((b & 0x7f800000u) == 0x7f800000u)
        return x; // inf, NaN
    int drop = 23 - keep;
    b += ((1u << (drop - 1)) - 1) + ((b >> drop) & 1u);
    b &= ~((1u << drop) - 1);
    memcpy(&x, &b, 4);
    return x;
}

// A column-major rows × cols matrix with leading dimension ld inside one allocation.
bool in_device(const void *p, int64_t rows, int64_t cols, int64_t ld)
{
    if (rows == 0 || cols == 0)
        return true;
    return find_alloc(p, (size_t)((cols - 1) * ld + rows) * sizeof(float)) != nullptr;
}

std::vector<float> copy_rounded(const float *p, int64_t rows, int64_t cols, int64_t ld, int keep)
{
    std::vector<float> v(rows && cols ? (size_t)((cols - 1) * ld + rows) : 0);
    for (int64_t c = 0; c < cols; c++)
        for (int64_t r = 0; r < rows; r++)
            v[(size_t)(c * ld + r)] = keep < 23 ? round_mantissa(p[c * ld + r], keep) : p[c * ld + r];
    return v;
}

} // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    *h = new cublasContext{nullptr};
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    delete h;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    h->s = s;
    return CUBLAS_STATUS_SUCCESS;
}
const char *cublasGetStatusName(cublasStatus_t e)
{
    switch (e) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_INTERNAL_ERROR";
    }
}
const char *cublasGetStatusString(cublasStatus_t e)
{
    return e == CUBLAS_STATUS_SUCCESS ? "success" : "failed (CPU harness: see its report)";
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType at, int lda, const void *B,
                            cudaDataType bt, int ldb, const void *beta, void *C, cudaDataType ct, int ldc,
                            cublasComputeType_t comp, cublasGemmAlgo_t algo)
{
    (void)algo;
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    int keep = comp == CUBLAS_COMPUTE_32F || comp == CUBLAS_COMPUTE_32F_PEDANTIC ? 23
               : comp == CUBLAS_COMPUTE_32F_FAST_TF32                           ? 10
               : comp == CUBLAS_COMPUTE_32F_FAST_16BF                           ? 7
                                                                                 : -1;
    if (at != CUDA_R_32F || bt != CUDA_R_32F || ct != CUDA_R_32F || keep < 0) {
        report("cuda-host: cublasGemmEx: only fp32 matrices with a 32F compute type are in the harness");
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    bool tA = ta != CUBLAS_OP_N, tB = tb != CUBLAS_OP_N;
    int ar = tA ? k : m, ac = tA ? m : k, br = tB ? n : k, bc = tB ? k : n;
    const char *bad = m < 0 || n < 0 || k < 0                ? "a negative size"
                      : lda < (ar > 1 ? ar : 1)              ? "lda below A's rows"
                      : ldb < (br > 1 ? br : 1)              ? "ldb below B's rows"
                      : ldc < (m > 1 ? m : 1)                ? "ldc below C's rows"
                      : !in_device(A, ar, ac, lda)           ? "A is not inside one device allocation"
                      : !in_device(B, br, bc, ldb)           ? "B is not inside one device allocation"
                      : !in_device(C, m, n, ldc)             ? "C is not inside one device allocation"
                      : !alpha || !beta || is_device(alpha)  ? "alpha / beta must be host pointers (pointer mode host)"
                                                             : nullptr;
    if (bad) {
        report("cuda-host: cublasGemmEx(m %d, n %d, k %d, lda %d, ldb %d, ldc %d): %s", m, n, k, lda, ldb, ldc, bad);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    float al = *(const float *)alpha, be = *(const float *)beta;
    device_op op;
    op.what = "cublasGemmEx";
    op.uses = {A, B, C};
    op.run = [=]() {
        std::vector<float> a = copy_rounded((const float *)A, ar, ac, lda, keep),
                           b = copy_rounded((const float *)B, br, bc, ldb, keep);
        if (m && n)
            cblas_sgemm(CblasColMajor, tA ? CblasTrans : CblasNoTrans, tB ? CblasTrans : CblasNoTrans, m, n, k, al,
                        a.data(), lda, b.data(), ldb, be, (float *)C, ldc);
    };
    enqueue(h->s, std::move(op));
    return CUBLAS_STATUS_SUCCESS;
}

cusparseStatus_t cusparseCreate(cusparseHandle_t *h)
{
    *h = new cusparseContext{nullptr};
    return CUSPARSE_STATUS_SUCCESS;
}
cusparseStatus_t cusparseDestroy(cusparseHandle_t h)
{
    delete h;
    return CUSPARSE_STATUS_SUCCESS;
}
cusparseStatus_t cusparseSetStream(cusparseHandle_t h, cudaStream_t s)
{
    if (!h)
        return CUSPARSE_STATUS_NOT_INITIALIZED;
    h->s = s;
    return CUSPARSE_STATUS_SUCCESS;
}
const char *cusparseGetErrorName(cusparseStatus_t e)
{
    switch (e) {
    case CUSPARSE_STATUS_SUCCESS: return "CUSPARSE_STATUS_SUCCESS";
    case CUSPARSE_STATUS_INVALID_VALUE: return "CUSPARSE_STATUS_INVALID_VALUE";
    case CUSPARSE_STATUS_NOT_SUPPORTED: return "CUSPARSE_STATUS_NOT_SUPPORTED";
    case CUSPARSE_STATUS_NOT_INITIALIZED: return "CUSPARSE_STATUS_NOT_INITIALIZED";
    default: return "CUSPARSE_STATUS_INTERNAL_ERROR";
    }
}
const char *cusparseGetErrorString(cusparseStatus_t e)
{
    return e == CUSPARSE_STATUS_SUCCESS ? "success" : "failed (CPU harness: see its report)";
}

cusparseStatus_t cusparseCreateCsr(cusparseSpMatDescr_t *d, int64_t rows, int64_t cols, int64_t nnz, void *rowptr,
                                   void *col, void *val, cusparseIndexType_t rt, cusparseIndexType_t ct,
                                   cusparseIndexBase_t base, cudaDataType vt)
{
    const char *bad = rows < 0 || cols < 0 || nnz < 0 || nnz > rows * cols ? "sizes out of range"
                      : rt != CUSPARSE_INDEX_32I || ct != CUSPARSE_INDEX_32I ? "only 32-bit indices are in the harness"
                      : base != CUSPARSE_INDEX_BASE_ZERO || vt != CUDA_R_32F ? "only zero-based fp32 CSR is in the harness"
                      : nnz > INT32_MAX                                       ? "nnz does not fit 32-bit indices"
                      : !find_alloc(rowptr, (size_t)(rows + 1) * 4)          ? "the row offsets are not device memory"
                      : nnz && (!find_alloc(col, (size_t)nnz * 4) || !find_alloc(val, (size_t)nnz * 4))
                          ? "the columns or values are not nnz entries of device memory"
                          : nullptr;
    if (bad) {
        report("cuda-host: cusparseCreateCsr(%lld × %lld, nnz %lld): %s", (long long)rows, (long long)cols,
               (long long)nnz, bad);
        return CUSPARSE_STATUS_INVALID_VALUE;
    }
    *d = new cusparseSpMatDescr{rows, cols, nnz, (const int32_t *)rowptr, (const int32_t *)col, (const float *)val};
    return CUSPARSE_STATUS_SUCCESS;
}

cusparseStatus_t cusparseCreateDnMat(cusparseDnMatDescr_t *d, int64_t rows, int64_t cols, int64_t ld, void *values,
                                     cudaDataType vt, cusparseOrder_t order)
{
    bool row = order == CUSPARSE_ORDER_ROW;
    const char *bad = vt != CUDA_R_32F                          ? "only fp32 is in the harness"
                      : ld < (row ? cols : rows)                ? "ld below the matrix's row (or column) length"
                      : !(row ? in_device(values, cols, rows, ld) : in_device(values, rows, cols, ld))
                          ? "the values are not inside one device allocation"
                          : nullptr;
    if (bad) {
        report("cuda-host: cusparseCreateDnMat(%lld × %lld, ld %lld): %s", (long long)rows, (long long)cols,
               (long long)ld, bad);
        return CUSPARSE_STATUS_INVALID_VALUE;
    }
    *d = new cusparseDnMatDescr{rows, cols, ld, (float *)values, order};
    return CUSPARSE_STATUS_SUCCESS;
}

cusparseStatus_t cusparseDestroySpMat(cusparseConstSpMatDescr_t d)
{
    delete d;
    return CUSPARSE_STATUS_SUCCESS;
}
cusparseStatus_t cusparseDestroyDnMat(cusparseConstDnMatDescr_t d)
{
    delete d;
    return CUSPARSE_STATUS_SUCCESS;
}

static const char *spmm_bad(cusparseOperation_t oa, cusparseOperation_t ob, cusparseConstSpMatDescr_t A,
                            cusparseConstDnMatDescr_t B, cusparseDnMatDescr_t C, cudaDataType ct)
{
    if (oa != CUSPARSE_OPERATION_NON_TRANSPOSE || ob != CUSPARSE_OPERATION_NON_TRANSPOSE || ct != CUDA_R_32F)
        return "only non-transposed fp32 products are in the harness";
    if (!A || !B || !C)
        return "a null descriptor";
    if (B->order != CUSPARSE_ORDER_ROW || C->order != CUSPARSE_ORDER_ROW)
        return "only row-major dense matrices are in the harness";
    if (A->cols != B->rows || A->rows != C->rows || B->cols != C->cols)
        return "the shapes do not match (A m × k, B k × n, C m × n)";
    return nullptr;
}

static size_t spmm_workspace(cusparseConstSpMatDescr_t A) { return (size_t)(A->rows + 1) * 8; }

cusparseStatus_t cusparseSpMM_bufferSize(cusparseHandle_t h, cusparseOperation_t oa, cusparseOperation_t ob,
                                         const void *alpha, cusparseConstSpMatDescr_t A, cusparseConstDnMatDescr_t B,
                                         const void *beta, cusparseDnMatDescr_t C, cudaDataType ct,
                                         cusparseSpMMAlg_t alg, size_t *size)
{
    (void)alpha, (void)beta, (void)alg;
    const char *bad = !h ? "no handle" : spmm_bad(oa, ob, A, B, C, ct);
    if (bad) {
        report("cuda-host: cusparseSpMM_bufferSize: %s", bad);
        return CUSPARSE_STATUS_INVALID_VALUE;
    }
    *size = spmm_workspace(A);
    return CUSPARSE_STATUS_SUCCESS;
}

cusparseStatus_t cusparseSpMM(cusparseHandle_t h, cusparseOperation_t oa, cusparseOperation_t ob, const void *alpha,
                              cusparseConstSpMatDescr_t A, cusparseConstDnMatDescr_t B, const void *beta,
                              cusparseDnMatDescr_t C, cudaDataType ct, cusparseSpMMAlg_t alg, void *buf)
{
    (void)alg;
    const char *bad = !h ? "no handle" : spmm_bad(oa, ob, A, B, C, ct);
    if (!bad && !find_alloc(buf, spmm_workspace(A)))
        bad = "the workspace is not the size cusparseSpMM_bufferSize asked for, in device memory";
    if (!bad && (!alpha || !beta || is_device(alpha)))
        bad = "alpha / beta must be host pointers";
    if (bad) {
        report("cuda-host: cusparseSpMM: %s", bad);
        return CUSPARSE_STATUS_INVALID_VALUE;
    }
    float al = *(const float *)alpha, be = *(const float *)beta;
    cusparseSpMatDescr a = *A;
    cusparseDnMatDescr b = *B, c = *C;
    device_op op;
    op.what = "cusparseSpMM";
    op.uses = {a.rowptr, b.values, c.values};
    if (a.nnz)
        op.uses.insert(op.uses.end(), {a.col, a.val});
    op.run = [=]() {
        if (a.rowptr[0] != 0 || a.rowptr[a.rows] != a.nnz) {
            report("cuda-host: cusparseSpMM: CSR row offsets run from %d to %d; nnz is %lld", a.rowptr[0],
                   a.rowptr[a.rows], (long long)a.nnz);
            set_sticky(cudaErrorIllegalAddress);
            return;
        }
        for (int64_t r = 0; r < a.rows; r++) {
            if (a.rowptr[r + 1] < a.rowptr[r] || a.rowptr[r + 1] > a.nnz) {
                report("cuda-host: cusparseSpMM: CSR row offsets go from %d to %d at row %lld (nnz %lld)",
                       a.rowptr[r], a.rowptr[r + 1], (long long)r, (long long)a.nnz);
                set_sticky(cudaErrorIllegalAddress);
                return;
            }
            float *y = c.values + r * c.ld;
            for (int64_t j = 0; j < c.cols; j++)
                y[j] *= be;
            for (int64_t e = a.rowptr[r]; e < a.rowptr[r + 1]; e++) {
                int64_t q = a.col[e];
                if (q < 0 || q >= a.cols ||
                    (e > a.rowptr[r] && q <= a.col[e - 1])) {
                    report("cuda-host: cusparseSpMM: CSR row %lld: entry %lld has column %lld (%s)", (long long)r,
                           (long long)e, (long long)q,
                           q < 0 || q >= a.cols ? "outside the matrix" : "not after the row's previous column");
                    set_sticky(cudaErrorIllegalAddress);
                    return;
                }
                cblas_saxpy((int)c.cols, al * a.val[e], b.values + q * b.ld, 1, y, 1);
            }
        }
    };
    enqueue(h->s, std::move(op));
    return CUSPARSE_STATUS_SUCCESS;
}

} // extern "C"
