"""Found by the oracle (seed 1000), shrunk; launch grid=(1, 1, 1) block=(8, 1, 1) n=38.

gmprof got (when found):
  [default] d: 1 counters differ, total 0 (expected 8): [0] 0 (expected 8)
  [default] d: reads/writes 0/0 (expected 8/0)

__device__ int ld_k1000(const int *p, int i) { return p[i]; }
__global__ void k1000(const int *d, int *out, unsigned *res, unsigned *hist, int n)
{
  int tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  int bid = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  int t = bid * (blockDim.x * blockDim.y * blockDim.z) + tid;
  unsigned acc = 0;
  int v0 = ld_k1000(d, (0 % 1));
  res[t] += acc;
}
"""
FAMILY = 'fixed:helper_site_static_zero'
KERNEL = Kernel(name='k1000', grid=(1, 1, 1), block=(8, 1, 1), D=37, OUT=29, H=21, S=0, n=38, dvals=[2, 1, 4, 2, 4, 1, 0, 5, 0, 4, 4, 1, 3, 4, 6, 5, 3, 3, 5, 7, 1, 4, 6, 7, 5, 7, 4, 7, 5, 0, 0, 2, 7, 1, 3, 4, 0], body=[Local(name='v0', e=Load(arr='d', idx=Bin(op='%', a=Num(v=0), b=Num(v=1)), form='helper', off=0, helper='ld_k1000'))], helpers={'ld_k1000': 'read'}, features={'out_store', 'helper_read', 'block_odd', 'local', 'grid2d', 'affine'}, seed=1000, alias='')
