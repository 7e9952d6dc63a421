// bench/native/bench.cu: the native baseline of the tscuda microbenchmarks.
//
// Every metric is measured with the CUDA driver API (and cuFFT) from plain C-style
// host code, so that tscuda, CuPy, PyTorch and cuda-python can be compared with what
// the hardware and driver give a C program. The harness builds it with
//   nvcc -O2 -arch=sm_90 -o $BUILD/bench_native bench/native/bench.cu -lcuda -lcufft
// and reads one JSON line from stdout:
//   {"peer":"c","available":true,"version":"...",
//    "metrics":{"<name>":{"median":x,"spread":(p90-p10)/median,"samples":n}}}
// Progress and errors go to stderr. A metric that fails is left out of "metrics" and
// its message goes to stderr and to an "errors" object (present only when non-empty).
// If no CUDA device can be initialised the line is {"peer":"c","available":false,...}.
//
// Options: --only <POSIX extended regex> (unanchored, matched against metric names),
//          --reps N (repetitions per metric, default 15), --iters N (loop length of
//          the per-call metrics, default 20000), --help.
//
// Three kinds of measurement (the python peers use the same three):
//   loop:       host wall time of --iters calls followed by one synchronisation,
//               divided by --iters; one sample per repetition (after one warm-up loop).
//   per-iter:   host wall time of each iteration on its own; reps*200 samples.
//   gpu-timed:  cuEventElapsedTime between two events around the GPU work; one
//               sample per repetition, after warm-up.
// The kernels are defined in this file and launched through cuLaunchKernel with the
// CUfunction the runtime registered for them (cudaGetFuncBySymbol), on the device's
// primary context, which the runtime and cuFFT share.

#include <cuda.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <regex.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

// ---------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------

extern "C" __global__ void empty() {}

extern "C" __global__ void k4(float* a, float* b, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] = b[i] * s;
}

// Deterministic, finite input for the FFTs: small values so that one forward
// transform cannot overflow.
template <typename T>
__global__ void fill_pattern(T* p, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    p[i] = (T)((int)(i % 17) - 8) * (T)0.01;
  }
}

// ---------------------------------------------------------------------------------
// Error checking: every CUresult / cudaError_t / cufftResult goes through CHECK,
// which throws with file:line, the call, the error's name and description.
// ---------------------------------------------------------------------------------

struct BenchError : std::runtime_error {
  explicit BenchError(const std::string& m) : std::runtime_error(m) {}
};

static const char* cufft_error_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "CUFFT_UNKNOWN_ERROR";
  }
}

[[noreturn]] static void fail(const char* file, int line, const char* call, const char* name,
                              int code, const char* desc) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s:%d: %s failed: %s (%d)%s%s", file, line, call, name, code,
           desc && *desc ? ": " : "", desc ? desc : "");
  throw BenchError(buf);
}

static void check(CUresult r, const char* call, const char* file, int line) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* desc = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS) name = "CUDA_ERROR_UNKNOWN";
  if (cuGetErrorString(r, &desc) != CUDA_SUCCESS) desc = "";
  fail(file, line, call, name, (int)r, desc);
}

static void check(cudaError_t r, const char* call, const char* file, int line) {
  if (r == cudaSuccess) return;
  fail(file, line, call, cudaGetErrorName(r), (int)r, cudaGetErrorString(r));
}

static void check(cufftResult r, const char* call, const char* file, int line) {
  if (r == CUFFT_SUCCESS) return;
  fail(file, line, call, cufft_error_name(r), (int)r, "");
}

#define CHECK(call) check((call), #call, __FILE__, __LINE__)

// ---------------------------------------------------------------------------------
// Owners of CUDA resources, so that a metric that throws frees what it made.
// Destructors ignore errors (the context may already be in a sticky error state).
// ---------------------------------------------------------------------------------

struct NoCopy {
  NoCopy() = default;
  NoCopy(const NoCopy&) = delete;
  NoCopy& operator=(const NoCopy&) = delete;
};

struct Stream : NoCopy {
  CUstream h = nullptr;
  Stream() { CHECK(cuStreamCreate(&h, CU_STREAM_NON_BLOCKING)); }
  ~Stream() { if (h) cuStreamDestroy(h); }
  operator CUstream() const { return h; }
};

struct Event : NoCopy {
  CUevent h = nullptr;
  explicit Event(unsigned flags) { CHECK(cuEventCreate(&h, flags)); }
  ~Event() { if (h) cuEventDestroy(h); }
  operator CUevent() const { return h; }
};

struct DeviceMem : NoCopy {
  CUdeviceptr p = 0;
  explicit DeviceMem(size_t bytes) { CHECK(cuMemAlloc(&p, bytes)); }
  ~DeviceMem() { if (p) cuMemFree(p); }
};

struct PinnedMem : NoCopy {
  void* p = nullptr;
  explicit PinnedMem(size_t bytes) {
    CHECK(cuMemHostAlloc(&p, bytes, 0));
    memset(p, 1, bytes);
  }
  ~PinnedMem() { if (p) cuMemFreeHost(p); }
};

struct PageableMem : NoCopy {
  void* p = nullptr;
  explicit PageableMem(size_t bytes) {
    p = malloc(bytes);
    if (!p) throw BenchError("malloc failed");
    memset(p, 1, bytes);  // touch every page before timing
  }
  ~PageableMem() { free(p); }
};

struct Graph : NoCopy {
  CUgraph g = nullptr;
  CUgraphExec exec = nullptr;
  ~Graph() {
    if (exec) cuGraphExecDestroy(exec);
    if (g) cuGraphDestroy(g);
  }
};

struct FftPlan : NoCopy {
  cufftHandle h = 0;
  bool made = false;
  ~FftPlan() { if (made) cufftDestroy(h); }
};

// ---------------------------------------------------------------------------------
// Timing and statistics
// ---------------------------------------------------------------------------------

static double now_us() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

// Linear interpolation between closest ranks (numpy's default), on sorted data.
static double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return NAN;
  double pos = q * (double)(sorted.size() - 1);
  size_t lo = (size_t)std::floor(pos);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - (double)lo);
}

struct Result {
  double median = NAN;
  double spread = NAN;
  size_t samples = 0;
};

static Result summarize(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  Result r;
  r.samples = xs.size();
  r.median = quantile(xs, 0.5);
  double p10 = quantile(xs, 0.1), p90 = quantile(xs, 0.9);
  r.spread = r.median != 0.0 ? (p90 - p10) / r.median : 0.0;
  return r;
}

// ---------------------------------------------------------------------------------
// Shared state and measurement shapes
// ---------------------------------------------------------------------------------

struct Options {
  int reps = 15;
  int iters = 20000;
};

static CUfunction g_empty = nullptr;
static CUfunction g_k4 = nullptr;

static const size_t kBigBytes = 256u << 20;    // 256 MiB bandwidth transfers
static const size_t kSmallBytes = 4096;        // 4 KiB round trip
static const size_t kAllocBytes = 1u << 20;    // 1 MiB stream-ordered allocation
static const int kGraphKernels = 100;          // kernels captured per graph
static const int kGraphLaunches = 200;         // graph launches per repetition
static const int kPerIterSamplesPerRep = 200;  // per-iter metrics: reps * this samples

static void launch_empty(CUstream s) {
  CHECK(cuLaunchKernel(g_empty, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr));
}

// loop: host time of `iters` calls of body() then sync(), per call; one warm-up loop.
template <typename Body, typename Sync>
static Result loop_metric(const Options& o, Body body, Sync sync) {
  auto one = [&]() {
    double t0 = now_us();
    for (int i = 0; i < o.iters; ++i) body();
    sync();
    return (now_us() - t0) / o.iters;
  };
  one();
  std::vector<double> xs;
  for (int r = 0; r < o.reps; ++r) xs.push_back(one());
  return summarize(xs);
}

// per-iter: host time of each body() on its own (body includes its own wait).
template <typename Body>
static Result per_iter_metric(const Options& o, Body body) {
  for (int i = 0; i < 100; ++i) body();  // warm-up
  size_t n = (size_t)o.reps * kPerIterSamplesPerRep;
  std::vector<double> xs;
  xs.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    double t0 = now_us();
    body();
    xs.push_back(now_us() - t0);
  }
  return summarize(xs);
}

// Milliseconds between two timing events that were recorded around some GPU work.
static double elapsed_ms(CUevent a, CUevent b) {
  CHECK(cuEventSynchronize(b));
  float ms = 0.f;
  CHECK(cuEventElapsedTime(&ms, a, b));
  return (double)ms;
}

static double gbps(size_t bytes, double ms) { return (double)bytes / 1e9 / (ms / 1e3); }

// ---------------------------------------------------------------------------------
// Metrics
// ---------------------------------------------------------------------------------

static Result m_launch_empty(const Options& o) {
  Stream s;
  return loop_metric(o, [&] { launch_empty(s); }, [&] { CHECK(cuStreamSynchronize(s)); });
}

static Result m_launch_4args(const Options& o) {
  Stream s;
  DeviceMem a(256), b(256);
  int n = 0;  // the kernel returns at once
  float scale = 2.0f;
  void* params[] = {&a.p, &b.p, &n, &scale};  // built once, as tscuda's Kernel does
  return loop_metric(
      o, [&] { CHECK(cuLaunchKernel(g_k4, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr)); },
      [&] { CHECK(cuStreamSynchronize(s)); });
}

static Result m_launch_sync_roundtrip(const Options& o) {
  Stream s;
  return per_iter_metric(o, [&] {
    launch_empty(s);
    CHECK(cuStreamSynchronize(s));
  });
}

static Result m_await_completion(const Options& o) {
  Stream s;
  Event done(CU_EVENT_DISABLE_TIMING);
  return per_iter_metric(o, [&] {
    launch_empty(s);
    CHECK(cuEventRecord(done, s));
    CUresult r;
    while ((r = cuEventQuery(done)) == CUDA_ERROR_NOT_READY) {
    }
    CHECK(r);
  });
}

static Result m_event_record(const Options& o) {
  Stream s;
  Event ev(CU_EVENT_DISABLE_TIMING);
  return loop_metric(o, [&] { CHECK(cuEventRecord(ev, s)); },
                     [&] { CHECK(cuStreamSynchronize(s)); });
}

static Result m_event_query(const Options& o) {
  Stream s;
  Event ev(CU_EVENT_DISABLE_TIMING);
  CHECK(cuEventRecord(ev, s));
  CHECK(cuEventSynchronize(ev));
  return loop_metric(o, [&] { CHECK(cuEventQuery(ev)); }, [] {});
}

enum class Dir { H2D, D2H };

static Result pinned_copy(const Options& o, Dir dir) {
  Stream s;
  PinnedMem host(kBigBytes);
  DeviceMem dev(kBigBytes);
  Event t0(0), t1(0);
  auto one = [&] {
    CHECK(cuEventRecord(t0, s));
    if (dir == Dir::H2D)
      CHECK(cuMemcpyHtoDAsync(dev.p, host.p, kBigBytes, s));
    else
      CHECK(cuMemcpyDtoHAsync(host.p, dev.p, kBigBytes, s));
    CHECK(cuEventRecord(t1, s));
    return gbps(kBigBytes, elapsed_ms(t0, t1));
  };
  one();
  one();  // warm-up
  std::vector<double> xs;
  for (int r = 0; r < o.reps; ++r) xs.push_back(one());
  return summarize(xs);
}

static Result m_h2d_pinned(const Options& o) { return pinned_copy(o, Dir::H2D); }
static Result m_d2h_pinned(const Options& o) { return pinned_copy(o, Dir::D2H); }

// H2D on s1 and D2H on s2 at the same time, timed from an event on s1 that s2 waits
// for, to an event on s1 recorded after s1 has waited for s2's end.
static Result m_bidir_pinned(const Options& o) {
  Stream s1, s2;
  PinnedMem h_src(kBigBytes), h_dst(kBigBytes);
  DeviceMem d_dst(kBigBytes), d_src(kBigBytes);
  Event start(0), end(0), s2_done(CU_EVENT_DISABLE_TIMING);
  auto one = [&] {
    CHECK(cuEventRecord(start, s1));
    CHECK(cuStreamWaitEvent(s2, start, 0));
    CHECK(cuMemcpyHtoDAsync(d_dst.p, h_src.p, kBigBytes, s1));
    CHECK(cuMemcpyDtoHAsync(h_dst.p, d_src.p, kBigBytes, s2));
    CHECK(cuEventRecord(s2_done, s2));
    CHECK(cuStreamWaitEvent(s1, s2_done, 0));
    CHECK(cuEventRecord(end, s1));
    return gbps(2 * kBigBytes, elapsed_ms(start, end));
  };
  one();
  one();
  std::vector<double> xs;
  for (int r = 0; r < o.reps; ++r) xs.push_back(one());
  return summarize(xs);
}

// Synchronous copy from malloc'd memory; the context is synchronised after it because
// a pageable H2D copy may return before the last staged chunk has landed.
static Result m_h2d_pageable(const Options& o) {
  PageableMem host(kBigBytes);
  DeviceMem dev(kBigBytes);
  auto one = [&] {
    CHECK(cuCtxSynchronize());
    double t0 = now_us();
    CHECK(cuMemcpyHtoD(dev.p, host.p, kBigBytes));
    CHECK(cuCtxSynchronize());
    return (double)kBigBytes / 1e9 / ((now_us() - t0) / 1e6);
  };
  one();
  std::vector<double> xs;
  for (int r = 0; r < o.reps; ++r) xs.push_back(one());
  return summarize(xs);
}

static Result m_small_copy_roundtrip(const Options& o) {
  Stream s;
  PinnedMem h_src(kSmallBytes), h_dst(kSmallBytes);
  DeviceMem dev(kSmallBytes);
  return per_iter_metric(o, [&] {
    CHECK(cuMemcpyHtoDAsync(dev.p, h_src.p, kSmallBytes, s));
    CHECK(cuMemcpyDtoHAsync(h_dst.p, dev.p, kSmallBytes, s));
    CHECK(cuStreamSynchronize(s));
  });
}

static Result m_alloc_free_async(const Options& o) {
  Stream s;
  return loop_metric(
      o,
      [&] {
        CUdeviceptr p = 0;
        CHECK(cuMemAllocAsync(&p, kAllocBytes, s));
        CHECK(cuMemFreeAsync(p, s));
      },
      [&] { CHECK(cuStreamSynchronize(s)); });
}

static Result m_graph_replay_per_kernel(const Options& o) {
  Stream s;
  launch_empty(s);  // the module is loaded before capture starts
  CHECK(cuStreamSynchronize(s));
  Graph graph;
  CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  for (int i = 0; i < kGraphKernels; ++i) launch_empty(s);
  CHECK(cuStreamEndCapture(s, &graph.g));
  CHECK(cuGraphInstantiate(&graph.exec, graph.g, 0));
  CHECK(cuGraphUpload(graph.exec, s));
  auto one = [&] {
    double t0 = now_us();
    for (int i = 0; i < kGraphLaunches; ++i) CHECK(cuGraphLaunch(graph.exec, s));
    CHECK(cuStreamSynchronize(s));
    return (now_us() - t0) / ((double)kGraphLaunches * kGraphKernels);
  };
  one();
  std::vector<double> xs;
  for (int r = 0; r < o.reps; ++r) xs.push_back(one());
  return summarize(xs);
}

static Result m_coordinator_edge(const Options& o) {
  Stream s1, s2;
  Event ev(CU_EVENT_DISABLE_TIMING);
  return loop_metric(
      o,
      [&] {
        CHECK(cuEventRecord(ev, s1));
        CHECK(cuStreamWaitEvent(s2, ev, 0));
      },
      [&] {
        CHECK(cuStreamSynchronize(s1));
        CHECK(cuStreamSynchronize(s2));
      });
}

// Batched 1D FFT, 8192 transforms of length 4096, forward, in place. The input is
// refilled (untimed) before each timed exec so that repeated in-place forward
// transforms never grow into inf/NaN.
template <typename Elem, typename Real>
static Result fft_metric(const Options& o, cufftType type) {
  const int n = 4096, batch = 8192;
  const size_t elems = (size_t)n * batch;
  const size_t reals = elems * 2;
  Stream s;
  DeviceMem data(elems * sizeof(Elem));
  Real* reals_ptr = reinterpret_cast<Real*>((uintptr_t)data.p);
  Elem* elems_ptr = reinterpret_cast<Elem*>((uintptr_t)data.p);
  auto fill = [&] {
    fill_pattern<Real><<<1024, 256, 0, (cudaStream_t)s.h>>>(reals_ptr, reals);
    CHECK(cudaGetLastError());
  };
  FftPlan plan;
  int dims[1] = {n};
  CHECK(cufftPlanMany(&plan.h, 1, dims, nullptr, 1, n, nullptr, 1, n, type, batch));
  plan.made = true;
  CHECK(cufftSetStream(plan.h, (cudaStream_t)s.h));
  auto exec = [&] {
    if (type == CUFFT_C2C) {
      CHECK(cufftExecC2C(plan.h, (cufftComplex*)elems_ptr, (cufftComplex*)elems_ptr,
                         CUFFT_FORWARD));
    } else {
      CHECK(cufftExecZ2Z(plan.h, (cufftDoubleComplex*)elems_ptr,
                         (cufftDoubleComplex*)elems_ptr, CUFFT_FORWARD));
    }
  };
  Event t0(0), t1(0);
  auto one = [&] {
    fill();
    CHECK(cuEventRecord(t0, s));
    exec();
    CHECK(cuEventRecord(t1, s));
    return elapsed_ms(t0, t1);
  };
  for (int i = 0; i < 3; ++i) one();  // warm-up
  std::vector<double> xs;
  for (int r = 0; r < o.reps; ++r) xs.push_back(one());
  return summarize(xs);
}

static Result m_fft_c2c(const Options& o) { return fft_metric<cufftComplex, float>(o, CUFFT_C2C); }
static Result m_fft_z2z(const Options& o) {
  return fft_metric<cufftDoubleComplex, double>(o, CUFFT_Z2Z);
}

struct Metric {
  const char* name;
  Result (*run)(const Options&);
};

static const Metric kMetrics[] = {
    {"launch_empty_us", m_launch_empty},
    {"launch_4args_us", m_launch_4args},
    {"launch_sync_roundtrip_us", m_launch_sync_roundtrip},
    {"await_completion_us", m_await_completion},
    {"event_record_us", m_event_record},
    {"event_query_us", m_event_query},
    {"h2d_pinned_gbps", m_h2d_pinned},
    {"d2h_pinned_gbps", m_d2h_pinned},
    {"bidir_pinned_gbps", m_bidir_pinned},
    {"h2d_pageable_gbps", m_h2d_pageable},
    {"small_copy_roundtrip_us", m_small_copy_roundtrip},
    {"alloc_free_async_us", m_alloc_free_async},
    {"graph_replay_per_kernel_us", m_graph_replay_per_kernel},
    {"coordinator_edge_us", m_coordinator_edge},
    {"fft_c2c_4096x8192_ms", m_fft_c2c},
    {"fft_z2z_4096x8192_ms", m_fft_z2z},
};

// ---------------------------------------------------------------------------------
// Set-up, JSON output, main
// ---------------------------------------------------------------------------------

static std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += (char)c;
        }
    }
  }
  return out + "\"";
}

static std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[64];
  snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

// Makes the primary context current, resolves the kernels and returns a version line.
static std::string init_cuda() {
  CHECK(cuInit(0));
  int count = 0;
  CHECK(cuDeviceGetCount(&count));
  if (count < 1) throw BenchError("no CUDA device");
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CHECK(cudaSetDevice(0));
  CHECK(cudaGetFuncBySymbol(&g_empty, (const void*)empty));
  CHECK(cudaGetFuncBySymbol(&g_k4, (const void*)k4));

  char name[256] = {0};
  CHECK(cuDeviceGetName(name, (int)sizeof name - 1, dev));
  int driver = 0, fft = 0;
  CHECK(cuDriverGetVersion(&driver));
  CHECK(cufftGetVersion(&fft));
  char buf[512];
  snprintf(buf, sizeof buf, "driver %d.%d, built with CUDA %d.%d, cuFFT %d, %s", driver / 1000,
           (driver % 1000) / 10, CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10, fft, name);
  return buf;
}

static void usage(FILE* f) {
  fprintf(f,
          "usage: bench_native [--only REGEX] [--reps N] [--iters N]\n"
          "Runs the native CUDA driver-API baseline and prints one JSON line on stdout.\n");
}

int main(int argc, char** argv) {
  // Whatever a library might print goes to stderr; the JSON line alone goes to the
  // original stdout.
  fflush(stdout);
  int json_fd = dup(STDOUT_FILENO);
  FILE* json = json_fd >= 0 ? fdopen(json_fd, "w") : nullptr;
  if (!json) json = stdout;
  else dup2(STDERR_FILENO, STDOUT_FILENO);

  Options opt;
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        fprintf(stderr, "bench_native: %s needs a value\n", flag);
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--only") only = value("--only");
    else if (a.rfind("--only=", 0) == 0) only = argv[i] + 7;
    else if (a == "--reps") opt.reps = atoi(value("--reps"));
    else if (a.rfind("--reps=", 0) == 0) opt.reps = atoi(argv[i] + 7);
    else if (a == "--iters") opt.iters = atoi(value("--iters"));
    else if (a.rfind("--iters=", 0) == 0) opt.iters = atoi(argv[i] + 8);
    else if (a == "--help" || a == "-h") {
      usage(stderr);
      return 0;
    } else {
      fprintf(stderr, "bench_native: ignoring unknown argument %s\n", a.c_str());
    }
  }
  if (opt.reps < 1) opt.reps = 1;
  if (opt.iters < 1) opt.iters = 1;

  regex_t re;
  bool filter = only && *only;
  if (filter) {
    int rc = regcomp(&re, only, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
      char msg[256];
      regerror(rc, &re, msg, sizeof msg);
      fprintf(stderr, "bench_native: bad --only pattern '%s': %s\n", only, msg);
      return 2;
    }
  }

  std::string version;
  try {
    version = init_cuda();
  } catch (const std::exception& e) {
    fprintf(stderr, "[c] CUDA unavailable: %s\n", e.what());
    fprintf(json, "{\"peer\":\"c\",\"available\":false,\"reason\":%s}\n",
            json_string(e.what()).c_str());
    fflush(json);
    return 0;
  }
  fprintf(stderr, "[c] %s; reps=%d iters=%d\n", version.c_str(), opt.reps, opt.iters);

  std::string metrics, errors;
  for (const Metric& m : kMetrics) {
    if (filter && regexec(&re, m.name, 0, nullptr, 0) != 0) continue;
    fprintf(stderr, "[c] %-28s ", m.name);
    fflush(stderr);
    double t0 = now_us();
    try {
      CHECK(cuCtxSynchronize());
      Result r = m.run(opt);
      CHECK(cuCtxSynchronize());
      fprintf(stderr, "%12.4f  spread %.3f  n=%zu  (%.1f s)\n", r.median, r.spread, r.samples,
              (now_us() - t0) / 1e6);
      if (!metrics.empty()) metrics += ",";
      metrics += json_string(m.name) + ":{\"median\":" + json_number(r.median) +
                 ",\"spread\":" + json_number(r.spread) +
                 ",\"samples\":" + std::to_string(r.samples) + "}";
    } catch (const std::exception& e) {
      fprintf(stderr, "FAILED: %s\n", e.what());
      if (!errors.empty()) errors += ",";
      errors += json_string(m.name) + ":" + json_string(e.what());
    }
  }
  if (filter) regfree(&re);

  std::string line = "{\"peer\":\"c\",\"available\":true,\"version\":" + json_string(version) +
                     ",\"metrics\":{" + metrics + "}";
  if (!errors.empty()) line += ",\"errors\":{" + errors + "}";
  line += "}\n";
  fputs(line.c_str(), json);
  fflush(json);
  return 0;
}
