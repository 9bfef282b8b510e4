"""Written by hand from the oracle's finding (seeds 1003, 1015, 1019); launch grid=(1, 1, 1) block=(8, 1, 1) n=4.

gmprof got (when found):
  [default] out: 8 counters differ, total 0 (expected 8): [0] 0 (expected 1), [1] 0 (expected 1), [2] 0 (expected 1), [3] 0 (expected 1)
  [default] out: reads/writes 0/0 (expected 8/0)
  [SA] out: 8 counters differ, total 0 (expected 8): [0] 0 (expected 1), [1] 0 (expected 1), [2] 0 (expected 1), [3] 0 (expected 1)
  [SA] out: reads/writes 0/0 (expected 8/0)
  [basic] out: 8 counters differ, total 0 (expected 8): [0] 0 (expected 1), [1] 0 (expected 1), [2] 0 (expected 1), [3] 0 (expected 1)
  [basic] out: reads/writes 0/0 (expected 8/0)
  [trace] out: 8 counters differ, total 0 (expected 8): [0] 0 (expected 1), [1] 0 (expected 1), [2] 0 (expected 1), [3] 0 (expected 1)
  [trace] out: reads/writes 0/0 (expected 8/0)

__global__ void k1(const int *d, int *out, unsigned *res, unsigned *hist, int n)
{
  int tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  int bid = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  int t = bid * (blockDim.x * blockDim.y * blockDim.z) + tid;
  unsigned acc = 0;
  atomicAdd(hist + (out[(threadIdx.x % 8)] % 4), (unsigned)(1));
  res[t] += acc;
}
"""
FAMILY = 'fixed:atomic_pointer_nested_read'
KERNEL = Kernel(name='k1', grid=(1, 1, 1), block=(8, 1, 1), D=8, OUT=8, H=4, S=0, n=4, dvals=[3, 1, 2, 0, 1, 1, 2, 3], body=[Atomic(idx=Bin(op='%', a=Load(arr='out', idx=Bin(op='%', a=Sym(cuda='threadIdx.x', py='tx', thread_only=True), b=Num(v=8)), form='sub', off=0, helper=''), b=Num(v=4)), val=Num(v=1), form='ptr', off=0, helper='')], helpers={}, features={'atomic_ptr_index_read', 'atomic'}, seed=1, alias='')
