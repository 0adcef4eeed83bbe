// Lesson "fusion": the fourth seed article's SAXPY variant Y = a*X + b, as two kernels with the
// intermediate Temp in global memory, and fused (Temp lives in a register).

// Temp = a*X -> written to global memory
extern "C" __global__ void kernel_scale(const float *__restrict__ X, float a, float *__restrict__ Temp, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) Temp[i] = a * X[i];
}

// Y = Temp + b <- Temp read back from global memory
extern "C" __global__ void kernel_add(const float *__restrict__ Temp, const float *__restrict__ b,
                                      float *__restrict__ Y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) Y[i] = Temp[i] + b[i];
}

// Y[i] = a*X[i] + b[i], Temp lives in a register
extern "C" __global__ void kernel_fused(const float *__restrict__ X, float a, const float *__restrict__ b,
                                        float *__restrict__ Y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) Y[i] = a * X[i] + b[i];
}
