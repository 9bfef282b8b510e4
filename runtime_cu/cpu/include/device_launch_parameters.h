// gmprof CPU backend: device_launch_parameters.h is part of cuda_runtime.h here
#include "cuda_runtime.h"
