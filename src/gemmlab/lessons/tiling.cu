// Lesson "tiling": the fourth seed article's two matrix-multiplication kernels, as printed there
// (Example 1), with extern "C" added so the symbols stay readable in profiler output.
// The article's naming: A is M x N, B is N x K, C is M x K, all row-major.

extern "C" __global__ void matrix_multiplication_naive(
    const float *A, const float *B, float *C,
    int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;

    if (row < M && col < K)
    {
        float sum = 0.0f;
        // Loop N times, accessing Global Memory each time
        for (int k = 0; k < N; ++k)
        {
            sum += A[row * N + k] * B[k * K + col];
        }
        C[row * K + col] = sum;
    }
}

#define TILE_SIZE 16

extern "C" __global__ void matrix_multiplication_smem(
    const float *A, const float *B, float *C,
    int M, int N, int K)
{
    __shared__ float As[TILE_SIZE][TILE_SIZE];
    __shared__ float Bs[TILE_SIZE][TILE_SIZE];

    int row = blockIdx.y * TILE_SIZE + threadIdx.y;
    int col = blockIdx.x * TILE_SIZE + threadIdx.x;
    int tx = threadIdx.x;
    int ty = threadIdx.y;

    float sum = 0.0f;

    for (int t = 0; t < (N + TILE_SIZE - 1) / TILE_SIZE; ++t)
    {
        int A_col = t * TILE_SIZE + tx;
        int B_row = t * TILE_SIZE + ty;

        As[ty][tx] = (row < M && A_col < N) ? A[row * N + A_col] : 0.0f;
        Bs[ty][tx] = (B_row < N && col < K) ? B[B_row * K + col] : 0.0f;

        __syncthreads();

#pragma unroll
        for (int i = 0; i < TILE_SIZE; ++i)
        {
            sum += As[ty][i] * Bs[i][tx];
        }

        __syncthreads();
    }

    if (row < M && col < K)
    {
        C[row * K + col] = sum;
    }
}
