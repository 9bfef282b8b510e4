"""Written by hand from the oracle's finding (seeds 2010, 2029, 2054); launch grid=(1, 1, 1) block=(8, 1, 1) n=4.

gmprof got (when found):
  [default] d: 1 counters differ, total 12 (expected 14): [0] 5 (expected 7)
  [default] d: reads/writes 12/0 (expected 14/0)
  [SA] d: 1 counters differ, total 12 (expected 14): [0] 5 (expected 7)
  [SA] d: reads/writes 12/0 (expected 14/0)

__global__ void k2(const int *d, int *out, unsigned *res, unsigned *hist, int n)
{
  int tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  int bid = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  int t = bid * (blockDim.x * blockDim.y * blockDim.z) + tid;
  unsigned acc = 0;
  for (int j0 = 0; (j0 < (threadIdx.x % 3)); j0++) {
    acc += d[(d[(3 % 8)] % 8)];
  }
  res[t] += acc;
}
"""
FAMILY = 'uniform_site_thread_dependent_trip'
KERNEL = Kernel(name='k2', grid=(1, 1, 1), block=(8, 1, 1), D=8, OUT=8, H=4, S=0, n=4, dvals=[3, 1, 2, 0, 1, 1, 2, 3], body=[For(var='j0', init=Num(v=0), cond=Bin(op='<', a=Sym(cuda='j0', py='j0', thread_only=False), b=Bin(op='%', a=Sym(cuda='threadIdx.x', py='tx', thread_only=True), b=Num(v=3))), step='++', body=[Acc(op='+=', e=Load(arr='d', idx=Bin(op='%', a=Load(arr='d', idx=Bin(op='%', a=Num(v=3), b=Num(v=8)), form='sub', off=0, helper=''), b=Num(v=8)), form='sub', off=0, helper=''))], step_e=None, brace=True)], helpers={}, features={'loop_triangular', 'loop_thread_trip_invariant_site', 'data_index'}, seed=2, alias='')
