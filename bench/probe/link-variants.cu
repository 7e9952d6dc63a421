// How much PCIe carries each way with both directions busy, by how the bytes are moved: copy
// engines (one or two streams a direction) or the SMs themselves (a kernel reading or writing
// mapped pinned host memory). The i16 job moves 2 B in and 2 B out per sample, so the bound that
// limits it is the both-directions one; this asks whether any way of moving the bytes lifts it.
//   nvcc -O3 -arch=native -o /tmp/link-variants bench/probe/link-variants.cu && /tmp/link-variants [MiB]
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

// Copies n 16-byte words; grid-stride so a few thousand threads keep enough stores in flight.
__global__ void copy_words(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) dst[i] = src[i];
}

static size_t g_bytes;
static int g_sms;

// Moves g_bytes from src to dst, in `parts` chunks (one a stream): by a copy engine
// (cudaMemcpyAsync of `kind`) when blocksPerSm is 0, else by a kernel of blocksPerSm blocks per SM
// whose loads or stores cross PCIe (src or dst is mapped pinned host memory).
struct Mover {
  void *dst, *src;
  cudaMemcpyKind kind;
  int blocksPerSm;
  void go(cudaStream_t s, size_t part, size_t parts) const {
    size_t chunk = g_bytes / parts;
    char *to = (char*)dst + part * chunk, *from = (char*)src + part * chunk;
    if (blocksPerSm == 0) {
      CHECK(cudaMemcpyAsync(to, from, chunk, kind, s));
    } else {
      copy_words<<<g_sms * blocksPerSm / (int)parts, 256, 0, s>>>((const int4*)from, (int4*)to, chunk / 16);
      CHECK(cudaGetLastError());
    }
  }
};

// GB/s each way (median of reps) with `up` moving host->device and `down` device->host at once,
// each split over `streams` streams; either may be null (one way only).
static void measure(const char* label, const Mover* up, const Mover* down, int streams) {
  std::vector<cudaStream_t> su(streams), sd(streams);
  for (auto& s : su) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (auto& s : sd) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<double> gbps;
  for (int rep = 0; rep < 12; ++rep) {
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    cudaStream_t head = su[0];
    CHECK(cudaEventRecord(t0, head));
    for (int i = 0; i < streams; ++i) {
      CHECK(cudaStreamWaitEvent(su[i], t0, 0));
      CHECK(cudaStreamWaitEvent(sd[i], t0, 0));
      if (up) up->go(su[i], i, streams);
      if (down) down->go(sd[i], i, streams);
    }
    for (int i = 0; i < streams; ++i) {
      cudaEvent_t done;
      CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
      CHECK(cudaEventRecord(done, su[i]));
      CHECK(cudaStreamWaitEvent(head, done, 0));
      CHECK(cudaEventRecord(done, sd[i]));
      CHECK(cudaStreamWaitEvent(head, done, 0));
      CHECK(cudaEventDestroy(done));
    }
    CHECK(cudaEventRecord(t1, head));
    CHECK(cudaEventSynchronize(t1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    if (rep >= 2) gbps.push_back(g_bytes / 1e9 / (ms / 1e3));
    CHECK(cudaEventDestroy(t0));
    CHECK(cudaEventDestroy(t1));
  }
  std::sort(gbps.begin(), gbps.end());
  std::printf("%-58s %6.1f GB/s each way (min %5.1f, max %5.1f)\n", label, gbps[gbps.size() / 2], gbps.front(), gbps.back());
  for (auto s : su) CHECK(cudaStreamDestroy(s));
  for (auto s : sd) CHECK(cudaStreamDestroy(s));
}

int main(int argc, char** argv) {
  g_bytes = (argc > 1 ? std::atoi(argv[1]) : 64) * (size_t)1 << 20;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  std::printf("%s, %d SMs, %zu MiB a direction\n", prop.name, g_sms, g_bytes >> 20);
  void *hIn, *hOut, *dIn, *dOut, *hInDev, *hOutDev;
  CHECK(cudaHostAlloc(&hIn, g_bytes, cudaHostAllocMapped));
  CHECK(cudaHostAlloc(&hOut, g_bytes, cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer(&hInDev, hIn, 0));
  CHECK(cudaHostGetDevicePointer(&hOutDev, hOut, 0));
  CHECK(cudaMalloc(&dIn, g_bytes));
  CHECK(cudaMalloc(&dOut, g_bytes));
  for (size_t i = 0; i < g_bytes; ++i) ((unsigned char*)hIn)[i] = (unsigned char)(i * 2654435761u >> 13);
  CHECK(cudaMemset(dOut, 0x5a, g_bytes));

  const Mover dmaUp{dIn, hIn, cudaMemcpyHostToDevice, 0}, dmaDown{hOut, dOut, cudaMemcpyDeviceToHost, 0};
  const Mover smDown1{hOutDev, dOut, cudaMemcpyDefault, 1}, smUp4{dIn, hInDev, cudaMemcpyDefault, 4}, smDown4{hOutDev, dOut, cudaMemcpyDefault, 4};
  measure("one way: H2D copy engine", &dmaUp, nullptr, 1);
  measure("one way: D2H copy engine", nullptr, &dmaDown, 1);
  measure("one way: H2D by SM loads (4 blocks/SM)", &smUp4, nullptr, 1);
  measure("one way: D2H by SM stores (1 block/SM)", nullptr, &smDown1, 1);
  measure("one way: D2H by SM stores (4 blocks/SM)", nullptr, &smDown4, 1);
  measure("both: copy engines, 1 stream a direction", &dmaUp, &dmaDown, 1);
  measure("both: copy engines, 2 streams a direction", &dmaUp, &dmaDown, 2);
  measure("both: copy engines, 4 streams a direction", &dmaUp, &dmaDown, 4);
  measure("both: H2D copy engine + D2H SM stores (1 block/SM)", &dmaUp, &smDown1, 1);
  measure("both: H2D copy engine + D2H SM stores (4 blocks/SM)", &dmaUp, &smDown4, 1);
  measure("both: H2D SM loads + D2H copy engine", &smUp4, &dmaDown, 1);
  measure("both: SM loads + SM stores", &smUp4, &smDown4, 1);
  // The bytes arrived intact both ways (a probe that moved nothing would look fast).
  std::vector<unsigned char> back(g_bytes);
  CHECK(cudaMemcpy(back.data(), dIn, g_bytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < g_bytes; ++i)
    if (back[i] != ((unsigned char*)hIn)[i]) { std::printf("H2D bytes differ at %zu\n", i); return 1; }
  for (size_t i = 0; i < g_bytes; ++i)
    if (((unsigned char*)hOut)[i] != 0x5a) { std::printf("D2H bytes differ at %zu\n", i); return 1; }
  std::printf("bytes checked both ways\n");
  return 0;
}
