// gmprof CPU backend: builtin_types.h is part of cuda_runtime.h here
#include "cuda_runtime.h"
