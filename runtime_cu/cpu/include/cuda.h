// cuda.h for the CPU backend's whole programs: the driver API's names, without the driver API.
//
// Many programs include <cuda.h> and use only the runtime API (Rodinia's do), or a few of the
// driver API's types and constants (CUresult, CUDA_SUCCESS, CUdeviceptr, CUDA_VERSION). Those
// are here, so such a program builds on the CPU backend. The CPU backend emulates the runtime
// API only (docs/whole-programs.md): a driver API function is declared deleted, so a program
// that calls one fails to compile at the call, and gmprof nvcc explains the compiler's message
// ("cuInit is part of CUDA's driver API, which the CPU backend does not emulate";
// gmprof/program/cpu_build.py). A driver function not listed below is simply undeclared, which
// gmprof nvcc explains the same way.
#ifndef GMPROF_CPU_CUDA_H
#define GMPROF_CPU_CUDA_H

#include <stddef.h>

#define CUDA_VERSION 13000
#define CU_STREAM_DEFAULT 0x0
#define CU_STREAM_NON_BLOCKING 0x1
#define CU_EVENT_DEFAULT 0x0

typedef enum cudaError_enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999
} CUresult;

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;  // the struct of cudaStream_t, as in CUDA
typedef struct CUevent_st *CUevent;    // the struct of cudaEvent_t, as in CUDA

// The driver API's functions that programs call most; any call is an error at compile time.
#ifdef __cplusplus
#define GMPROF_DRIVER_API(name) template <class... A> CUresult name(A...) = delete;
#else
#define GMPROF_DRIVER_API(name) \
  __attribute__((error("part of CUDA's driver API, which the CPU backend does not emulate"))) \
  CUresult name();
#endif
GMPROF_DRIVER_API(cuInit)
GMPROF_DRIVER_API(cuDriverGetVersion)
GMPROF_DRIVER_API(cuDeviceGet)
GMPROF_DRIVER_API(cuDeviceGetCount)
GMPROF_DRIVER_API(cuDeviceGetName)
GMPROF_DRIVER_API(cuDeviceGetAttribute)
GMPROF_DRIVER_API(cuDeviceTotalMem)
GMPROF_DRIVER_API(cuDeviceComputeCapability)
GMPROF_DRIVER_API(cuCtxCreate)
GMPROF_DRIVER_API(cuCtxDestroy)
GMPROF_DRIVER_API(cuCtxSynchronize)
GMPROF_DRIVER_API(cuCtxGetCurrent)
GMPROF_DRIVER_API(cuCtxSetCurrent)
GMPROF_DRIVER_API(cuCtxPushCurrent)
GMPROF_DRIVER_API(cuCtxPopCurrent)
GMPROF_DRIVER_API(cuCtxDetach)
GMPROF_DRIVER_API(cuMemAlloc)
GMPROF_DRIVER_API(cuMemAllocHost)
GMPROF_DRIVER_API(cuMemFree)
GMPROF_DRIVER_API(cuMemFreeHost)
GMPROF_DRIVER_API(cuMemGetInfo)
GMPROF_DRIVER_API(cuMemGetAddressRange)
GMPROF_DRIVER_API(cuMemcpyHtoD)
GMPROF_DRIVER_API(cuMemcpyDtoH)
GMPROF_DRIVER_API(cuMemcpyDtoD)
GMPROF_DRIVER_API(cuMemcpyHtoDAsync)
GMPROF_DRIVER_API(cuMemcpyDtoHAsync)
GMPROF_DRIVER_API(cuMemsetD8)
GMPROF_DRIVER_API(cuMemsetD32)
GMPROF_DRIVER_API(cuModuleLoad)
GMPROF_DRIVER_API(cuModuleLoadData)
GMPROF_DRIVER_API(cuModuleLoadDataEx)
GMPROF_DRIVER_API(cuModuleUnload)
GMPROF_DRIVER_API(cuModuleGetFunction)
GMPROF_DRIVER_API(cuModuleGetGlobal)
GMPROF_DRIVER_API(cuLaunchKernel)
GMPROF_DRIVER_API(cuFuncSetBlockShape)
GMPROF_DRIVER_API(cuFuncGetAttribute)
GMPROF_DRIVER_API(cuStreamCreate)
GMPROF_DRIVER_API(cuStreamDestroy)
GMPROF_DRIVER_API(cuStreamSynchronize)
GMPROF_DRIVER_API(cuEventCreate)
GMPROF_DRIVER_API(cuEventDestroy)
GMPROF_DRIVER_API(cuEventRecord)
GMPROF_DRIVER_API(cuEventSynchronize)
GMPROF_DRIVER_API(cuEventElapsedTime)
GMPROF_DRIVER_API(cuPointerGetAttribute)
GMPROF_DRIVER_API(cuGetErrorName)
GMPROF_DRIVER_API(cuGetErrorString)
#undef GMPROF_DRIVER_API

#endif  // GMPROF_CPU_CUDA_H
