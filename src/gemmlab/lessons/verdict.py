"""Did the textbook optimisation help on this GPU, and does the article's conclusion transfer?

Pure functions on medians and quartiles; no GPU. A comparison is between a lesson's baseline and
its optimised variant at one point of the sweep:

* speed-up = baseline median / optimised median, with its spread: from (baseline Q1 / optimised
  Q3) to (baseline Q3 / optimised Q1), the range the two interquartile ranges allow;
* effect: "helped", "hurt" or "no measurable difference".

The article's own figures (medians only) are judged by the same thresholds, so "transfers" means
the same effect here as there.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping, Optional, Sequence

from gemmlab.lessons.article import ARTICLE, GPUS, speedup as article_speedup

HELPED, HURT, SAME = "helped", "hurt", "no measurable difference"

# A speed-up within 3% of 1 is "no measurable difference" even when the two interquartile ranges
# do not overlap: two kernels timed one after the other see 1-2% of clock and thermal drift between
# them (the harness notes that warm-clock runs of >= 0.1 ms repeat to within about 1%), and the
# article itself calls its 1% change "essentially no difference".
MIN_EFFECT = 0.03


@dataclass(frozen=True)
class Timing:
    """A variant's median and quartiles (seconds); quartiles None when only a median is known."""

    median_s: float
    q1_s: Optional[float] = None
    q3_s: Optional[float] = None
    noisy: bool = False

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "Timing":
        return cls(float(row["median_s"]), row.get("q1_s"), row.get("q3_s"), bool(row.get("noisy")))


def classify(speedup: float, overlap: bool = False) -> str:
    """The effect of a speed-up; ``overlap``: the two interquartile ranges overlap."""
    if overlap or abs(speedup - 1.0) < MIN_EFFECT:
        return SAME
    return HELPED if speedup > 1.0 else HURT


@dataclass(frozen=True)
class Verdict:
    lesson: str
    baseline: str
    optimised: str
    what: str
    point: str  # "fraction=0.1"
    speedup: float
    low: Optional[float]  # the spread of the speed-up (None without quartiles)
    high: Optional[float]
    effect: str
    noisy: bool  # either timing flagged noisy by the harness

    @property
    def text(self) -> str:
        """One phrase: "helped: 2.10x (2.05-2.15x)"."""
        spread = f" ({self.low:.2f}-{self.high:.2f}x)" if self.low is not None else ""
        noisy = ", noisy timing" if self.noisy else ""
        return f"{self.effect}: {self.speedup:.2f}x{spread}{noisy}"

    def to_dict(self) -> dict:
        return {**asdict(self), "text": self.text}


def judge(lesson: str, baseline: str, optimised: str, what: str, point: str, base: Timing, opt: Timing) -> Verdict:
    s = base.median_s / opt.median_s
    low = high = None
    overlap = False
    if None not in (base.q1_s, base.q3_s, opt.q1_s, opt.q3_s):
        low, high = base.q1_s / opt.q3_s, base.q3_s / opt.q1_s
        overlap = base.q1_s <= opt.q3_s and opt.q1_s <= base.q3_s
    return Verdict(lesson, baseline, optimised, what, point, s, low, high, classify(s, overlap), base.noisy or opt.noisy)


def article_effects(lesson: str, baseline: str, optimised: str) -> Optional[tuple[tuple[str, float, str], ...]]:
    """((GPU, speed-up, effect), ...) from the article's table, or None when it measured nothing."""
    s = article_speedup(lesson, baseline, optimised)
    if s is None:
        return None
    return tuple((gpu, v, classify(v)) for gpu, v in zip(GPUS, s))


_PAST = {HELPED: "helped", HURT: "hurt", SAME: "made no measurable difference"}


def transfer_sentence(v: Verdict, gpu: str, sweep: Sequence[Verdict] = ()) -> str:
    """One plain sentence: what happened on ``gpu`` and whether the article's conclusion transfers."""
    here = f"On {gpu}, {v.what} {_PAST[v.effect]} ({v.speedup:.2f}x at {v.point})"
    effects = article_effects(v.lesson, v.baseline, v.optimised)
    if effects:
        same = [f"{g.replace('NVIDIA ', '')} ({s:.2f}x)" for g, s, e in effects if e == v.effect]
        other = [f"{g.replace('NVIDIA ', '')} ({s:.2f}x, {e})" for g, s, e in effects if e != v.effect]
        if same and other:
            tail = f"as on the article's {' and '.join(same)}, unlike its {' and '.join(other)}"
        elif same:
            tail = f"as on both of the article's GPUs ({', '.join(same)}): the conclusion transfers"
        else:
            tail = f"unlike both of the article's GPUs ({', '.join(other)}): the conclusion does not transfer"
    else:
        tail = {HELPED: "the article's claim transfers",
                SAME: "the article's claim is not visible here",
                HURT: "the opposite of the article's claim"}[v.effect]
    sentence = f"{here}: {tail}."
    others = [s for s in sweep if s.point != v.point]
    if others:
        counts = {e: [s.point for s in sweep if s.effect == e] for e in (HELPED, SAME, HURT)}
        parts = [f"{e} at {', '.join(p)}" for e, p in counts.items() if p]
        sentence += f" Across the sweep: {'; '.join(parts)}."
    return sentence


def lesson_verdicts(lesson: Any, rows: Sequence[Mapping[str, Any]]) -> list[Verdict]:
    """Every comparison of ``lesson`` at every point that has both variants, from result rows
    (``kernel`` = variant, ``point`` = {"size", "param", "value"}, median/quartiles)."""
    by = {}
    for r in rows:
        pt = r.get("point") or {}
        by[(r["kernel"], point_label(pt))] = r
    points = []
    for r in rows:
        lbl = point_label(r.get("point") or {})
        if lbl not in points:
            points.append(lbl)
    out = []
    for c in lesson.comparisons:
        for p in points:
            b, o = by.get((c.baseline, p)), by.get((c.optimised, p))
            if b is None or o is None or not b.get("correct", True) or not o.get("correct", True):
                continue  # a wrong kernel's speed does not count
            out.append(judge(lesson.name, c.baseline, c.optimised, c.what, p, Timing.from_row(b), Timing.from_row(o)))
    return out


def point_label(pt: Mapping[str, Any]) -> str:
    """"fraction=0.1 (n=33554432)", or "size=1024" when the sweep is over the size."""
    if not pt:
        return "?"
    label = f"{pt.get('param')}={pt.get('value')}"
    return label if pt.get("param") == "size" else f"{label} (n={pt.get('size')})"


def headline(lesson: Any, verdicts: Sequence[Verdict], gpu: str) -> Optional[dict]:
    """The lesson's first comparison at its default point (else the first measured point), with
    the transfer sentence over the whole sweep."""
    if not lesson.comparisons:
        return None
    c = lesson.comparisons[0]
    mine = [v for v in verdicts if (v.baseline, v.optimised) == (c.baseline, c.optimised)]
    if not mine:
        return None
    d = lesson.default_point()
    want = point_label(d.to_dict())
    v = next((x for x in mine if x.point == want), mine[0])
    return {"verdict": v.to_dict(), "sentence": transfer_sentence(v, gpu, mine),
            "article": [{"gpu": g, "speedup": s, "effect": e} for g, s, e in (article_effects(lesson.name, c.baseline, c.optimised) or ())],
            "claim": ARTICLE[lesson.name].claim}
