#pragma once
__device__ inline float helper_scale(float v, float s) { return v * s; }
