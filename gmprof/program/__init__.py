"""Whole CUDA programs: `gmprof nvcc` (translate, build, link the host runtime), `gmprof run`,
and the report files their runs write (decoded with the single-launch path's decoder)."""
