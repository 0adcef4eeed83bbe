// Fix 1 of the first seed article: threadIdx.x walks the contiguous column dimension of B and C,
// so a warp's 32 loads of B and stores of C fall on adjacent addresses (one transaction each).
// gemmlab: name=article_gemm args=seed block=16,16
__global__ void gemm_coalesced(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;

  if (row >= M || col >= N) {
    return;
  }

  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
    acc += A[row * K + k] * B[k * N + col];
  }
  C[row * N + col] = acc;
}
