"""Which launches are profiled, with Nsight Compute's conventions: -k/--kernel-name (a kernel's
name, a template's name expression, or `regex:PATTERN`), -s/--launch-skip N (matching launches
to run unprofiled first), -c/--launch-count N (matching launches to profile at most). Launches
not selected run the original kernel untouched."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import OptionError


def base_name(name_expression: str) -> str:
    """`matmul<16>` -> `matmul`, `ns::k` -> `ns::k`: the name ncu's -k matches."""
    return name_expression.split("<", 1)[0].strip()


@dataclass
class LaunchSelection:
    kernel: str | None = None
    skip: int = 0
    count: int | None = None
    _matched: int = field(default=0, repr=False)
    _taken: int = field(default=0, repr=False)

    def __post_init__(self):
        self._regex = None
        if self.kernel is not None and self.kernel.startswith("regex:"):
            try:
                self._regex = re.compile(self.kernel[len("regex:"):])
            except re.error as e:
                raise OptionError(f"-k {self.kernel!r}: not a regular expression ({e})") \
                    from None

    @property
    def everything(self) -> bool:
        return self.kernel is None and not self.skip and self.count is None

    def matches(self, name_expression: str) -> bool:
        if self.kernel is None:
            return True
        if self._regex is not None:
            return bool(self._regex.search(name_expression) or
                        self._regex.search(base_name(name_expression)))
        return self.kernel in (name_expression, base_name(name_expression))

    def take(self, name_expression: str) -> bool:
        """Whether this launch (the next in program order) is profiled."""
        if not self.matches(name_expression):
            return False
        self._matched += 1
        if self._matched <= self.skip:
            return False
        if self.count is not None and self._taken >= self.count:
            return False
        self._taken += 1
        return True

    def describe(self) -> str:
        parts = [f"-k {self.kernel}"] if self.kernel is not None else []
        if self.skip:
            parts.append(f"-s {self.skip}")
        if self.count is not None:
            parts.append(f"-c {self.count}")
        return " ".join(parts)
