"""What a lesson is: a family of kernels (one idea), its variants, its sweep, its check.

A lesson module defines one ``Lesson`` subclass. The GPU side (``gemmlab.lessons.run``) calls only
these methods; every array operation goes through ``xp`` (numpy or cupy), so the references and
checks run on NumPy data in the CPU tests.

* ``points(size, sweep)`` validates the user's ``--size`` / ``--points`` (one ``InputError`` line).
* ``inputs(xp, rng, pt)`` fresh random inputs; ``outputs(xp, pt)`` poisoned outputs with guards.
* ``launch(variant, ctx, ins, outs, pt)`` launches a variant (CuPy RawKernels in ``ctx.kernels``).
* ``check(variant, ins, outs, pt, xp)`` judges the outputs against the reference.
* ``nbytes(variant, pt)`` / ``flops(pt)``: what the rate columns divide by.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from gemmlab.errors import InputError
from gemmlab.lessons.article import ARTICLE, ArticleLesson

Value = Union[int, float]


@dataclass(frozen=True)
class Variant:
    name: str
    summary: str
    kernels: tuple[str, ...]  # the CUDA functions it launches, in order (empty: a library call)


@dataclass(frozen=True)
class Comparison:
    """Did going from ``baseline`` to ``optimised`` help? The first one is the lesson's headline."""

    baseline: str
    optimised: str
    what: str  # the optimisation in a few words, e.g. "16x16 shared-memory tiling"


@dataclass(frozen=True)
class Param:
    """The sweep parameter. ``is_size``: the sweep is over the problem size itself."""

    name: str
    label: str  # for messages: "matrix size n", "fraction of elements equal to K"
    kind: type  # int or float
    lo: Value
    hi: Value
    default: Value
    sweep: tuple[Value, ...]
    is_size: bool = False
    rule: Optional[Callable[[Value], Optional[str]]] = None  # extra check: an error text or None

    def parse(self, text: str, flag: str = "--points") -> tuple[Value, ...]:
        parts = [p.strip() for p in str(text).split(",") if p.strip()]
        if not parts:
            raise InputError(f"{flag}: expected comma-separated values of the {self.label}, got {text!r}")
        return tuple(self.validate(p, flag) for p in parts)

    def validate(self, raw: Any, flag: str = "--points") -> Value:
        try:
            v = self.kind(raw) if isinstance(raw, str) else raw
            if self.kind is int and (isinstance(v, bool) or not isinstance(v, int)):
                raise ValueError
            if self.kind is float:
                v = float(v)
        except (TypeError, ValueError):
            raise InputError(f"{flag}: {raw!r} is not a valid {self.label} (expected {self.kind.__name__}s "
                             f"from {self.lo} to {self.hi})") from None
        if not (isinstance(v, (int, float)) and math.isfinite(v) and self.lo <= v <= self.hi):
            raise InputError(f"{flag}: {self.label} must be from {self.lo} to {self.hi}, got {raw!r}")
        if self.rule is not None:
            why = self.rule(v)
            if why:
                raise InputError(f"{flag}: {self.label} {raw!r}: {why}")
        return v


@dataclass(frozen=True)
class Point:
    """One measured configuration: the problem size and the sweep parameter's value."""

    size: int
    name: str  # the parameter's name
    value: Value

    @property
    def label(self) -> str:
        return f"{self.name}={self.value}"

    def to_dict(self) -> dict:
        return {"size": self.size, "param": self.name, "value": self.value}


@dataclass(frozen=True)
class LessonCheck:
    """The verdict on one variant's output; ``ok`` only when every test passed."""

    ok: bool
    reason: str
    n_checked: int = 0
    n_unwritten: int = 0
    n_nonfinite: int = 0
    n_wrong: int = 0
    n_guard_written: int = 0
    max_abs_err: Optional[float] = None
    rel_err: Optional[float] = None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class LaunchContext:
    """What a launch needs from the device: the loaded kernels and a few properties."""

    kernels: Mapping[str, Any]
    sm_count: int = 1
    smem_per_block_optin: int = 48 * 1024
    extra: dict = field(default_factory=dict)


class Lesson:
    name: str = ""
    title: str = ""
    idea: str = ""  # what the lesson shows, one or two sentences
    source: str = ""  # the .cu file beside the module
    variants: tuple[Variant, ...] = ()
    comparisons: tuple[Comparison, ...] = ()
    size_label: str = "n"
    default_size: int = 1
    min_size: int = 1
    max_size: int = 1
    param: Param = None  # type: ignore[assignment]
    metric: str = "bandwidth"  # "bandwidth" (bytes/s vs the copy ceiling) or "flops"
    expected_category: str = ""  # the analyzer category the baseline should get (informative)
    odd_sizes: tuple[int, ...] = ()  # sizes that are not multiples of the block, for the GPU tests

    # --- metadata ---------------------------------------------------------------------------
    @property
    def article(self) -> ArticleLesson:
        return ARTICLE[self.name]

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        raise InputError(f"lesson {self.name}: no variant {name!r}; expected one of "
                         f"{', '.join(v.name for v in self.variants)}")

    def code(self) -> str:
        return resources.files("gemmlab.lessons").joinpath(self.source).read_text(encoding="utf-8")

    def describe(self) -> dict:
        p = self.param
        return {
            "name": self.name, "title": self.title, "idea": self.idea, "source": self.source,
            "variants": [{"name": v.name, "summary": v.summary, "kernels": list(v.kernels)} for v in self.variants],
            "comparisons": [c.__dict__ for c in self.comparisons],
            "size": {"label": self.size_label, "default": self.default_size, "min": self.min_size, "max": self.max_size},
            "sweep": {"param": p.name, "label": p.label, "default": p.default, "values": list(p.sweep),
                      "is_size": p.is_size},
            "metric": self.metric, "article_measured": self.article.measured,
            "expected_category": self.expected_category,
        }

    # --- validation -------------------------------------------------------------------------
    def check_size(self, size: Any, flag: str = "--size") -> int:
        if isinstance(size, bool) or not isinstance(size, int) or not self.min_size <= size <= self.max_size:
            raise InputError(f"{flag}: the {self.name} lesson's {self.size_label} must be an integer from "
                             f"{self.min_size} to {self.max_size}, got {size!r}")
        return size

    def points(self, size: Optional[int] = None, sweep: Optional[str] = None) -> list[Point]:
        """The configurations to run: the default sweep unless ``--size`` / ``--points`` say otherwise."""
        p = self.param
        if p.is_size:
            if size is not None and sweep is not None:
                raise InputError(f"lesson {self.name}: the sweep is over the {self.size_label}; give --size or "
                                 f"--points, not both")
            values = (self.check_size(size),) if size is not None else (p.parse(sweep) if sweep else p.sweep)
            out = [Point(int(v), p.name, v) for v in values]
            for pt in out:
                self.check_size(pt.size, "--points")
        else:
            n = self.check_size(size) if size is not None else self.default_size
            values = p.parse(sweep) if sweep else p.sweep
            out = [Point(n, p.name, v) for v in values]
        for pt in out:
            why = self.point_error(pt)
            if why:
                raise InputError(f"lesson {self.name} at {self.size_label}={pt.size}, {pt.label}: {why}")
        return out

    def default_point(self) -> Point:
        p = self.param
        return Point(int(p.default) if p.is_size else self.default_size, p.name, p.default)

    def point_error(self, pt: Point) -> Optional[str]:
        """Why a (size, value) pair cannot run (e.g. too much memory), or None."""
        return None

    # --- the GPU-independent core (xp = numpy or cupy) ----------------------------------------
    def inputs(self, xp: Any, rng: Any, pt: Point) -> dict:
        raise NotImplementedError

    def outputs(self, xp: Any, pt: Point) -> dict:
        raise NotImplementedError

    def launch(self, variant: str, ctx: LaunchContext, ins: dict, outs: dict, pt: Point) -> None:
        raise NotImplementedError

    def check(self, variant: str, ins: dict, outs: dict, pt: Point, xp: Any) -> LessonCheck:
        raise NotImplementedError

    def nbytes(self, variant: str, pt: Point) -> Optional[int]:
        """Bytes the variant's own loads and stores ask for (what its achieved bandwidth counts)."""
        return None

    def flops(self, pt: Point) -> Optional[int]:
        return None

    def info(self, variant: str, ctx: LaunchContext, pt: Point) -> dict:
        """Launch geometry and anything else worth recording with the row."""
        return {}


def grid1d(n: int, block: int) -> int:
    return (n + block - 1) // block


def by_name(lessons: Sequence[Lesson]) -> dict[str, Lesson]:
    return {x.name: x for x in lessons}
