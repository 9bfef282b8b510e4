// Kernels for tests/runtime/test_cpu_backend.py: every atomic, on global and on shared memory.
// Each thread records the old value each atomic returned; the test checks the final values and
// the old values with properties that hold whatever order the threads ran in.

#define N 256

struct Cells {
    int add_i, sub_i, min_i, max_i, and_i, or_i, xor_i, exch_i, cas_i;
    unsigned add_u, inc_u, dec_u, sub_u, min_u, max_u, and_u, or_u, xor_u, cas_u, exch_u;
    unsigned long long add_ull, min_ull, max_ull, and_ull, or_ull, xor_ull, cas_ull, exch_ull;
    long long min_ll, max_ll;
    float add_f, exch_f;
    double add_d;
    unsigned short cas_us, pad;
    int add_blk, add_sys;
};

#define NOLD 36

__device__ void all_atomics(Cells *c, int t, const int *val, long long *old)
{
    int v = val[t];
    int k = 0;
    old[k++] = atomicAdd(&c->add_i, 1);
    old[k++] = atomicSub(&c->sub_i, 1);
    old[k++] = atomicMin(&c->min_i, v);
    old[k++] = atomicMax(&c->max_i, v);
    old[k++] = atomicAnd(&c->and_i, ~(1 << (t % 31)));
    old[k++] = atomicOr(&c->or_i, 1 << (t % 31));
    old[k++] = atomicXor(&c->xor_i, 1 << (t % 31));
    old[k++] = atomicExch(&c->exch_i, t + 1);
    old[k++] = atomicCAS(&c->cas_i, 0, t + 1);
    old[k++] = atomicAdd(&c->add_u, 3u);
    old[k++] = atomicInc(&c->inc_u, 9u);
    old[k++] = atomicDec(&c->dec_u, 9u);
    old[k++] = atomicSub(&c->sub_u, 2u);
    old[k++] = atomicMin(&c->min_u, (unsigned)v);
    old[k++] = atomicMax(&c->max_u, (unsigned)v);
    old[k++] = atomicAnd(&c->and_u, ~(1u << (t % 32)));
    old[k++] = atomicOr(&c->or_u, 1u << (t % 32));
    old[k++] = atomicXor(&c->xor_u, 1u << (t % 32));
    old[k++] = atomicCAS(&c->cas_u, 0u, (unsigned)t + 1u);
    old[k++] = atomicExch(&c->exch_u, (unsigned)t + 1u);
    old[k++] = (long long)atomicAdd(&c->add_ull, 1ull << 33);
    old[k++] = (long long)atomicMin(&c->min_ull, (unsigned long long)v << 32);
    old[k++] = (long long)atomicMax(&c->max_ull, (unsigned long long)v << 32);
    old[k++] = (long long)atomicAnd(&c->and_ull, ~(1ull << (t % 64)));
    old[k++] = (long long)atomicOr(&c->or_ull, 1ull << (t % 64));
    old[k++] = (long long)atomicXor(&c->xor_ull, 1ull << (t % 64));
    old[k++] = (long long)atomicCAS(&c->cas_ull, 0ull, (unsigned long long)t + 1ull);
    old[k++] = (long long)atomicExch(&c->exch_ull, (unsigned long long)t + 1ull);
    old[k++] = atomicMin(&c->min_ll, (long long)v - 1000);
    old[k++] = atomicMax(&c->max_ll, (long long)v - 1000);
    old[k++] = (long long)atomicAdd(&c->add_f, 1.0f);
    old[k++] = (long long)atomicExch(&c->exch_f, (float)(t + 1));
    old[k++] = (long long)(2.0 * atomicAdd(&c->add_d, 0.5));
    old[k++] = atomicCAS(&c->cas_us, (unsigned short)0, (unsigned short)(t + 1));
    old[k++] = atomicAdd_block(&c->add_blk, 2);
    old[k++] = atomicAdd_system(&c->add_sys, 5);
}

__global__ void global_atomics(Cells *c, const int *val, long long *old)
{
    int t = threadIdx.x;
    all_atomics(c, t, val, old + NOLD * t);
}

// The same on a shared copy, initialised from and written back to `c`.
__global__ void shared_atomics(Cells *c, const int *val, long long *old)
{
    __shared__ Cells s;
    int t = threadIdx.x;
    if (t == 0) s = *c;
    __syncthreads();
    all_atomics(&s, t, val, old + NOLD * t);
    __syncthreads();
    if (t == 0) *c = s;
}

// A spin lock built on atomicCAS/atomicExch around a non-atomic read-modify-write: only correct
// if the lock excludes, and only finishes if a thread spinning on it lets the holder run.
__global__ void spin_lock(int *lock, int *total)
{
    for (int k = 0; k < 3; ++k) {
        while (atomicCAS(lock, 0, 1) != 0) {}
        int t = *total;
        __nanosleep(100);   // a switch point inside the critical section
        *total = t + 1;
        atomicExch(lock, 0);
    }
}

// __activemask() inside a lock's critical section, while the warp's other lanes spin on the lock:
// the holder must not wait for the spinners (they never reach the call).
__global__ void lock_and_activemask(int *lock, unsigned *masks)
{
    while (atomicCAS(lock, 0, 1) != 0) {}
    masks[threadIdx.x] = __activemask();
    atomicExch(lock, 0);
}
