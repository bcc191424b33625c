// The smoke test's kernels (gpu-doctor). CUDA C, compiled to PTX for compute_50 by
// scripts/kernels.py; the PTX (smoke.ptx, beside this file) is embedded in the binary, so the
// smoke test needs no CUDA toolkit: the driver JIT-compiles the PTX for whatever GPU it finds.
// Keep to plain C and old instructions: the PTX must assemble for sm_50 through sm_90.

// y[i] = a * x[i] + y[i] for i < n (grid-stride loop).
extern "C" __global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        y[i] = a * x[i] + y[i];
    }
}

#define TILE 16

// C = A * B for square row-major n x n matrices, one output per thread, 16 x 16 shared-memory
// tiles. Launch with 16 x 16 blocks on a ceil(n/16) x ceil(n/16) grid. Deterministic: the same
// inputs give bit-identical outputs, which the burn relies on.
extern "C" __global__ void sgemm(int n, const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        As[ty][tx] = (row < n && t + tx < n) ? A[row * n + t + tx] : 0.0f;
        Bs[ty][tx] = (col < n && t + ty < n) ? B[(t + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    if (row < n && col < n) {
        C[row * n + col] = acc;
    }
}

// Adds to *errors the number of i < n where a[i] and b[i] differ in any bit (grid-stride loop).
extern "C" __global__ void count_mismatches(int n, const float *__restrict__ a, const float *__restrict__ b, unsigned int *errors)
{
    unsigned int local = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        if (__float_as_uint(a[i]) != __float_as_uint(b[i])) {
            local++;
        }
    }
    if (local != 0) {
        atomicAdd(errors, local);
    }
}
