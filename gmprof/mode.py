"""Mode: the user's choice of how to count, as the paper names it (basic, SA, NA, SM, TH), plus
gmprof's own options (counter width, enhanced live ranges, sampling, trace, what to profile).

Configuration, read by every stage after analysis: the planner (which sites get hooks), the
rewriter (the GMPROF_* macros), the runtime (counter layout) and the report (count labels).
Mode.parse reads the command line's and the API's spelling (`SA-NA-SM-TH`); an invalid
combination is a GmprofError.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from gmprof.errors import OptionError


WARPS_BLOCKS = 2048  # --access-stats-blocks' default


@dataclass(frozen=True)
class Mode:
    """The paper's optimisations as flags, plus ours. Names: basic, SA, NA, SM, TH."""

    sa: bool = True
    na: bool = False
    sm: bool = True
    threshold: int | None = None
    counter_bits: int = 32
    enhanced: bool = False
    sampling: float | None = None
    sampler: str = "rng"  # 'rng' (a register generator) or 'paper' (a 0/1 sequence)
    # the sampler's seed (each launch's is derived from it and the launch's number): the
    # same seed keeps the same accesses; another gives another sample of the same design
    sampling_seed: int = 0
    trace: bool = False
    profile: str = "both"  # 'shm', 'dm' or 'both'
    # False: no site is left to a formula (every site gets a hook; loop-invariant sites are
    # weighted). The soundness tests use it to check the loop-invariance claims on their own.
    static_counts: bool = True
    # range counting (passes/ranges.py): a device access that walks a range in a loop is
    # counted once per entry of the loop. False: per access (to measure what ranges save).
    ranges: bool = True
    # where a loop's once-per-entry counts (ranges, spreads, gathers) are made: before the loop
    # where passes/entry.py proves it exact (the loop's body stays as written, so the compiler
    # unrolls it as without gmprof), else in its first iteration. False: always in the first
    # iteration (to measure what the placement saves).
    loop_entry: bool = True
    # per-warp access statistics (--access-stats): shared wavefronts and device sectors per
    # request of every site (static sites from their formulas at the launch, the others
    # measured per access; a site counted once per loop entry keeps that count and gets a
    # per-access measuring call beside it, passes/hooks.warp_call)
    warps: bool = False
    # --access-stats on a large grid: hooked sites measured in 1 block in 2^s, the largest s
    # that keeps at least this many blocks measured (passes/block_sample.py); 0: every block
    # (--access-stats-exact). Static sites' statistics are exact either way.
    warps_blocks: int = WARPS_BLOCKS
    # the other counter families on (gmprof/passes/tallies.py, by name: `sharing`), each
    # compiled in by its macro GMPROF_<NAME>
    tallies: frozenset = frozenset()

    @property
    def exact(self) -> bool:
        return not self.na and self.sampling is None and self.threshold is None

    @property
    def name(self) -> str:
        if self.trace:
            return "trace"
        parts = []
        if self.sa:
            parts.append("SA")
        if self.na:
            parts.append("NA")
        if self.sm:
            parts.append("SM")
        if self.threshold is not None:
            parts.append("TH")
        base = "-".join(parts) or "basic"
        # (64-bit counters are a width, not another mode: "default [64-bit]")
        if Mode(**{**self.__dict__, "ranges": True, "loop_entry": True, "warps": False,
                   "warps_blocks": WARPS_BLOCKS, "tallies": frozenset(),
                   "sampling_seed": 0,
                   "counter_bits": 32 if self.counter_bits == 64 else self.counter_bits}) == \
                Mode(profile=self.profile):
            base = "default"
        if not self.static_counts:
            base += " (no static counts)"
        if not self.ranges:
            base += " (no ranges)"
        if not self.loop_entry:
            base += " (counts in first iterations)"
        extra = []
        if self.counter_bits != 32:
            extra.append(f"{self.counter_bits}-bit")
        if self.enhanced:
            extra.append("enhanced")
        if self.sampling is not None:
            extra.append(f"sampling {self.sampling:g} ({self.sampler})")
        if self.warps:
            extra.append("access stats" + (" exact" if not self.warps_blocks else ""))
        extra.extend(sorted(self.tallies))
        return base + (f" [{', '.join(extra)}]" if extra else "")

    @staticmethod
    def parse(text: str, *, threshold=None, counter_bits=32, enhanced=False, sampling=None,
              sampler="rng", profile="both", warps=False, tallies=(), sampling_seed=0,
              warps_blocks=WARPS_BLOCKS) -> "Mode":
        """`default`, `basic`, `trace`, or flags joined by '-' or '+': SA, NA, SM, TH
        (`SA-NA-SM-TH`, the paper's names), each at most once; None is `default`."""
        written = "default" if text is None else str(text)
        text = written.strip()
        if counter_bits not in (8, 16, 32, 64):
            raise OptionError(f"--counter-bits must be 8, 16, 32 or 64, not {counter_bits}")
        if profile not in ("shm", "dm", "both"):
            raise OptionError(f"--profile must be shm, dm or both, not {profile!r}")
        if sampling is not None and not (0.0 < sampling <= 1.0):
            raise OptionError(f"the sampling rate must be in (0, 1], not {sampling}")
        if int(warps_blocks) < 0:
            raise OptionError(f"--access-stats-blocks must be at least 0, not {warps_blocks}")
        if sampler not in ("rng", "paper"):
            raise OptionError(f"--sampler must be rng or paper, not {sampler!r}")
        low = text.lower()
        if low == "default":
            flags = {"sa", "sm"}
        elif low == "basic":
            flags = set()
        elif low == "trace":
            # (the counter families stay: passes/tallies.check says which cannot trace)
            return Mode(sa=False, sm=False, trace=True, profile=profile,
                        tallies=frozenset(tallies))
        else:
            flags = set()
            parts = [p.strip() for p in re.split(r"[-+]", low)]
            for part, part_text in zip(parts, re.split(r"[-+]", text)):
                if part not in ("sa", "na", "sm", "th", "basic"):
                    what = "an empty mode" if not text else "an empty part" if not part else \
                        f"unknown mode {part_text.strip()!r}"
                    raise OptionError(f"--mode {written!r}: {what}: use default, basic, trace, or "
                                      "SA, NA, SM, TH joined by '-' (SA-NA-SM-TH)")
                if parts.count(part) > 1:
                    raise OptionError(f"--mode {written!r}: {part_text.strip()} is given twice")
                if part != "basic":
                    flags.add(part)
        if "th" in flags and threshold is None:
            threshold = 255 if counter_bits == 8 else 65535 if counter_bits == 16 else 255
        if threshold is not None:
            flags.add("th")
            if threshold < 1:
                raise OptionError(f"the threshold must be at least 1, not {threshold}")
            limit = (1 << counter_bits) - 1
            if threshold > limit:
                raise OptionError(f"threshold {threshold} does not fit {counter_bits}-bit "
                                  f"counters (at most {limit})")
        elif counter_bits < 32:
            raise OptionError(f"{counter_bits}-bit counters need a threshold (--threshold N "
                              "or mode TH)")
        return Mode(sa="sa" in flags, na="na" in flags, sm="sm" in flags,
                    threshold=threshold if "th" in flags else None, counter_bits=counter_bits,
                    enhanced=enhanced, sampling=sampling, sampler=sampler, profile=profile,
                    warps=bool(warps), tallies=frozenset(tallies),
                    sampling_seed=int(sampling_seed), warps_blocks=int(warps_blocks))

    def paper_sequence(self) -> tuple[int, int]:
        """(length, ones) of the paper sampler's 0/1 sequence: a power of two long (the device
        masks its index), holding exactly round(rate * length) ones, at least one, so that the
        rate a run's sample has is known exactly rather than drawn."""
        length = 1 << 16
        return length, max(1, min(length, round((self.sampling or 0.0) * length)))

    @property
    def sample_rate(self) -> float | None:
        """The probability that an access is kept, as the device draws it: the rng sampler
        compares 32 random bits with rate * 2^32; the paper's reads a sequence of
        paper_sequence() (ones / length). Sampled counts are scaled by its inverse."""
        if self.sampling is None:
            return None
        if self.sampler == "paper":
            length, ones = self.paper_sequence()
            return ones / length
        return min(int(self.sampling * 2 ** 32), 2 ** 32 - 1) / 2 ** 32

    def widened(self) -> "Mode":
        """The same mode with 64-bit counters (a launch whose 32-bit counters could pass
        2^32, runtime/widen.py)."""
        return dataclasses.replace(self, counter_bits=64)

    def defines(self, sm: bool | None = None) -> dict:
        """The GMPROF_* macros for this mode (SM may be overridden at launch)."""
        use_sm = self.sm if sm is None else sm
        return {
            "GMPROF_SM": int(use_sm and not self.trace),
            "GMPROF_ATOMIC": int(not self.na),
            "GMPROF_COUNTER_BITS": self.counter_bits,
            "GMPROF_THRESHOLD": self.threshold or 0,
            "GMPROF_SAMPLING": int(self.sampling is not None),
            "GMPROF_TRACE": int(self.trace),
            "GMPROF_ENHANCED": int(self.enhanced),
            "GMPROF_WARPS": int(self.warps),
            **{"GMPROF_" + name.upper(): 1 for name in sorted(self.tallies)},
        }


__all__ = ["Mode", "WARPS_BLOCKS"]
