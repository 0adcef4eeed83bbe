// Lesson "occupancy": a memory-bound kernel, one element per thread, whose speed depends on how
// many loads are in flight per SM. The "one block per SM" variant requests (and never touches)
// as much dynamic shared memory as a block may have, so the shared-memory limit allows a single
// resident block per SM: the article's "Shared Memory: Too much per block -> fewer blocks fit on
// the SM -> lower occupancy". The block size is the lesson's sweep.
extern "C" __global__ void scale_shift(
    const float *__restrict__ x, float *__restrict__ y, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
    {
        y[i] = a * x[i] + b;
    }
}
