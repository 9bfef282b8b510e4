// gmprof CPU backend: cuda_profiler_api.h is part of cuda_runtime.h here
#include "cuda_runtime.h"
