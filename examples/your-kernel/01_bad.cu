// The first seed article's deliberately bad kernel ("Bad GEMM"), as a user file.
// One thread per element of C, but threadIdx.x walks the rows: the 32 threads of a warp read 32
// different rows of A and write 32 different rows of C - no two of their addresses are adjacent.
//
//   gemmlab bench examples/your-kernel/01_bad.cu --profile
//
// Every file of this folder declares name=article_gemm: they are versions of one kernel, so
// `gemmlab history article_gemm` shows the article's table from these edits.
// gemmlab: name=article_gemm args=seed block=16,16
// gemmlab: grid = cdiv(M, 16), cdiv(N, 16)
__global__ void gemm_bad(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  int col = blockIdx.y * blockDim.y + threadIdx.y;

  if (row >= M || col >= N) {
    return;
  }

  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
    acc += A[row * K + k] * B[k * N + col];
  }
  C[row * N + col] = acc;
}
