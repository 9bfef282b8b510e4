"""The launch description shared with the device: numpy mirrors of gmprof.cuh's structs.

`Launch` and `Object` in runtime_cu/gmprof.cuh hold only 4- and 8-byte fields, laid out by the C
rules that numpy's `align=True` follows, so the same bytes mean the same thing to nvcc, NVRTC,
g++ and numpy (tests/runtime/test_layout.py checks the offsets against the compiler's).
"""
from __future__ import annotations

import numpy as np

MAX_OBJECTS = 64
AREA_HEADER = 2  # words: exited threads, logical clock
LR_BINS = 12
LR_STRIDE = 2 + LR_BINS

KIND_NONE, KIND_DEVICE, KIND_SHARED = 0, 1, 2
FLAG_WARP_UNIFORM_OK = 1

OBJECT = np.dtype([
    ("base", "<u8"), ("bytes", "<u8"), ("counters", "<u8"), ("oor", "<u8"),
    ("kind", "<u4"), ("n_counters", "<u4"), ("area_offset", "<u4"), ("lr_offset", "<u4"),
    ("unit", "<u4"), ("unit_shift", "<u4"), ("reserved", "<u4", (2,)),
], align=True)

LAUNCH = np.dtype([
    ("flags", "<u4"), ("area_words", "<u4"), ("dyn_user_bytes", "<u4"), ("n_sites", "<u4"),
    ("obj_counters", "<u4"), ("lr_offset", "<u4"), ("sample_state", "<u8"),
    ("area_global", "<u8"), ("unknown_oor", "<u8"), ("trace", "<u8"), ("trace_capacity", "<u8"),
    ("trace_count", "<u8"), ("sample_seq", "<u8"), ("sample_seq_len", "<u4"),
    ("sample_threshold", "<u4"), ("sampler", "<u4"), ("seed", "<u4"),
    ("clock_log", "<u8"), ("clock_capacity", "<u8"), ("clock_count", "<u8"),
    ("obj", OBJECT, (MAX_OBJECTS,)),
], align=True)


def new_launch() -> np.ndarray:
    return np.zeros((), LAUNCH)


def counter_dtype(bits: int) -> np.dtype:
    return {8: np.dtype("<u1"), 16: np.dtype("<u2"), 32: np.dtype("<u4")}[bits]
