// gmprof CPU backend: vector_functions.h is part of cuda_runtime.h here
#include "cuda_runtime.h"
