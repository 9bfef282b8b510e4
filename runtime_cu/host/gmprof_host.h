// gmprof host runtime: the interface that whole programs built with `gmprof nvcc` call.
//
// Stage: runtime (host side of whole programs). gmprof rewrites every kernel launch in host code
// (`k<<<g, b, s, st>>>(args)`, cudaLaunchKernel, cudaLaunchKernelEx) into a call here, and ends
// each translation unit with a table describing its kernels (their instrumented copies, the
// objects each launch profiles, how to fill the unit's launch description) that registers itself
// before main(). At each launch the runtime (gmprof_host.cpp) decides whether the launch is
// selected (kernel name, launches skipped and counted); a selected launch of an instrumented
// kernel runs the instrumented copy with its counters laid out, and its counters are folded on
// the device into the totals of its group of launches with the same layout (read back once, at
// exit); everything else runs the original
// kernel as it was. At exit the raw records go to the report file, which gmprof decodes in
// Python with the decoder `gmprof profile` uses.
//
// Compiled by nvcc (GPU) or by g++ against gmprof's CUDA runtime emulation (CPU backend); the
// same text serves both.
#ifndef GMPROF_HOST_H
#define GMPROF_HOST_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <string.h>

#include <tuple>
#include <type_traits>
#include <utility>

namespace gmprof_host {

// ObjectDesc::kind
enum { OBJ_PARAM = 1, OBJ_GLOBAL = 2, OBJ_SHARED = 3, OBJ_SHARED_DYNAMIC = 4 };

// One entry of the launch's object table (gmprof.cuh's Launch::obj), in the plan's slot order.
struct ObjectDesc {
  int slot;                   // index in Launch::obj
  int kind;                   // OBJ_*
  int param;                  // OBJ_PARAM: the kernel parameter (a pointer)
  int global;                 // OBJ_GLOBAL: index in ModuleDesc's globals
  unsigned long long unit;    // bytes per counter (device: element size, at least 4; shared: 4)
  unsigned long long elem;    // element size
  unsigned long long bytes;   // OBJ_SHARED: the array's bytes; OBJ_GLOBAL: declared bytes (0: the symbol's)
  int live_ranges;            // enhanced mode keeps live-range statistics for it
  int static_only;            // a device object no site counts at run time: no counters needed
  int ranges;                 // range sites count into it: a difference array follows its
                              // counters (n + 1 entries, gmprof.cuh dm_range)
};

struct ParamDesc {
  unsigned long long size;
  int pointer;
};

typedef void (*Invoker)(void **);

struct ModuleDesc;

// A kernel launched from the device whose child copy is profiled (gmprof/program/children.py):
// its objects under the children's plan (every site counted by its hook)
struct ChildKernelDesc {
  const char *name;
  int n_objects;
  const ObjectDesc *objects;
  const char *parents;  // the kernels whose copies may launch it, "k\n" each (by name)
};

struct KernelDesc {
  const char *name;               // the name expression (`matmul<16>`)
  const void *native;             // the kernel as the program has it
  const void *instrumented;       // its instrumented copy (null: not instrumented)
  Invoker invoke_native;          // CPU backend: unpack the argument array and call
  Invoker invoke_instrumented;
  int n_params;
  const ParamDesc *params;
  int n_objects;
  const ObjectDesc *objects;
  const ModuleDesc *module;
};

// One instrumented (or, on the CPU backend, translated) translation unit.
struct ModuleDesc {
  const char *id;
  const char *manifest;           // JSON: source, options, mode, plan digest (for the decoder)
  const char *defaults;           // build-time options ("kernel=...\ncount=...\n"), may be empty
  int instrumented;
  int n_sites;
  int counter_bits;
  unsigned threshold;
  int sm;                         // gmprof.cuh's GMPROF_SM: 2 chosen per launch, 0 device memory
  int enhanced;
  cudaError_t (*fill)(const void *launch, size_t bytes, cudaStream_t stream);
  unsigned long long launch_bytes;  // sizeof(gmprof::Launch) as this unit compiled it
  int n_globals;
  void (*global)(int index, void **address, size_t *bytes);
  int n_sizes;
  const char *const *size_names;  // sizeof of the user's types, as this unit compiled them
  const unsigned long long *sizes;
  int warps;                      // --gmprof-access-stats: per-site warp statistics (GMPROF_WARPS)
  // launches from device code (dynamic parallelism) in the copies, which run the original
  // child unprofiled: how many, per (parent, child) ("parent\tchild"); the function adds the
  // device's counts into `counts` and zeroes them (absent, 0: none in this unit)
  int n_device_launches;
  const char *const *device_launch_names;
  cudaError_t (*device_launches)(unsigned long long *counts);
  // the kernels launched from the copies whose child copies are profiled, by index (the
  // copies' `child_desc(c)`; gmprof_host_children.h lays them out with each group)
  int n_children;
  const ChildKernelDesc *children;
};

void register_module(const ModuleDesc *module, KernelDesc *kernels, int n);

// ---------------------------------------------------------------- launches

struct Config {
  dim3 grid, block;
  size_t shared_mem;
  cudaStream_t stream;
  const cudaLaunchConfig_t *ex;  // cudaLaunchKernelEx's configuration (null otherwise)
  bool cooperative;              // cudaLaunchCooperativeKernel
};

// Runs one launch (of the original kernel or, when selected, its instrumented copy). `typed`
// unpacks the argument array for `kernel`'s own parameter types (the CPU backend calls it with
// the function to run set aside; null when only the registry knows the types).
cudaError_t dispatch(const void *kernel, const Config &config, void **args, Invoker typed);

// the function the CPU backend's typed trampoline calls (launches are serialised)
extern const void *g_running;

template <class... P, size_t... I>
inline void call_unpacked(void (*k)(P...), void **a, std::index_sequence<I...>) {
  k(*static_cast<typename std::remove_reference<P>::type *>(a[I])...);
}

template <class... P>
void trampoline(void **a) {
  call_unpacked(reinterpret_cast<void (*)(P...)>(const_cast<void *>(g_running)), a,
                std::index_sequence_for<P...>{});
}

template <class... P>
struct Launcher {
  void (*kernel)(P...);
  Config config;
  // `k<<<...>>>(args)` converts each argument to its parameter's type, as a call does
  void operator()(P... args) const {
    void *argv[sizeof...(P) + 1] = {const_cast<void *>(static_cast<const void *>(&args))...,
                                    nullptr};
    dispatch(reinterpret_cast<const void *>(kernel), config, argv,
#if defined(GMPROF_CPU)
             &trampoline<P...>
#else
             nullptr
#endif
    );
  }
};

template <class... P>
inline Launcher<P...> launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared_mem = 0,
                             cudaStream_t stream = 0) {
  return Launcher<P...>{kernel, Config{grid, block, shared_mem, stream, nullptr, false}};
}

cudaError_t launch_kernel_untyped(const void *kernel, dim3 grid, dim3 block, void **args,
                                  size_t shared_mem, cudaStream_t stream);

template <class T>
inline cudaError_t launch_kernel(T *kernel, dim3 grid, dim3 block, void **args,
                                 size_t shared_mem = 0, cudaStream_t stream = 0) {
  return launch_kernel_untyped(reinterpret_cast<const void *>(kernel), grid, block, args,
                               shared_mem, stream);
}

cudaError_t launch_cooperative_untyped(const void *kernel, dim3 grid, dim3 block, void **args,
                                       size_t shared_mem, cudaStream_t stream);

template <class T>
inline cudaError_t launch_cooperative_kernel(T *kernel, dim3 grid, dim3 block, void **args,
                                             size_t shared_mem = 0, cudaStream_t stream = 0) {
  return launch_cooperative_untyped(reinterpret_cast<const void *>(kernel), grid, block, args,
                                    shared_mem, stream);
}

cudaError_t launch_kernel_ex_untyped(const cudaLaunchConfig_t *config, const void *kernel,
                                     void **args, Invoker typed);

inline cudaError_t launch_kernel_ex_c(const cudaLaunchConfig_t *config, const void *kernel,
                                      void **args) {
  return launch_kernel_ex_untyped(config, kernel, args, nullptr);
}

template <class... P, class... A>
inline cudaError_t launch_kernel_ex(const cudaLaunchConfig_t *config, void (*kernel)(P...),
                                    A &&...actual) {
  return [&](P... args) {
    void *argv[sizeof...(P) + 1] = {const_cast<void *>(static_cast<const void *>(&args))...,
                                    nullptr};
    return launch_kernel_ex_untyped(config, reinterpret_cast<const void *>(kernel), argv,
#if defined(GMPROF_CPU)
                                    &trampoline<P...>
#else
                                    nullptr
#endif
    );
  }(std::forward<A>(actual)...);
}

// A template kernel launched with deduced template arguments. gmprof writes, beside the kernel,
// a host function template with the kernel's template head and parameters that returns the
// specialisation a call with these arguments picks (`__gmprof_deduce_k`, see
// gmprof/program/instances.py): `launch_deduced(g, b)(p, n)([](auto... a) { return
// __gmprof_deduce_k(a...); })` launches that specialisation as `k<T><<<g, b>>>(p, n)` would,
// converting each argument to its parameter's type. Without one (the CPU backend only: a kernel
// is a C++ function there), `[](auto... a) { k(a...); }` deduces them as a call does, inside a
// lambda the runtime runs on each thread, unprofiled. The arguments are evaluated once.
template <class... A>
struct DeducedLaunch {
  Config config;
  std::tuple<A...> args;
  template <class F, size_t... I>
  void run(F f, std::index_sequence<I...>) {
    if constexpr (!std::is_void<decltype(f(std::get<I>(args)...))>::value) {
      launch(f(std::get<I>(args)...), config.grid, config.block, config.shared_mem,
             config.stream)(std::get<I>(args)...);
    } else {
      void (*fn)(A...) = f;
      void *argv[sizeof...(A) + 1] = {static_cast<void *>(&std::get<I>(args))..., nullptr};
      dispatch(reinterpret_cast<const void *>(fn), config, argv,
#if defined(GMPROF_CPU)
               &trampoline<A...>
#else
               nullptr
#endif
      );
    }
  }
  template <class F>
  void operator()(F f) {
    run(f, std::index_sequence_for<A...>{});
  }
};

struct DeducedConfig {
  Config config;
  template <class... A>
  DeducedLaunch<typename std::decay<A>::type...> operator()(A &&...args) const {
    return DeducedLaunch<typename std::decay<A>::type...>{
        config, std::tuple<typename std::decay<A>::type...>(std::forward<A>(args)...)};
  }
};

inline DeducedConfig launch_deduced(dim3 grid, dim3 block, size_t shared_mem = 0,
                                    cudaStream_t stream = 0) {
  return DeducedConfig{Config{grid, block, shared_mem, stream, nullptr, false}};
}

// cudaDeviceReset: gmprof's counters live on the device; they are read back first.
cudaError_t device_reset();
inline cudaError_t thread_exit() { return device_reset(); }

// CUDA graphs (gmprof_host_graphs.h): the program's graphs keep the nodes it built; gmprof
// instantiates its own copy, where the kernel nodes that hold selected launches are profiled,
// and translates the executable's node operations to the copy's nodes. Same arguments as CUDA's
// (the legacy signatures that cuda_runtime.h keeps as C++ overloads included).
cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t graph_add_kernel_node(cudaGraphNode_t *node, cudaGraph_t graph,
                                  const cudaGraphNode_t *deps, size_t n_deps,
                                  const cudaKernelNodeParams *params);
// cudaGraphAddNode: a kernel node is marked as cudaGraphAddKernelNode's; a conditional node's
// body graphs are learnt (the kernel nodes marked in them are profiled in place)
#if defined(GMPROF_CPU) || CUDART_VERSION >= 12030
cudaError_t graph_add_node(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                           const cudaGraphEdgeData *edges, size_t n_deps,
                           cudaGraphNodeParams *params);
#endif
#if !defined(GMPROF_CPU) && CUDART_VERSION >= 12020 && CUDART_VERSION < 13000
cudaError_t graph_add_node(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                           size_t n_deps, cudaGraphNodeParams *params);
#endif
cudaError_t graph_instantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                              unsigned long long flags = 0);
inline cudaError_t graph_instantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                     cudaGraphNode_t *, char *, size_t) {
  return graph_instantiate(exec, graph, 0);
}
cudaError_t graph_instantiate_with_flags(cudaGraphExec_t *exec, cudaGraph_t graph,
                                         unsigned long long flags = 0);
cudaError_t graph_exec_kernel_node_set_params(cudaGraphExec_t exec, cudaGraphNode_t node,
                                              const cudaKernelNodeParams *params);
cudaError_t graph_exec_child_graph_node_set_params(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                   cudaGraph_t child);
cudaError_t graph_exec_update(cudaGraphExec_t exec, cudaGraph_t graph,
                              cudaGraphExecUpdateResultInfo *info);
inline cudaError_t graph_exec_update(cudaGraphExec_t exec, cudaGraph_t graph,
                                     cudaGraphNode_t *error_node,
                                     cudaGraphExecUpdateResult *result) {
  cudaGraphExecUpdateResultInfo info;
  memset(&info, 0, sizeof info);
  cudaError_t err = graph_exec_update(exec, graph, &info);
  if (error_node) *error_node = info.errorNode;
  if (result) *result = info.result;
  return err;
}
cudaError_t graph_exec_destroy(cudaGraphExec_t exec);
cudaError_t graph_clone(cudaGraph_t *clone, cudaGraph_t graph);
cudaError_t graph_destroy(cudaGraph_t graph);
cudaError_t graph_destroy_node(cudaGraphNode_t node);
#if !defined(GMPROF_CPU)
cudaError_t graph_instantiate_with_params(cudaGraphExec_t *exec, cudaGraph_t graph,
                                          cudaGraphInstantiateParams *params);
cudaError_t graph_exec_memcpy_node_set_params(cudaGraphExec_t exec, cudaGraphNode_t node,
                                              const cudaMemcpy3DParms *params);
cudaError_t graph_exec_memcpy_node_set_params_1d(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                 void *dst, const void *src, size_t count,
                                                 cudaMemcpyKind kind);
cudaError_t graph_exec_memset_node_set_params(cudaGraphExec_t exec, cudaGraphNode_t node,
                                              const cudaMemsetParams *params);
cudaError_t graph_exec_host_node_set_params(cudaGraphExec_t exec, cudaGraphNode_t node,
                                            const cudaHostNodeParams *params);
cudaError_t graph_exec_event_record_node_set_event(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                   cudaEvent_t event);
cudaError_t graph_exec_event_wait_node_set_event(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                 cudaEvent_t event);
cudaError_t graph_node_set_enabled(cudaGraphExec_t exec, cudaGraphNode_t node, unsigned int on);
cudaError_t graph_node_get_enabled(cudaGraphExec_t exec, cudaGraphNode_t node, unsigned int *on);
#endif

// ---------------------------------------------------------------- tables

template <class T>
constexpr ParamDesc param_desc() {
  return ParamDesc{sizeof(T), std::is_pointer<typename std::remove_cv<T>::type>::value ? 1 : 0};
}

template <class... P>
struct Params {
  static constexpr int count = (int)sizeof...(P);
  static const ParamDesc *table() {
    static const ParamDesc t[sizeof...(P) + 1] = {param_desc<P>()..., ParamDesc{0, 0}};
    return t;
  }
};

template <class... P>
inline const ParamDesc *params_of(void (*)(P...)) { return Params<P...>::table(); }

template <class... P>
constexpr int n_params_of(void (*)(P...)) { return (int)sizeof...(P); }

// Calls the kernel F with an argument array (the CPU backend's cudaLaunchKernel).
template <class Sig, Sig F>
struct Invoke;

template <class... P, void (*F)(P...)>
struct Invoke<void (*)(P...), F> {
  static void run(void **a) { call_unpacked(F, a, std::index_sequence_for<P...>{}); }
};

constexpr unsigned long long unit_of(unsigned long long elem) { return elem > 4 ? elem : 4; }

template <class T>
struct Pointee {
  static constexpr unsigned long long size = sizeof(T);
};
template <>
struct Pointee<void> {
  static constexpr unsigned long long size = 1;
};

// sizeof what the kernel's I-th parameter points to (the element of the object it names)
template <size_t I, class... P>
constexpr unsigned long long pointee_size(void (*)(P...)) {
  typedef typename std::tuple_element<I, std::tuple<P...>>::type Param;
  typedef typename std::remove_cv<typename std::remove_pointer<Param>::type>::type T;
  return Pointee<T>::size;
}

}  // namespace gmprof_host

// the kernel's invoker for the registry: `GMPROF_HOST_INVOKER(k<16>)` (on a GPU the runtime
// launches through cudaLaunchKernel and needs none)
#if defined(GMPROF_CPU)
#define GMPROF_HOST_INVOKER(...) \
  (&::gmprof_host::Invoke<decltype(&__VA_ARGS__), &__VA_ARGS__>::run)
#else
#define GMPROF_HOST_INVOKER(...) nullptr
#endif

#endif  // GMPROF_HOST_H
