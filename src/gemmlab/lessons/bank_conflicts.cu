// Lesson "bank_conflicts": the fourth seed article's tile __shared__ float A[32][32], read
// row-wise (no conflict), read column-wise (32-way conflict) and padded to [32][33] (column reads
// spread over all 32 banks). A 32x8 block moves one 32x32 tile of an n x n matrix, 4 rows per
// thread; the column-wise read is what a matrix transpose needs.
#define TILE 32
#define ROWS 8

// Row-wise on both sides: a copy through shared memory, conflict-free (the speed to aim for).
extern "C" __global__ void tile_copy_rows(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float A[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < n && y + j < n) A[threadIdx.y + j][threadIdx.x] = in[(unsigned long long)(y + j) * n + x];
    __syncthreads();
    for (int j = 0; j < TILE; j += ROWS)
        if (x < n && y + j < n) out[(unsigned long long)(y + j) * n + x] = A[threadIdx.y + j][threadIdx.x];
}

// Transpose: rows in, columns out. A[threadIdx.x][c] puts all 32 threads of a warp in one bank
// when a row is 32 floats long; 33 floats shift each row by one bank.
#define TRANSPOSE(NAME, WIDTH)                                                                  \
    extern "C" __global__ void NAME(const float *__restrict__ in, float *__restrict__ out, int n) \
    {                                                                                           \
        __shared__ float A[TILE][WIDTH];                                                        \
        int x = blockIdx.x * TILE + threadIdx.x;                                                \
        int y = blockIdx.y * TILE + threadIdx.y;                                                \
        for (int j = 0; j < TILE; j += ROWS)                                                    \
            if (x < n && y + j < n) A[threadIdx.y + j][threadIdx.x] = in[(unsigned long long)(y + j) * n + x]; \
        __syncthreads();                                                                        \
        x = blockIdx.y * TILE + threadIdx.x;                                                    \
        y = blockIdx.x * TILE + threadIdx.y;                                                    \
        for (int j = 0; j < TILE; j += ROWS)                                                    \
            if (x < n && y + j < n) out[(unsigned long long)(y + j) * n + x] = A[threadIdx.x][threadIdx.y + j]; \
    }

TRANSPOSE(transpose_tile_32x32, TILE)      // __shared__ float A[32][32]: 32-way conflict
TRANSPOSE(transpose_tile_32x33, TILE + 1)  // __shared__ float A[32][33]: the article's padding
