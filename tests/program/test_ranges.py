"""Range sites in whole programs: a loop whose walk over a device array is counted once per entry
of the loop (gmprof.cuh dm_range: +W at the walk's first element, -W after its last, in the
difference array that follows the object's counters). The host runtime must allocate that array,
zero it and add its prefix sum to the counters; without it the updates landed past the counters'
buffer (on the GPU, an illegal address when nothing was mapped there; Rodinia's srad_v1, whose
`reduce` walks d_sums[i] in one thread) and the walks were not counted. Counts derived by hand."""
from __future__ import annotations

import json

from conftest import gmprof

PROGRAM = r"""
#include <cstdio>
// the threads that walk are chosen by data (who[]), so the walks are counted at run time
__global__ void walks(const float *a, const int *who, float *out, int n, int lo) {
  int t = threadIdx.x;
  float s = 0;
  if (t == who[0])
    for (int j = 0; j < n; j++) s += a[j];
  if (t == who[1])
    for (int j = lo; j < n; j++) s += a[j];
  out[t] = s;
}
int main() {
  const int n = 1000;
  float h[n], o[32];
  int w[2] = {3, 7};
  for (int i = 0; i < n; i++) h[i] = i;
  float *a, *out;
  int *who;
  cudaMalloc(&a, sizeof h);
  cudaMalloc(&out, sizeof o);
  cudaMalloc(&who, sizeof w);
  cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemcpy(who, w, sizeof w, cudaMemcpyHostToDevice);
  for (int k = 0; k < 2; k++) walks<<<1, 32>>>(a, who, out, n, 600);
  cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost);
  printf("%.0f %.0f %.0f\n", o[3], o[7], o[0]);
  return 0;
}
"""


def test_walks_are_counted_through_the_difference_array(tmp_path, need_gxx):
    (tmp_path / "walks.cu").write_text(PROGRAM)
    p = gmprof("run", "--json", "walks.cu", cwd=tmp_path, check=False)
    assert p.returncode == 0, p.stderr
    # sum(0..999) = 499500; sum(600..999) = 400 * (600 + 999) / 2 = 319800
    assert "499500 319800 0" in p.stderr
    (kernel,) = json.loads(p.stdout)["kernels"]
    assert kernel["run"]["launches"] == 2
    a = {x["name"]: x for x in kernel["arrays"]}["a"]
    # each launch: thread 3 reads a[0..999] once, thread 7 a[600..999] once more
    assert (a["reads"], a["writes"], a["out_of_range"]) == (2 * (1000 + 400), 0, 0)
    assert a["counts"] == [2] * 600 + [4] * 400
    # both walks are range sites (counted once per entry of their loop), not formulas
    walks = [s for s in kernel["sites"] if s["object"] == "a"]
    assert [(s["how"], "as the range it walks" in s["strategy"]) for s in walks] == \
        [("measured", True)] * 2
    # executions: 2 launches x 1000 and 2 x 400
    assert [s["executions"] for s in walks] == [2000, 800]
