// Lesson "coalescing": the fourth seed article's access pattern A[idx * 100], with the stride as a
// parameter. Stride 1 is the coalesced case (a warp reads 128 contiguous bytes); stride >= 8
// puts every thread of a warp in its own 32-byte sector. Both variants run this one kernel, so
// the access pattern is the only difference between them.
extern "C" __global__ void read_strided(
    const float *__restrict__ A, float *__restrict__ B, int n, int stride)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n)
    {
        B[idx] = A[(long long)idx * stride];  // 64-bit offset: n * stride may pass 2^31
    }
}
