"""Written by hand from the oracle's finding (seeds 5042, 5043, 5045, 5055, 5059); launch grid=(1, 1, 1) block=(8, 1, 1) n=4.

gmprof got (when found):
  [default] sp: 16 counters differ, total 48 (expected 24): [0] 3 (expected 1), [1] 3 (expected 2), [2] 3 (expected 1), [3] 3 (expected 2)
  [SA] sp: 16 counters differ, total 48 (expected 24): [0] 3 (expected 1), [1] 3 (expected 2), [2] 3 (expected 1), [3] 3 (expected 2)
  [basic] sp: 16 counters differ, total 48 (expected 24): [0] 3 (expected 1), [1] 3 (expected 2), [2] 3 (expected 1), [3] 3 (expected 2)
  [trace] sp: 16 counters differ, total 48 (expected 24): [0] 3 (expected 1), [1] 3 (expected 2), [2] 3 (expected 1), [3] 3 (expected 2)

struct P_k3 { int a; int b; };
__global__ void k3(const int *d, int *out, unsigned *res, unsigned *hist, int n)
{
  int tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  int bid = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  int t = bid * (blockDim.x * blockDim.y * blockDim.z) + tid;
  unsigned acc = 0;
  __shared__ P_k3 sp[8];
  for (int w = tid; w < 8; w += blockDim.x * blockDim.y * blockDim.z) {
    sp[w].a = w;
    sp[w].b = w;
  }
  __syncthreads();
  acc += sp[(threadIdx.x % 8)].b;
  res[t] += acc;
}
"""
FAMILY = 'fixed:shared_struct_member_whole_element'
KERNEL = Kernel(name='k3', grid=(1, 1, 1), block=(8, 1, 1), D=8, OUT=8, H=4, S=0, n=4, dvals=[3, 1, 2, 0, 1, 1, 2, 3], body=[Acc(op='+=', e=Load(arr='sp', idx=Bin(op='%', a=Sym(cuda='threadIdx.x', py='tx', thread_only=True), b=Num(v=8)), form='sub', off=0, helper='', member='b'))], helpers={}, features={'struct_member'}, SP=8, C=0, cvals=[], SC=False, seed=3, alias='')
