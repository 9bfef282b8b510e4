"""The instrumented kernel kept at the native kernel's occupancy by its registers.

Stage: host runtime (GPU backend). Hooks inlined into a kernel add registers, and a kernel that
sits at an occupancy cliff loses resident warps for a register or two: spmv's kernel (1,024
threads a block) has 32 registers natively, 2 blocks a SM; with --access-stats its hooks made
it 34-40, 1 block a SM, and the gather-bound kernel ran 2.6x longer before any statistic was
measured (bench/variant_timing.py on an H200, docs/results/access_stats.md). Fewer resident
warps hide less of the user's memory latency: a change to how the user's code runs that is
not counting.

When the instrumented kernel's blocks per SM (the occupancy API, with its dynamic shared
memory) are fewer than the native kernel's, and registers are what limits them, the module is
compiled again with --maxrregcount at the most registers that keep the native kernel's blocks
per SM, and used when that gives back the blocks. What the cap spills goes to local memory, in
the hooks' code as much as the user's; counts and outputs do not depend on it.
"""
from __future__ import annotations


def blocks_by_registers(registers: int, threads: int, registers_per_sm: int = 65536,
                        unit: int = 256) -> int:
    """Blocks of `threads` threads that `registers` a thread let a SM hold (a warp's
    registers are allocated in units of `unit`)."""
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // unit) * unit
    return registers_per_sm // (warps * per_warp) if warps and per_warp else 0


def register_cap(native_blocks: int, instrumented_blocks: int, instrumented_registers: int,
                 threads: int, registers_per_sm: int = 65536) -> int | None:
    """The --maxrregcount that gives the instrumented kernel native_blocks blocks a SM back,
    or None where registers are not what it lost them to (or no cap of 16 or more would)."""
    if instrumented_blocks >= native_blocks or native_blocks <= 0:
        return None
    if blocks_by_registers(instrumented_registers, threads, registers_per_sm) >= native_blocks:
        return None  # shared memory or the block limit decides, not registers
    cap = (registers_per_sm // (native_blocks * -(-threads // 32) * 32)) // 8 * 8
    cap = min(cap, 255)
    if cap < 16 or cap >= instrumented_registers:
        return None
    return cap


__all__ = ["blocks_by_registers", "register_cap"]
