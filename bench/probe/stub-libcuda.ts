/**
 * Builds a stub libcuda.so.1 in which every driver function tscuda binds returns CUDA_SUCCESS at
 * once (the few that hand out a count, handle, name or memory fill it in), and prints its folder.
 * With it on LD_LIBRARY_PATH, tscuda runs without a GPU and a call costs koffi plus tscuda's own
 * JavaScript: what bench/probe/ffi-overhead.ts then measures. Needs a C compiler (cc).
 *   LD_LIBRARY_PATH=$(tsx bench/probe/stub-libcuda.ts) tsx bench/probe/ffi-overhead.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execaSync } from 'execa';
// private-path: the generated declaration list, so the stub defines every symbol tscuda may bind
import { DRIVER_FUNCTIONS, DRIVER_LEGACY_FUNCTIONS } from '../../src/ffi/generated/driver.js';

/** The functions that must give something back for tscuda to set up a context, streams, events and memory. */
const FILLED = `
static uintptr_t next_handle = 0x1000;
static void *handle(void) { return (void *)(next_handle += 16); }
static const char *stub_text = "stub";
int cuInit(unsigned f) { return 0; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuDeviceGetCount(int *c) { *c = 1; return 0; }
int cuDeviceGet(int *d, int o) { *d = o; return 0; }
int cuDeviceGetName(char *n, int len, int d) { strncpy(n, "stub GPU", len); return 0; }
int cuDeviceGetAttribute(int *v, int a, int d) { *v = a == 75 ? 9 : a == 76 ? 0 : 1024; return 0; }
int cuDeviceTotalMem_v2(size_t *b, int d) { *b = (size_t)80 << 30; return 0; }
int cuDeviceGetUuid(unsigned char *u, int d) { memset(u, 7, 16); return 0; }
int cuDeviceGetUuid_v2(unsigned char *u, int d) { memset(u, 7, 16); return 0; }
int cuDeviceGetPCIBusId(char *b, int len, int d) { strncpy(b, "0000:01:00.0", len); return 0; }
int cuDevicePrimaryCtxRetain(void **c, int d) { *c = handle(); return 0; }
int cuCtxCreate_v4(void **c, void *p, unsigned f, int d) { *c = handle(); return 0; }
int cuCtxGetDevice(int *d) { *d = 0; return 0; }
int cuCtxGetApiVersion(void *c, unsigned *v) { *v = 13000; return 0; }
int cuMemGetInfo_v2(size_t *f, size_t *t) { *f = (size_t)70 << 30; *t = (size_t)80 << 30; return 0; }
int cuStreamCreate(void **s, unsigned f) { *s = handle(); return 0; }
int cuStreamCreateWithPriority(void **s, unsigned f, int p) { *s = handle(); return 0; }
int cuEventCreate(void **e, unsigned f) { *e = handle(); return 0; }
int cuMemAlloc_v2(uint64_t *p, size_t n) { *p = (uint64_t)(uintptr_t)malloc(n); return 0; }
int cuMemAllocAsync(uint64_t *p, size_t n, void *s) { *p = (uint64_t)(uintptr_t)malloc(n); return 0; }
int cuMemFree_v2(uint64_t p) { free((void *)(uintptr_t)p); return 0; }
int cuMemHostAlloc(void **p, size_t n, unsigned f) { *p = malloc(n); return 0; }
int cuMemFreeHost(void *p) { free(p); return 0; }
int cuMemPoolCreate(void **p, void *props) { *p = handle(); return 0; }
int cuDeviceGetDefaultMemPool(void **p, int d) { *p = handle(); return 0; }
int cuDeviceGetMemPool(void **p, int d) { *p = handle(); return 0; }
int cuLibraryLoadData(void **l, const void *c, void *o, void *ov, unsigned n, void *lo, void *lov, unsigned m) { *l = handle(); return 0; }
int cuLibraryGetKernel(void **k, void *l, const char *name) { *k = handle(); return 0; }
int cuKernelGetFunction(void **f, void *k) { *f = handle(); return 0; }
int cuFuncGetAttribute(int *v, int a, void *f) { *v = 1024; return 0; }
int cuFuncGetParamInfo(void *f, size_t i, size_t *o, size_t *s) { return 801; } /* not supported: no layout check */
int cuGetErrorName(int e, const char **s) { *s = stub_text; return 0; }
int cuGetErrorString(int e, const char **s) { *s = stub_text; return 0; }
`;

const filled = new Set([...FILLED.matchAll(/^int (cu\w+)\(/gm)].map((m) => m[1]!));
const symbols = new Set<string>();
for (const [, symbol, , , perThread] of [...DRIVER_FUNCTIONS, ...DRIVER_LEGACY_FUNCTIONS]) {
  symbols.add(symbol);
  if (perThread) symbols.add(perThread);
}
const rest = [...symbols].filter((s) => !filled.has(s)).map((s) => `int ${s}() { return 0; }`);
const dir = join(tmpdir(), 'tscuda-stub-libcuda');
mkdirSync(dir, { recursive: true });
writeFileSync(
  join(dir, 'stub.c'),
  ['#include <stdint.h>', '#include <stdlib.h>', '#include <string.h>', FILLED, ...rest, ''].join('\n'),
);
execaSync('cc', ['-O2', '-shared', '-fPIC', '-w', '-o', join(dir, 'libcuda.so.1'), join(dir, 'stub.c')]);
console.log(dir);
