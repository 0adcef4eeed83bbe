// One step past the first article: 2D block tiling in siboehm/SGEMM_CUDA's calling convention
// (M, N, K, alpha, A, B, beta, C). Each of the 64 threads computes an 8x8 block of C from registers,
// so every value loaded from shared memory feeds 8 FMAs instead of 1.
// Bounds are checked on every load and store: it is correct at any M, N, K.
// gemmlab: name=article_gemm args=sgemm
// gemmlab: kernel=sgemm_2d<BM,BN,BK,TM,TN> BM=64 BN=64 BK=8 TM=8 TN=8
// gemmlab: block = BM * BN / (TM * TN)
// gemmlab: tile = BM, BN
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM * BN) / (TM * TN))
sgemm_2d(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  constexpr int THREADS = (BM * BN) / (TM * TN);
  __shared__ float As[BK][BM];  // A's tile, transposed: a thread reads TM consecutive rows
  __shared__ float Bs[BK][BN];

  const int block_row = blockIdx.y * BM;
  const int block_col = blockIdx.x * BN;
  const int thread_row = threadIdx.x / (BN / TN);
  const int thread_col = threadIdx.x % (BN / TN);

  float acc[TM][TN] = {};
  float a_reg[TM];
  float b_reg[TN];

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = threadIdx.x; i < BM * BK; i += THREADS) {  // A: BM x BK, consecutive k per thread group
      int r = i / BK, c = i % BK;
      int gr = block_row + r, gc = k0 + c;
      As[c][r] = (gr < M && gc < K) ? A[gr * K + gc] : 0.0f;
    }
    for (int i = threadIdx.x; i < BK * BN; i += THREADS) {  // B: BK x BN, consecutive columns
      int r = i / BN, c = i % BN;
      int gr = k0 + r, gc = block_col + c;
      Bs[r][c] = (gr < K && gc < N) ? B[gr * N + gc] : 0.0f;
    }
    __syncthreads();

    #pragma unroll
    for (int k = 0; k < BK; ++k) {
      #pragma unroll
      for (int m = 0; m < TM; ++m) a_reg[m] = As[k][thread_row * TM + m];
      #pragma unroll
      for (int n = 0; n < TN; ++n) b_reg[n] = Bs[k][thread_col * TN + n];
      #pragma unroll
      for (int m = 0; m < TM; ++m)
        #pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] += a_reg[m] * b_reg[n];
    }
    __syncthreads();
  }

  #pragma unroll
  for (int m = 0; m < TM; ++m) {
    int r = block_row + thread_row * TM + m;
    #pragma unroll
    for (int n = 0; n < TN; ++n) {
      int c = block_col + thread_col * TN + n;
      if (r < M && c < N) {
        float old = beta != 0.0f ? C[r * N + c] : 0.0f;  // BLAS: C is not read when beta is 0
        C[r * N + c] = alpha * acc[m][n] + beta * old;
      }
    }
  }
}
