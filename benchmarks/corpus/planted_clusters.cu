// Planted cluster launches for the cluster corpus (benchmarks/corpus/workload_clusters.py).
// The same block of work - eight independent FMA chains a thread, 1024 threads - launched in
// thread-block clusters of 2, 4 or 8 (__cluster_dims__), with enough dynamic shared memory that
// one block fits an SM. A cluster's blocks share one GPC, so the GPU holds fewer clusters at once
// than SMs / cluster size (CLUSTER_SLOTS_132: 66 of 2, 30 of 4, 15 of 8 on 132 SMs): a grid of
// 132 blocks in clusters of 4 runs 30 clusters, then the last 3 alone. Each kernel's truth follows
// from its grid and is confirmed from the capture's own numbers (SMs active vs elapsed).

__device__ __forceinline__ void fma_block(float* __restrict__ y, int iters, float m, float c) {
    extern __shared__ float stage[];
    float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6,
          a7 = a0 + 7;
    for (int k = 0; k < iters; ++k) {
        a0 = fmaf(a0, m, c); a1 = fmaf(a1, m, c); a2 = fmaf(a2, m, c); a3 = fmaf(a3, m, c);
        a4 = fmaf(a4, m, c); a5 = fmaf(a5, m, c); a6 = fmaf(a6, m, c); a7 = fmaf(a7, m, c);
    }
    stage[threadIdx.x] = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.f;
        for (int i = 0; i < blockDim.x; ++i) s += stage[i];
        y[blockIdx.x] = s;
    }
}

extern "C" {
__global__ void __cluster_dims__(2, 1, 1) planted_cluster2_fma(float* y, int iters, float m, float c) {
    fma_block(y, iters, m, c);
}
__global__ void __cluster_dims__(4, 1, 1) planted_cluster4_fma(float* y, int iters, float m, float c) {
    fma_block(y, iters, m, c);
}
__global__ void __cluster_dims__(8, 1, 1) planted_cluster8_fma(float* y, int iters, float m, float c) {
    fma_block(y, iters, m, c);
}
}
