// Lesson "atomics": the fourth seed article's two kernels that count the elements equal to K
// (Example 2), as printed there, with extern "C" added.

// One global atomicAdd per matching element: every match contends for the same address.
extern "C" __global__ void count_equal_naive(
    const int *input, int *output, int N, int K)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N && input[idx] == K)
    {
        atomicAdd(output, 1);
    }
}

// Grid-stride count per thread, a tree reduction in shared memory, one atomicAdd per block.
// The reduction halves blockDim.x, so the block size must be a power of two.
extern "C" __global__ void count_equal_optimized(
    const int *input, int *output, int N, int K)
{
    extern __shared__ int I[];
    int g_idx = blockIdx.x * blockDim.x + threadIdx.x;
    int l_idx = threadIdx.x;
    int stride = gridDim.x * blockDim.x;

    // 1. Each thread counts locally
    int count = 0;
    while (g_idx < N)
    {
        if (input[g_idx] == K) count++;
        g_idx += stride;
    }

    // 2. Store in SMEM
    I[l_idx] = count;
    __syncthreads();

    // 3. Parallel reduction in SMEM
    for (int s = blockDim.x / 2; s > 0; s >>= 1)
    {
        if (l_idx < s) I[l_idx] += I[l_idx + s];
        __syncthreads();
    }

    // 4. One atomic write per block
    if (l_idx == 0) atomicAdd(output, I[0]);
}
