// A kernel whose arithmetic nvcc (-fmad=true, its default) compiles differently once gmprof's
// hooks stand between its statements: bench/contraction.py prints the fma / mul / add / sub
// counts of both (docs/whole-programs.md, Rodinia myocyte). Each rate is a difference of
// products, `k_on * c * (total - b) - k_off * b`; natively nvcc keeps the two products and
// subtracts them, in the instrumented copy (each statement in a block of its own, behind its
// hook's branches) it fuses the second product into an fma.
__global__ void rates(const float *state, float *rate, const int *first) {
  const int s = first[blockIdx.x * blockDim.x + threadIdx.x];
  const float b0 = state[s], b1 = state[s + 1], b2 = state[s + 2];
  const float c0 = state[s + 3], c1 = state[s + 4], c2 = state[s + 5];
  rate[s] = 2.5e-4f * c0 * (6.0f - b0) - 2e-3f * b0;
  rate[s + 1] = 2.5e-4f * c1 * (1.5f - b1) - 2e-3f * b1;
  rate[s + 2] = 30.0f * c2 * (0.08f - b2) - 0.02f * b2;
  const float bound = rate[s + 2] + rate[s];
  rate[s + 3] = bound * c1 - rate[s + 1];
}

int main() {
  rates<<<1, 32>>>(nullptr, nullptr, nullptr);
  return 0;
}
