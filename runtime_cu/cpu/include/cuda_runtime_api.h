// gmprof CPU backend: cuda_runtime_api.h is part of cuda_runtime.h here
#include "cuda_runtime.h"
