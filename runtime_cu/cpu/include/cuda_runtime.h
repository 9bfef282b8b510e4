// gmprof CPU backend: the CUDA runtime API for whole programs compiled by g++ (`gmprof nvcc` with
// GMPROF_BACKEND=cpu). Stage: runtime, host side of the CPU backend.
//
// A subset, enough for the common program: device memory (cudaMalloc, managed and pinned host
// memory, copies, memsets, symbols), launches (<<<>>> is rewritten by gmprof; cudaLaunchKernel),
// streams and events (synchronous: every call completes before it returns), devices and their
// properties (one emulated device), errors. Device memory is host memory: copies in every
// direction are memcpy. Anything outside the subset is not declared here, so g++ stops at its
// first use and gmprof turns that into a plain error naming the call.
//
// Included (force-included by gmprof nvcc, after gmprof_cpu.h) in place of NVIDIA's header;
// error codes and enum values are CUDA's, so programs that print them print the same numbers.
#ifndef GMPROF_CPU_CUDA_RUNTIME_H
#define GMPROF_CPU_CUDA_RUNTIME_H
// the guards NVIDIA's headers define, which helper headers (cuda-samples' helper_cuda.h) test
#define __CUDA_RUNTIME_H__
#define __CUDA_RUNTIME_API_H__
#define __DRIVER_TYPES_H__
#define __VECTOR_TYPES_H__
#define __DEVICE_LAUNCH_PARAMETERS_H__

#include <stddef.h>
#include <string.h>

#define CUDART_VERSION 13000
#define __CUDART_API_VERSION 13000

enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidPitchValue = 12,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorPeerAccessUnsupported = 217,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchTimeout = 702,
  cudaErrorAssert = 710,
  cudaErrorHardwareStackError = 714,
  cudaErrorIllegalInstruction = 715,
  cudaErrorLaunchFailure = 719,
  cudaErrorCooperativeLaunchTooLarge = 720,
  cudaErrorNotSupported = 801,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorStreamCaptureUnmatched = 903,
  cudaErrorGraphExecUpdateFailure = 910,
  cudaErrorIllegalState = 401,
  cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3
};

enum cudaFuncCache {
  cudaFuncCachePreferNone = 0,
  cudaFuncCachePreferShared = 1,
  cudaFuncCachePreferL1 = 2,
  cudaFuncCachePreferEqual = 3
};

enum cudaSharedMemConfig {
  cudaSharedMemBankSizeDefault = 0,
  cudaSharedMemBankSizeFourByte = 1,
  cudaSharedMemBankSizeEightByte = 2
};

enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9
};

enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrTotalConstantMemory = 9,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMaxPitch = 11,
  cudaDevAttrMaxRegistersPerBlock = 12,
  cudaDevAttrClockRate = 13,
  cudaDevAttrTextureAlignment = 14,
  cudaDevAttrGpuOverlap = 15,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrKernelExecTimeout = 17,
  cudaDevAttrIntegrated = 18,
  cudaDevAttrCanMapHostMemory = 19,
  cudaDevAttrComputeMode = 20,
  cudaDevAttrConcurrentKernels = 31,
  cudaDevAttrEccEnabled = 32,
  cudaDevAttrPciBusId = 33,
  cudaDevAttrPciDeviceId = 34,
  cudaDevAttrTccDriver = 35,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrAsyncEngineCount = 40,
  cudaDevAttrUnifiedAddressing = 41,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrMaxRegistersPerMultiprocessor = 82,
  cudaDevAttrManagedMemory = 83,
  cudaDevAttrPageableMemoryAccess = 88,
  cudaDevAttrConcurrentManagedAccess = 89,
  cudaDevAttrCooperativeLaunch = 95,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrMaxBlocksPerMultiprocessor = 106,
  cudaDevAttrMemoryPoolsSupported = 115  // stream-ordered allocation (cudaMallocAsync)
};

enum cudaComputeMode {
  cudaComputeModeDefault = 0,
  cudaComputeModeExclusive = 1,
  cudaComputeModeProhibited = 2,
  cudaComputeModeExclusiveProcess = 3
};

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04
#define cudaHostRegisterDefault 0x00
#define cudaHostRegisterPortable 0x01
#define cudaHostRegisterMapped 0x02
#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02
#define cudaDeviceScheduleAuto 0x00
#define cudaDeviceScheduleSpin 0x01
#define cudaDeviceScheduleYield 0x02
#define cudaDeviceScheduleBlockingSync 0x04
#define cudaDeviceBlockingSync 0x04
#define cudaDeviceMapHost 0x08
#define cudaDeviceLmemResizeToMax 0x10
#define cudaCpuDeviceId ((int)-1)

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)

struct cudaDeviceProp {
  char name[256];
  char uuid[16];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  size_t texturePitchAlignment;
  int deviceOverlap;
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;
  int integrated;
  int canMapHostMemory;
  int computeMode;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int singleToDoublePrecisionPerfRatio;
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
};

struct cudaFuncAttributes {
  size_t sharedSizeBytes;
  size_t constSizeBytes;
  size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int ptxVersion;
  int binaryVersion;
  int cacheModeCA;
  int maxDynamicSharedSizeBytes;
  int preferredShmemCarveout;
};

struct cudaPointerAttributes {
  enum cudaMemoryType type;
  int device;
  void *devicePointer;
  void *hostPointer;
};

enum cudaLaunchAttributeID { cudaLaunchAttributeIgnore = 0 };
struct cudaLaunchAttribute {
  enum cudaLaunchAttributeID id;
  char pad[4];
  char val[64];
};
struct cudaLaunchConfig_t {
  dim3 gridDim;
  dim3 blockDim;
  size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute *attrs;
  unsigned int numAttrs;
};
typedef struct cudaLaunchConfig_t cudaLaunchConfig_t;

#define CUDART_CB  // the calling convention of callbacks (none on Linux)
typedef void (*cudaHostFn_t)(void *userData);
typedef void (*cudaStreamCallback_t)(cudaStream_t stream, cudaError_t status, void *userData);

// ---------------------------------------------------------------- errors
extern "C" {
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t error);
const char *cudaGetErrorName(cudaError_t error);

// ---------------------------------------------------------------- devices
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device);
cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *prop);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaThreadSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaThreadExit(void);
cudaError_t cudaSetDeviceFlags(unsigned int flags);
cudaError_t cudaGetDeviceFlags(unsigned int *flags);
cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache config);
cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache *config);
cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig config);
cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice);
cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags);
cudaError_t cudaDriverGetVersion(int *version);
cudaError_t cudaRuntimeGetVersion(int *version);
cudaError_t cudaMemGetInfo(size_t *free, size_t *total);
cudaError_t cudaDeviceGetLimit(size_t *value, int limit);
cudaError_t cudaDeviceSetLimit(int limit, size_t value);

// ---------------------------------------------------------------- memory
cudaError_t cudaMalloc(void **ptr, size_t size);
cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags = cudaMemAttachGlobal);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags);
cudaError_t cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaHostGetDevicePointer(void **device, void *host, unsigned int flags);
cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags);
cudaError_t cudaHostUnregister(void *ptr);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream = 0);
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind,
                              cudaStream_t stream = 0);
cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count);
cudaError_t cudaMemset(void *ptr, int value, size_t count);
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream = 0);
cudaError_t cudaMemset2D(void *ptr, size_t pitch, int value, size_t width, size_t height);
cudaError_t cudaMemPrefetchAsync(const void *ptr, size_t count, int device, cudaStream_t stream = 0);
cudaError_t cudaMemAdvise(const void *ptr, size_t count, int advice, int device);
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr);

// symbols: in this backend a symbol is the variable itself
cudaError_t gmprof_cudart_symbol_copy(void *symbol, size_t symbol_bytes, void *dst,
                                      const void *src, size_t count, size_t offset, int to);
}
// the async forms keep their stream: a capturing stream records them
cudaError_t gmprof_cudart_symbol_copy_async(void *symbol, size_t symbol_bytes, void *dst,
                                            const void *src, size_t count, size_t offset, int to,
                                            cudaStream_t stream);
extern "C" {

// ---------------------------------------------------------------- streams and events
cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned int flags, int priority);
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
// stream capture and graphs (gmprof_cudart_graph.cpp): a graph is its nodes' operations in
// the order they were added, run one after another by cudaGraphLaunch
enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2
};
enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2
};
typedef struct CUgraph_st *cudaGraph_t;
typedef struct CUgraphNode_st *cudaGraphNode_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;
struct cudaKernelNodeParams {
  void *func;
  dim3 gridDim;
  dim3 blockDim;
  unsigned int sharedMemBytes;
  void **kernelParams;
  void **extra;
};
// pitched copies (cudaMemcpy3D, memcpy nodes): linear memory only, no CUDA arrays (the array
// fields are null; cudaArray_t is outside the subset)
struct cudaPitchedPtr {
  void *ptr;
  size_t pitch;
  size_t xsize;
  size_t ysize;
};
struct cudaPos {
  size_t x, y, z;
};
struct cudaExtent {
  size_t width, height, depth;
};
static inline struct cudaPitchedPtr make_cudaPitchedPtr(void *d, size_t p, size_t xsz,
                                                        size_t ysz) {
  struct cudaPitchedPtr s = {d, p, xsz, ysz};
  return s;
}
static inline struct cudaPos make_cudaPos(size_t x, size_t y, size_t z) {
  struct cudaPos p = {x, y, z};
  return p;
}
static inline struct cudaExtent make_cudaExtent(size_t w, size_t h, size_t d) {
  struct cudaExtent e = {w, h, d};
  return e;
}
struct cudaMemcpy3DParms {
  struct cudaArray *srcArray;
  struct cudaPos srcPos;
  struct cudaPitchedPtr srcPtr;
  struct cudaArray *dstArray;
  struct cudaPos dstPos;
  struct cudaPitchedPtr dstPtr;
  struct cudaExtent extent;
  enum cudaMemcpyKind kind;
};
struct cudaMemsetParams {
  void *dst;
  size_t pitch;
  unsigned int value;
  unsigned int elementSize;
  size_t width;
  size_t height;
};
struct cudaHostNodeParams {
  cudaHostFn_t fn;
  void *userData;
};
enum cudaGraphNodeType {
  cudaGraphNodeTypeKernel = 0,
  cudaGraphNodeTypeMemcpy = 1,
  cudaGraphNodeTypeMemset = 2,
  cudaGraphNodeTypeHost = 3,
  cudaGraphNodeTypeGraph = 4,
  cudaGraphNodeTypeEmpty = 5,
  cudaGraphNodeTypeMemAlloc = 10,
  cudaGraphNodeTypeMemFree = 11,
  cudaGraphNodeTypeConditional = 13
};
typedef struct cudaGraphEdgeData_st {
  unsigned char from_port, to_port, type, reserved[5];
} cudaGraphEdgeData;
enum cudaMemAllocationType { cudaMemAllocationTypeInvalid = 0, cudaMemAllocationTypePinned = 1 };
enum cudaMemAllocationHandleType { cudaMemHandleTypeNone = 0 };
enum cudaMemLocationType { cudaMemLocationTypeInvalid = 0, cudaMemLocationTypeDevice = 1 };
enum cudaMemAccessFlags { cudaMemAccessFlagsProtNone = 0, cudaMemAccessFlagsProtRead = 1,
                          cudaMemAccessFlagsProtReadWrite = 3 };
struct cudaMemLocation {
  enum cudaMemLocationType type;
  int id;
};
struct cudaMemAccessDesc {
  struct cudaMemLocation location;
  enum cudaMemAccessFlags flags;
};
struct cudaMemPoolProps {
  enum cudaMemAllocationType allocType;
  enum cudaMemAllocationHandleType handleTypes;
  struct cudaMemLocation location;
  void *win32SecurityAttributes;
  size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
};
// a graph allocation (cudaGraphAddMemAllocNode, cudaMallocAsync while capturing): memory the
// runtime's allocation table does not hold, as a GPU's address range query does not know a
// graph allocation before the graph runs
struct cudaMemAllocNodeParams {
  struct cudaMemPoolProps poolProps;
  const struct cudaMemAccessDesc *accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  void *dptr;
};
// conditional nodes (cudaGraphAddNode): if, while and switch over a condition that kernels set
// with cudaGraphSetConditional (gmprof_cudart_conditional.cpp)
typedef unsigned long long cudaGraphConditionalHandle;
enum cudaGraphConditionalHandleFlags { cudaGraphCondAssignDefault = 1 };
enum cudaGraphConditionalNodeType {
  cudaGraphCondTypeIf = 0,
  cudaGraphCondTypeWhile = 1,
  cudaGraphCondTypeSwitch = 2
};
struct cudaConditionalNodeParams {
  cudaGraphConditionalHandle handle;
  enum cudaGraphConditionalNodeType type;
  unsigned int size;
  cudaGraph_t *phGraph_out;
};
struct cudaKernelNodeParamsV2 {
  void *func;
  dim3 gridDim;
  dim3 blockDim;
  unsigned int sharedMemBytes;
  void **kernelParams;
  void **extra;
};
// kernel, empty and conditional nodes only
struct cudaGraphNodeParams {
  enum cudaGraphNodeType type;
  int reserved0[3];
  union {
    long long reserved1[29];
    struct cudaKernelNodeParamsV2 kernel;
    struct cudaConditionalNodeParams conditional;
  };
  long long reserved2;
};
enum cudaStreamUpdateCaptureDependenciesFlags {
  cudaStreamAddCaptureDependencies = 0,
  cudaStreamSetCaptureDependencies = 1
};
enum cudaGraphExecUpdateResult {
  cudaGraphExecUpdateSuccess = 0,
  cudaGraphExecUpdateError = 1,
  cudaGraphExecUpdateErrorTopologyChanged = 2,
  cudaGraphExecUpdateErrorNodeTypeChanged = 3,
  cudaGraphExecUpdateErrorFunctionChanged = 4,
  cudaGraphExecUpdateErrorParametersChanged = 5,
  cudaGraphExecUpdateErrorNotSupported = 6
};
typedef struct cudaGraphExecUpdateResultInfo_st {
  enum cudaGraphExecUpdateResult result;
  cudaGraphNode_t errorNode;
  cudaGraphNode_t errorFromNode;
} cudaGraphExecUpdateResultInfo;
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status);
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph);
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                     unsigned long long *id = 0, cudaGraph_t *graph = 0,
                                     const cudaGraphNode_t **deps = 0,
                                     const cudaGraphEdgeData **edges = 0, size_t *n_deps = 0);
cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode);
cudaError_t cudaGraphCreate(cudaGraph_t *graph, unsigned int flags);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *n);
cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                  const cudaGraphNode_t *deps, size_t n_deps);
cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                       const cudaGraphNode_t *deps, size_t n_deps,
                                       cudaGraph_t child);
cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *node, cudaGraph_t graph,
                                     const cudaGraphNode_t *deps, size_t n_deps, void *dst,
                                     const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p);
cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                   const cudaGraphNode_t *deps, size_t n_deps,
                                   const struct cudaMemcpy3DParms *params);
cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                   const cudaGraphNode_t *deps, size_t n_deps,
                                   const struct cudaMemsetParams *params);
cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                 const cudaGraphNode_t *deps, size_t n_deps,
                                 const struct cudaHostNodeParams *params);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                 unsigned long long flags = 0);
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t graph,
                                          unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
// nodes as the program built them: kernel nodes keep their parameters (gmprof's host runtime
// tells the argument sizes), nodes their dependencies; cudaGraphInstantiate runs them in a
// topological order (the order they were added where the edges allow)
cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                   const cudaGraphNode_t *deps, size_t n_deps,
                                   const struct cudaKernelNodeParams *params);
cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *params);
cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                                         const struct cudaKernelNodeParams *params);
cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                             const struct cudaKernelNodeParams *params);
cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                 cudaGraph_t child);
cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t *graph);
cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *type);
cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *n);
cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *deps,
                                         cudaGraphEdgeData *edges, size_t *n);
cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t *nodes,
                                           cudaGraphEdgeData *edges, size_t *n);
cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                     const cudaGraphNode_t *to, const cudaGraphEdgeData *edges,
                                     size_t n);
cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node);
cudaError_t cudaGraphClone(cudaGraph_t *clone, cudaGraph_t graph);
cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *node, cudaGraphNode_t original,
                                     cudaGraph_t clone);
cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                     const cudaGraphNode_t *deps, size_t n_deps,
                                     struct cudaMemAllocNodeParams *params);
cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node,
                                           struct cudaMemAllocNodeParams *params);
cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                    const cudaGraphNode_t *deps, size_t n_deps, void *dptr);
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                cudaGraphExecUpdateResultInfo *info);
cudaError_t cudaGraphAddNode(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                             const cudaGraphEdgeData *edges, size_t n_deps,
                             struct cudaGraphNodeParams *params);
cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle *handle, cudaGraph_t graph,
                                             unsigned int default_value = 0,
                                             unsigned int flags = 0);
void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);  // device
cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                          const cudaGraphNode_t *deps,
                                          const cudaGraphEdgeData *edges, size_t n_deps,
                                          enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t *deps,
                                                const cudaGraphEdgeData *edges, size_t n_deps,
                                                unsigned int flags = 0);
cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream);
cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0);
cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                  void *userData, unsigned int flags);
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData);
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);

// ---------------------------------------------------------------- kernels
cudaError_t gmprof_cudart_func_attributes(struct cudaFuncAttributes *attr, const void *func);
cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value);
cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache config);
cudaError_t cudaFuncSetSharedMemConfig(const void *func, enum cudaSharedMemConfig config);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func,
                                                          int blockSize, size_t dynamicSMemSize);
cudaError_t cudaProfilerStart(void);
cudaError_t cudaProfilerStop(void);
}

inline cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func) {
  return gmprof_cudart_func_attributes(attr, func);
}
template <class T>
inline cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, T *func) {
  return gmprof_cudart_func_attributes(attr, (const void *)func);
}
template <class T>
inline cudaError_t cudaFuncSetAttribute(T *func, enum cudaFuncAttribute attr, int value) {
  return cudaFuncSetAttribute((const void *)func, attr, value);
}
template <class T>
inline cudaError_t cudaFuncSetCacheConfig(T *func, enum cudaFuncCache config) {
  return cudaFuncSetCacheConfig((const void *)func, config);
}
template <class T>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, T *func,
                                                                 int blockSize,
                                                                 size_t dynamicSMemSize) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, (const void *)func, blockSize,
                                                       dynamicSMemSize);
}
template <class T>
inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, T func,
                                                      size_t dynamicSMemSize = 0,
                                                      int blockSizeLimit = 0) {
  int limit = blockSizeLimit > 0 && blockSizeLimit < 1024 ? blockSizeLimit : 1024;
  if (minGridSize) *minGridSize = 8 * 2048 / limit;
  if (blockSize) *blockSize = limit;
  (void)func;
  (void)dynamicSMemSize;
  return cudaSuccess;
}

template <class T>
inline cudaError_t cudaMalloc(T **ptr, size_t size) {
  return cudaMalloc((void **)ptr, size);
}
template <class T>
inline cudaError_t cudaMallocAsync(T **ptr, size_t size, cudaStream_t stream) {
  return cudaMallocAsync((void **)ptr, size, stream);
}
template <class T>
inline cudaError_t cudaMallocManaged(T **ptr, size_t size, unsigned int flags = cudaMemAttachGlobal) {
  return cudaMallocManaged((void **)ptr, size, flags);
}
template <class T>
inline cudaError_t cudaMallocHost(T **ptr, size_t size) {
  return cudaMallocHost((void **)ptr, size);
}
template <class T>
inline cudaError_t cudaHostAlloc(T **ptr, size_t size, unsigned int flags) {
  return cudaHostAlloc((void **)ptr, size, flags);
}
template <class T>
inline cudaError_t cudaMallocPitch(T **ptr, size_t *pitch, size_t width, size_t height) {
  return cudaMallocPitch((void **)ptr, pitch, width, height);
}
template <class T>
inline cudaError_t cudaHostGetDevicePointer(T **device, void *host, unsigned int flags) {
  return cudaHostGetDevicePointer((void **)device, host, flags);
}
inline cudaError_t cudaMallocHost(void **ptr, size_t size, unsigned int flags) {
  return cudaHostAlloc(ptr, size, flags);
}

// A symbol is passed as the variable (a template deduces its size) or, in the C form, as its
// address.
template <class T>
inline cudaError_t cudaMemcpyToSymbol(const T &symbol, const void *src, size_t count,
                                      size_t offset = 0,
                                      enum cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  (void)kind;
  return gmprof_cudart_symbol_copy((void *)&symbol, sizeof(T), nullptr, src, count, offset, 1);
}
template <class T>
inline cudaError_t cudaMemcpyToSymbolAsync(const T &symbol, const void *src, size_t count,
                                           size_t offset = 0,
                                           enum cudaMemcpyKind kind = cudaMemcpyHostToDevice,
                                           cudaStream_t stream = 0) {
  (void)kind;
  return gmprof_cudart_symbol_copy_async((void *)&symbol, sizeof(T), nullptr, src, count, offset,
                                         1, stream);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t count,
                                        size_t offset = 0,
                                        enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  (void)kind;
  return gmprof_cudart_symbol_copy((void *)&symbol, sizeof(T), dst, nullptr, count, offset, 0);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const T &symbol, size_t count,
                                             size_t offset = 0,
                                             enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost,
                                             cudaStream_t stream = 0) {
  (void)kind;
  return gmprof_cudart_symbol_copy_async((void *)&symbol, sizeof(T), dst, nullptr, count, offset,
                                         0, stream);
}
inline cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                      size_t offset = 0,
                                      enum cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  (void)kind;
  return gmprof_cudart_symbol_copy((void *)symbol, (size_t)-1, nullptr, src, count, offset, 1);
}
inline cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count,
                                        size_t offset = 0,
                                        enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  (void)kind;
  return gmprof_cudart_symbol_copy((void *)symbol, (size_t)-1, dst, nullptr, count, offset, 0);
}
template <class T>
inline cudaError_t cudaGetSymbolAddress(void **address, const T &symbol) {
  *address = (void *)&symbol;
  return cudaSuccess;
}
template <class T>
inline cudaError_t cudaGetSymbolSize(size_t *size, const T &symbol) {
  (void)symbol;
  *size = sizeof(T);
  return cudaSuccess;
}

// Launches: gmprof rewrites these calls to its host runtime before compiling; these forms are
// for code that reaches them otherwise (the runtime's own).
namespace gmprof_host {
cudaError_t launch_kernel_untyped(const void *kernel, dim3 grid, dim3 block, void **args,
                                  size_t shared_mem, cudaStream_t stream);
cudaError_t launch_cooperative_untyped(const void *kernel, dim3 grid, dim3 block, void **args,
                                       size_t shared_mem, cudaStream_t stream);
}
template <class T>
inline cudaError_t cudaLaunchKernel(T *func, dim3 grid, dim3 block, void **args,
                                    size_t sharedMem = 0, cudaStream_t stream = 0) {
  return ::gmprof_host::launch_kernel_untyped((const void *)func, grid, block, args, sharedMem,
                                              stream);
}
// every block of the grid resident at once, for this_grid().sync(): the CPU backend runs the
// blocks in phases between grid barriers (docs/cpu-backend.md)
template <class T>
inline cudaError_t cudaLaunchCooperativeKernel(T *func, dim3 grid, dim3 block, void **args,
                                               size_t sharedMem = 0, cudaStream_t stream = 0) {
  return ::gmprof_host::launch_cooperative_untyped((const void *)func, grid, block, args,
                                                   sharedMem, stream);
}

#endif  // GMPROF_CPU_CUDA_RUNTIME_H
