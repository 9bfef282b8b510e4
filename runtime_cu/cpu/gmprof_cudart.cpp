// gmprof CPU backend: the CUDA runtime API of whole programs (include/cuda_runtime.h), and the
// fiber scheduler they launch kernels on.
//
// Stage: runtime, CPU backend, whole programs. Compiled once (cached by gmprof nvcc) and linked
// into every program built with GMPROF_BACKEND=cpu, together with gmprof's host runtime. It
// includes the scheduler (gmprof_cpu_runtime.cpp) so that one object holds both.
//
// One emulated device. Memory is host memory (cudaMalloc is a 256-byte aligned allocation that
// the runtime remembers, so that gmprof's host runtime can map a kernel's pointer arguments to
// their allocations, as cuMemGetAddressRange does on a GPU). Streams and events are synchronous:
// every operation has completed when its call returns, which is one legal schedule of the
// asynchronous API. A kernel fault, failed assert or trap is printed (block, thread, and the line
// where known) and becomes a sticky error, as on a GPU: every later call returns it.
#define GMPROF_CPU_PROGRAM 1
#include "gmprof_cpu_runtime.cpp"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <functional>
#include <map>
#include <mutex>

#include "gmprof_cpu_env.h"
#include "include/cuda_runtime.h"

namespace {

// a bad GMPROF_CPU_* value stops the program before main (and, set by the program, at a launch)
__attribute__((constructor)) void check_variables() { gmprof_cpu_env::program_values(); }

struct Allocation {
  size_t bytes;
  cudaMemoryType type;
};

std::mutex g_mem_lock;
std::map<uintptr_t, Allocation> &allocations() {
  static std::map<uintptr_t, Allocation> *m = new std::map<uintptr_t, Allocation>();
  return *m;
}

cudaError_t g_last = cudaSuccess;    // returned and cleared by cudaGetLastError
cudaError_t g_sticky = cudaSuccess;  // a kernel fault: the "context" is gone
int g_device = 0;
unsigned g_device_flags = 0;

cudaError_t record(cudaError_t e) {
  if (e != cudaSuccess) g_last = e;
  return e;
}

#define STICKY()                      \
  do {                                \
    if (g_sticky != cudaSuccess) {    \
      g_last = g_sticky;              \
      return g_sticky;                \
    }                                 \
  } while (0)

cudaError_t allocate(void **ptr, size_t size, cudaMemoryType type) {
  STICKY();
  if (!ptr) return record(cudaErrorInvalidValue);
  *ptr = nullptr;
  if (size == 0) return cudaSuccess;
  // cudaMalloc's alignment; the size rounded so that aligned_alloc accepts it
  size_t rounded = (size + 255) & ~(size_t)255;
  void *p = aligned_alloc(256, rounded);
  if (!p) return record(cudaErrorMemoryAllocation);
  std::lock_guard<std::mutex> g(g_mem_lock);
  allocations()[(uintptr_t)p] = Allocation{size, type};
  *ptr = p;
  return cudaSuccess;
}

extern "C" bool gmprof_graph_allocation(const void *p);  // gmprof_cudart_graph.cpp

cudaError_t release(void *ptr, bool host) {
  STICKY();
  if (!ptr) return cudaSuccess;
  // a graph allocation freed outside its graph: its graph's next launch has it again (the
  // emulation allocates it once, with the node)
  if (!host && gmprof_graph_allocation(ptr)) return cudaSuccess;
  std::lock_guard<std::mutex> g(g_mem_lock);
  auto it = allocations().find((uintptr_t)ptr);
  if (it == allocations().end() || (host != (it->second.type == cudaMemoryTypeHost)))
    return record(host ? cudaErrorInvalidValue : cudaErrorInvalidDevicePointer);
  allocations().erase(it);
  free(ptr);
  return cudaSuccess;
}

const Allocation *find(const void *p, uintptr_t *base) {
  auto &m = allocations();
  auto it = m.upper_bound((uintptr_t)p);
  if (it == m.begin()) return nullptr;
  --it;
  if ((uintptr_t)p >= it->first + (it->second.bytes ? it->second.bytes : 1)) return nullptr;
  *base = it->first;
  return &it->second;
}

struct Event {
  double seconds;
  bool recorded;
};

double now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

cudaError_t kind_ok(cudaMemcpyKind kind) {
  return (int)kind >= 0 && (int)kind <= 4 ? cudaSuccess : cudaErrorInvalidMemcpyDirection;
}

const char *error_name(cudaError_t e) {
  switch (e) {
#define E(x) \
  case x:    \
    return #x;
    E(cudaSuccess) E(cudaErrorInvalidValue) E(cudaErrorMemoryAllocation)
    E(cudaErrorInitializationError) E(cudaErrorInvalidConfiguration) E(cudaErrorInvalidPitchValue)
    E(cudaErrorInvalidSymbol) E(cudaErrorInvalidDevicePointer) E(cudaErrorInvalidMemcpyDirection)
    E(cudaErrorInvalidDeviceFunction) E(cudaErrorNoDevice) E(cudaErrorInvalidDevice)
    E(cudaErrorPeerAccessUnsupported) E(cudaErrorInvalidResourceHandle) E(cudaErrorNotReady)
    E(cudaErrorIllegalAddress) E(cudaErrorLaunchOutOfResources) E(cudaErrorLaunchTimeout)
    E(cudaErrorAssert) E(cudaErrorHardwareStackError) E(cudaErrorIllegalInstruction)
    E(cudaErrorLaunchFailure) E(cudaErrorCooperativeLaunchTooLarge) E(cudaErrorNotSupported)
    E(cudaErrorStreamCaptureUnsupported) E(cudaErrorStreamCaptureInvalidated)
    E(cudaErrorStreamCaptureUnmatched) E(cudaErrorIllegalState) E(cudaErrorUnknown)
#undef E
  }
  return "cudaErrorUnknown";
}

}  // namespace

// stream capture (gmprof_cudart_graph.cpp, included at the end)
cudaError_t gmprof_cudart_capture_add(cudaStream_t stream, std::function<cudaError_t()> op);
int gmprof_cudart_capturing(cudaStream_t stream);
cudaError_t gmprof_capture_forbid(cudaStream_t stream);
bool gmprof_capture_event_record(cudaEvent_t event, cudaStream_t stream);
void gmprof_capture_wait(cudaStream_t stream, cudaEvent_t event);

// ---------------------------------------------------------------- launches

extern "C" cudaError_t gmprof_cudart_launch(void (*entry)(void **), void **args, dim3 grid,
                                           dim3 block, size_t shared_mem, cudaStream_t stream,
                                           const char *name) {
  (void)stream;
  STICKY();
  const unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
  if (threads == 0 || threads > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 ||
      grid.z == 0 || grid.y > 65535 || grid.z > 65535 || grid.x > 2147483647u)
    return record(cudaErrorInvalidConfiguration);
  if (shared_mem > GMPROF_CPU_DYNAMIC_SHARED_MAX) return record(cudaErrorInvalidConfiguration);
  const gmprof_cpu_env::Values v = gmprof_cpu_env::program_values();
  const unsigned long long stack = v.stack_kb << 10;
  const double timeout = v.timeout_s;
  static gmprof_cpu::Status st;
  const unsigned g[3] = {grid.x, grid.y, grid.z};
  const unsigned b[3] = {block.x, block.y, block.z};
  fflush(stdout);
  int code = gmprof_cpu::gmprof_cpu_launch(entry, args, g, b, shared_mem, stack, timeout, &st);
  if (code == gmprof_cpu::OK) return cudaSuccess;
  // as a GPU would: the launch fails, and so does every call after it
  fflush(stdout);
  if (st.file[0] && st.line)
    fprintf(stderr, "%s:%d: error: kernel %s: %s\n", st.file, st.line, name ? name : "?",
            st.message);
  else
    fprintf(stderr, "gmprof CPU backend: error: kernel %s: %s\n", name ? name : "?", st.message);
  cudaError_t e = cudaErrorLaunchFailure;
  switch (code) {
    case gmprof_cpu::INVALID_ADDRESS: e = cudaErrorIllegalAddress; break;
    case gmprof_cpu::ASSERT_FAILED: e = cudaErrorAssert; break;
    case gmprof_cpu::TRAP: e = cudaErrorLaunchFailure; break;
    case gmprof_cpu::STACK_OVERFLOW: e = cudaErrorHardwareStackError; break;
    case gmprof_cpu::ILLEGAL_INSTRUCTION: e = cudaErrorIllegalInstruction; break;
    case gmprof_cpu::TIMEOUT: e = cudaErrorLaunchTimeout; break;
    case gmprof_cpu::BAD_LAUNCH: return record(cudaErrorInvalidConfiguration);
    case gmprof_cpu::INTERRUPTED:
      // Ctrl-C or SIGTERM stopped a kernel: the process ends as the signal says
      signal(st.signal, SIG_DFL);
      raise(st.signal);
      break;
    default: break;
  }
  g_sticky = e;
  return record(e);
}

extern "C" int gmprof_cudart_address_range(const void *p, void **base, size_t *bytes) {
  std::lock_guard<std::mutex> g(g_mem_lock);
  uintptr_t b = 0;
  const Allocation *a = find(p, &b);
  if (!a) return 0;
  *base = (void *)b;
  *bytes = a->bytes;
  return 1;
}

// ---------------------------------------------------------------- the API

extern "C" {

cudaError_t cudaGetLastError(void) {
  cudaError_t e = g_last;
  g_last = g_sticky;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return g_last; }
const char *cudaGetErrorName(cudaError_t error) { return error_name(error); }
const char *cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
    case cudaErrorAssert: return "device-side assert triggered";
    case cudaErrorHardwareStackError: return "hardware stack error";
    case cudaErrorIllegalInstruction: return "an illegal instruction was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNotSupported: return "operation not supported";
    default: return "unknown error";
  }
}

cudaError_t cudaGetDeviceCount(int *count) {
  if (!count) return record(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int *device) {
  if (!device) return record(cudaErrorInvalidValue);
  *device = g_device;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  if (device != 0) return record(cudaErrorInvalidDevice);
  g_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device) {
  if (!p) return record(cudaErrorInvalidValue);
  if (device != 0) return record(cudaErrorInvalidDevice);
  memset(p, 0, sizeof *p);
  // a device with an H100's limits (block, grid and shared memory sizes, warps) and few
  // multiprocessors, since programs size their grids by them and the CPU runs blocks one by one
  snprintf(p->name, sizeof p->name, "gmprof CPU backend");
  p->totalGlobalMem = (size_t)16 << 30;
  p->sharedMemPerBlock = 48 * 1024;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->memPitch = 2147483647;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  p->clockRate = 1980000;
  p->totalConstMem = 65536;
  p->major = 9;
  p->minor = 0;
  p->textureAlignment = 512;
  p->texturePitchAlignment = 32;
  p->deviceOverlap = 1;
  p->multiProcessorCount = 8;
  p->canMapHostMemory = 1;
  p->concurrentKernels = 1;
  p->asyncEngineCount = 2;
  p->unifiedAddressing = 1;
  p->memoryClockRate = 2619000;
  p->memoryBusWidth = 5120;
  p->l2CacheSize = 50 << 20;
  p->maxThreadsPerMultiProcessor = 2048;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = 233472;
  p->regsPerMultiprocessor = 65536;
  p->managedMemory = 1;
  p->concurrentManagedAccess = 1;
  p->hostNativeAtomicSupported = 1;
  p->sharedMemPerBlockOptin = 232448;
  p->maxBlocksPerMultiProcessor = 32;
  p->reservedSharedMemPerBlock = 1024;
  p->cooperativeLaunch = 1;  // blocks run in phases between grid barriers
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device) {
  if (!value) return record(cudaErrorInvalidValue);
  cudaDeviceProp p;
  cudaError_t e = cudaGetDeviceProperties(&p, device);
  if (e != cudaSuccess) return e;
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrTotalConstantMemory: *value = (int)p.totalConstMem; break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMaxPitch: *value = (int)p.memPitch; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
    case cudaDevAttrClockRate: *value = p.clockRate; break;
    case cudaDevAttrTextureAlignment: *value = (int)p.textureAlignment; break;
    case cudaDevAttrGpuOverlap: *value = p.deviceOverlap; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrCooperativeLaunch: *value = p.cooperativeLaunch; break;
    case cudaDevAttrCanMapHostMemory: *value = p.canMapHostMemory; break;
    case cudaDevAttrConcurrentKernels: *value = p.concurrentKernels; break;
    case cudaDevAttrMemoryClockRate: *value = p.memoryClockRate; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrAsyncEngineCount: *value = p.asyncEngineCount; break;
    case cudaDevAttrUnifiedAddressing: *value = p.unifiedAddressing; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = (int)p.sharedMemPerMultiprocessor; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = p.regsPerMultiprocessor; break;
    case cudaDevAttrManagedMemory: *value = p.managedMemory; break;
    case cudaDevAttrConcurrentManagedAccess: *value = p.concurrentManagedAccess; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)p.sharedMemPerBlockOptin; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = p.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrMemoryPoolsSupported: *value = 1; break;
    default: *value = 0;
  }
  return cudaSuccess;
}

cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *) {
  if (!device) return record(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void) {
  STICKY();
  return cudaSuccess;
}
cudaError_t cudaThreadSynchronize(void) { return cudaDeviceSynchronize(); }
cudaError_t cudaDeviceReset(void) {
  // a GPU frees everything; the program's own pointers are dead afterwards either way
  g_sticky = g_last = cudaSuccess;
  return cudaSuccess;
}
cudaError_t cudaThreadExit(void) { return cudaDeviceReset(); }
cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  g_device_flags = flags;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceFlags(unsigned int *flags) {
  if (!flags) return record(cudaErrorInvalidValue);
  *flags = g_device_flags;
  return cudaSuccess;
}
cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache) { return cudaSuccess; }
cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache *config) {
  if (config) *config = cudaFuncCachePreferNone;
  return cudaSuccess;
}
cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig) { return cudaSuccess; }
cudaError_t cudaDeviceCanAccessPeer(int *can, int, int) {
  if (!can) return record(cudaErrorInvalidValue);
  *can = 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceEnablePeerAccess(int, unsigned int) {
  return record(cudaErrorPeerAccessUnsupported);
}
cudaError_t cudaDriverGetVersion(int *version) {
  if (!version) return record(cudaErrorInvalidValue);
  *version = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int *version) { return cudaDriverGetVersion(version); }
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total) {
  if (free_bytes) *free_bytes = (size_t)12 << 30;
  if (total) *total = (size_t)16 << 30;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetLimit(size_t *value, int) {
  if (value) *value = 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceSetLimit(int, size_t) { return cudaSuccess; }

cudaError_t cudaMalloc(void **ptr, size_t size) { return allocate(ptr, size, cudaMemoryTypeDevice); }
cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int) {
  return allocate(ptr, size, cudaMemoryTypeManaged);
}
cudaError_t cudaMallocHost(void **ptr, size_t size) { return allocate(ptr, size, cudaMemoryTypeHost); }
cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int) {
  return allocate(ptr, size, cudaMemoryTypeHost);
}
cudaError_t cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height) {
  if (!pitch) return record(cudaErrorInvalidValue);
  *pitch = (width + 511) & ~(size_t)511;
  return allocate(ptr, *pitch * height, cudaMemoryTypeDevice);
}
cudaError_t cudaFree(void *ptr) { return release(ptr, false); }
cudaError_t cudaFreeHost(void *ptr) { return release(ptr, true); }
cudaError_t cudaHostGetDevicePointer(void **device, void *host, unsigned int) {
  if (!device) return record(cudaErrorInvalidValue);
  *device = host;
  return cudaSuccess;
}
cudaError_t cudaHostRegister(void *, size_t, unsigned int) { return cudaSuccess; }
cudaError_t cudaHostUnregister(void *) { return cudaSuccess; }

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind) {
  STICKY();
  if (kind_ok(kind) != cudaSuccess) return record(cudaErrorInvalidMemcpyDirection);
  if (count && (!dst || !src)) return record(cudaErrorInvalidValue);
  if (count) memmove(dst, src, count);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream) {
  if (gmprof_cudart_capturing(stream))
    return gmprof_cudart_capture_add(stream, [=]() { return cudaMemcpy(dst, src, count, kind); });
  return cudaMemcpy(dst, src, count, kind);
}
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, enum cudaMemcpyKind kind) {
  STICKY();
  if (kind_ok(kind) != cudaSuccess) return record(cudaErrorInvalidMemcpyDirection);
  if (width > dpitch || width > spitch) return record(cudaErrorInvalidPitchValue);
  for (size_t r = 0; r < height; ++r)
    memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
  return cudaSuccess;
}
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind,
                              cudaStream_t stream) {
  if (gmprof_cudart_capturing(stream))
    return gmprof_cudart_capture_add(stream, [=]() {
      return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
    });
  return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}
cudaError_t cudaMemcpyPeer(void *dst, int, const void *src, int, size_t count) {
  return cudaMemcpy(dst, src, count, cudaMemcpyDefault);
}
cudaError_t cudaMemset(void *ptr, int value, size_t count) {
  STICKY();
  if (count && !ptr) return record(cudaErrorInvalidValue);
  if (count) memset(ptr, value, count);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream) {
  if (gmprof_cudart_capturing(stream))
    return gmprof_cudart_capture_add(stream, [=]() { return cudaMemset(ptr, value, count); });
  return cudaMemset(ptr, value, count);
}
cudaError_t cudaMemset2D(void *ptr, size_t pitch, int value, size_t width, size_t height) {
  STICKY();
  for (size_t r = 0; r < height; ++r) memset((char *)ptr + r * pitch, value, width);
  return cudaSuccess;
}
cudaError_t cudaMemPrefetchAsync(const void *, size_t, int, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaMemAdvise(const void *, size_t, int, int) { return cudaSuccess; }
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *ptr) {
  if (!attr) return record(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> g(g_mem_lock);
  uintptr_t base = 0;
  const Allocation *a = find(ptr, &base);
  attr->type = a ? a->type : cudaMemoryTypeUnregistered;
  attr->device = 0;
  attr->devicePointer = a ? (void *)ptr : nullptr;
  attr->hostPointer = a && a->type != cudaMemoryTypeDevice ? (void *)ptr : nullptr;
  return cudaSuccess;
}

cudaError_t gmprof_cudart_symbol_copy(void *symbol, size_t symbol_bytes, void *dst,
                                      const void *src, size_t count, size_t offset, int to) {
  STICKY();
  if (!symbol) return record(cudaErrorInvalidSymbol);
  if (symbol_bytes != (size_t)-1 && (offset > symbol_bytes || count > symbol_bytes - offset))
    return record(cudaErrorInvalidValue);
  if (to)
    memmove((char *)symbol + offset, src, count);
  else
    memmove(dst, (const char *)symbol + offset, count);
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream) { return cudaStreamCreateWithFlags(stream, 0); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int) {
  if (!stream) return record(cudaErrorInvalidValue);
  *stream = (cudaStream_t)malloc(16);
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned int flags, int) {
  return cudaStreamCreateWithFlags(stream, flags);
}
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest) {
  if (least) *least = 0;
  if (greatest) *greatest = 0;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if ((uintptr_t)stream > 2) free(stream);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  STICKY();
  return gmprof_capture_forbid(stream);
}
cudaError_t cudaStreamQuery(cudaStream_t) {
  STICKY();
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  gmprof_capture_wait(stream, event);
  return cudaSuccess;
}
cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                  void *userData, unsigned int) {
  if (callback) callback(stream, g_sticky, userData);
  return cudaSuccess;
}
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData) {
  STICKY();
  if (gmprof_cudart_capturing(stream))
    return gmprof_cudart_capture_add(stream, [=]() {
      if (fn) fn(userData);
      return cudaSuccess;
    });
  if (fn) fn(userData);
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *event) { return cudaEventCreateWithFlags(event, 0); }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int) {
  if (!event) return record(cudaErrorInvalidValue);
  Event *e = new Event{0.0, false};
  *event = (cudaEvent_t)e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!event) return record(cudaErrorInvalidResourceHandle);
  if (gmprof_capture_event_record(event, stream)) return cudaSuccess;  // a node of the graph
  Event *e = (Event *)event;
  e->seconds = now();
  e->recorded = true;
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  STICKY();
  if (!event) return record(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (!event) return record(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms || !start || !end) return record(cudaErrorInvalidValue);
  Event *a = (Event *)start, *b = (Event *)end;
  if (!a->recorded || !b->recorded) return record(cudaErrorInvalidResourceHandle);
  *ms = (float)((b->seconds - a->seconds) * 1e3);
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete (Event *)event;
  return cudaSuccess;
}

cudaError_t gmprof_cudart_func_attributes(struct cudaFuncAttributes *attr, const void *func) {
  if (!attr || !func) return record(cudaErrorInvalidDeviceFunction);
  memset(attr, 0, sizeof *attr);
  attr->maxThreadsPerBlock = 1024;  // static shared arrays are ordinary statics here
  attr->numRegs = 32;
  attr->ptxVersion = 90;
  attr->binaryVersion = 90;
  attr->maxDynamicSharedSizeBytes = 48 * 1024;
  return cudaSuccess;
}
cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute, int) {
  return func ? cudaSuccess : record(cudaErrorInvalidDeviceFunction);
}
cudaError_t cudaFuncSetCacheConfig(const void *, enum cudaFuncCache) { return cudaSuccess; }
cudaError_t cudaFuncSetSharedMemConfig(const void *, enum cudaSharedMemConfig) { return cudaSuccess; }
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *,
                                                          int blockSize, size_t) {
  if (!numBlocks || blockSize <= 0) return record(cudaErrorInvalidValue);
  int n = 2048 / blockSize;
  *numBlocks = n > 32 ? 32 : (n < 1 ? 1 : n);
  return cudaSuccess;
}
cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
cudaError_t cudaProfilerStop(void) { return cudaSuccess; }

}  // extern "C"

#include "gmprof_cudart_graph.cpp"
