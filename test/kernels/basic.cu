// Kernels the runtime's tests and benchmarks launch. Built by `npm run build:kernels` into
// kernels/build/basic.fatbin (sm_80 and sm_90 cubins, compute_90 PTX).

extern "C" __global__ void empty() {}

// Four arguments like a typical small kernel; the body never writes (n is never negative).
extern "C" __global__ void k4(float* a, float* b, int n, float s) {
  if (n < 0 && threadIdx.x + blockIdx.x * blockDim.x == 0) a[0] = b[0] * s;
}

extern "C" __global__ void fill_f32(float* out, float value, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = value;
}

extern "C" __global__ void fill_f64(double* out, double value, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = value;
}

extern "C" __global__ void saxpy_f32(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void saxpy_f64(int n, double a, const double* x, double* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void scale_f32(float* y, const float* x, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a * x[i];
}

extern "C" __global__ void add_f32(float* out, const float* a, const float* b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = a[i] + b[i];
}

// Sums one value per thread of a 1-D block (any size up to 1024) in shared memory, then thread 0
// adds the block's total to *out with one atomicAdd(double) (sm_60+). `out` must be zeroed first.
__device__ void block_sum_to(double partial, double* out) {
  __shared__ double s[1024];
  const unsigned n = blockDim.x;
  s[threadIdx.x] = partial;
  __syncthreads();
  // Tree over the next power of two: a partner past the end of the block counts as zero.
  unsigned stride = 1;
  while (stride * 2 < n) stride *= 2;
  for (; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride && threadIdx.x + stride < n) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

extern "C" __global__ void reduce_sum_f64(const double* x, double* out, int n) {
  double acc = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc += x[i];
  block_sum_to(acc, out);
}

extern "C" __global__ void reduce_sum_f32_to_f64(const float* x, double* out, int n) {
  double acc = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc += x[i];
  block_sum_to(acc, out);
}

// Busy-waits about `ns` nanoseconds on the global timer (%globaltimer, in ns): long-running work
// for tests and timelines. Each thread naps briefly between reads so a wide launch does not
// hammer the scheduler; the wait still ends within a few hundred ns of the target.
extern "C" __global__ void spin_ns(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(128);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

// Deliberately writes out of bounds: with a huge offset this faults with CUDA_ERROR_ILLEGAL_ADDRESS.
extern "C" __global__ void oob_write(float* out, long long offset) { out[offset] = 1.0f; }

extern "C" __global__ void write_index_i32(int* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = i;
}

// Busy-waits about `ns` nanoseconds, then copies x into out: a reader that still uses `x` long after
// it was enqueued (the fault suite frees `x` meanwhile and checks the memory was not reused under it).
extern "C" __global__ void spin_then_copy_f32(const float* x, float* out, int n, unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(128);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = x[i];
}
