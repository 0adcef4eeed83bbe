"""Did the textbook optimisation help on this GPU, and does the article's conclusion transfer?

Pure functions; no GPU. A comparison is between a lesson's baseline and its optimised variant at one
point of the sweep, judged by ``bench.stats.effect`` - the one judgement every part of gemmlab uses:
faster, slower or the same within noise, with the speed-up (baseline median / optimised median) and
the range the two interquartile ranges allow. The article's own figures (medians only) go through the
same ``effect``, so "transfers" means the same verdict here as there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from gemmlab.bench.results import Row
from gemmlab.bench.stats import FASTER, SAME, SLOWER, Effect, effect
from gemmlab.lessons.article import ARTICLE, GPUS


@dataclass(frozen=True)
class Verdict:
    lesson: str
    baseline: str
    optimised: str
    what: str
    point: str  # "fraction=0.1"
    change: Effect  # from the baseline's measurement to the optimised variant's

    @property
    def effect(self) -> str:
        """FASTER, SLOWER or SAME."""
        return self.change.verdict

    @property
    def speedup(self) -> float:
        return self.change.speedup

    @property
    def text(self) -> str:
        """One phrase: "faster: 2.10x (2.05-2.15x)"."""
        return self.change.text

    def to_dict(self) -> dict:
        c = self.change
        return {"lesson": self.lesson, "baseline": self.baseline, "optimised": self.optimised, "what": self.what,
                "point": self.point, "speedup": c.speedup, "low": c.low, "high": c.high, "effect": c.verdict,
                "noisy": c.noisy, "basis": c.basis, "why": c.why, "text": c.text}


def judge(lesson: str, baseline: str, optimised: str, what: str, point: str, base: Any, opt: Any) -> Verdict:
    """``base`` and ``opt``: the two variants' ``Measurement``s (or median seconds, for published
    figures)."""
    return Verdict(lesson, baseline, optimised, what, point, effect(base, opt))


def article_effects(lesson: str, baseline: str, optimised: str) -> Optional[tuple[tuple[str, float, str], ...]]:
    """((GPU, speed-up, effect), ...) from the article's published medians, or None when it
    measured nothing."""
    a, b = ARTICLE[lesson].ms(baseline), ARTICLE[lesson].ms(optimised)
    if a is None or b is None:
        return None
    out = []
    for gpu, ta, tb in zip(GPUS, a, b):
        e = effect(ta * 1e-3, tb * 1e-3)
        out.append((gpu, e.speedup, e.verdict))
    return tuple(out)


_PAST = {FASTER: "helped", SLOWER: "hurt", SAME: "made no measurable difference"}


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
        tail = {FASTER: "the article's claim transfers",
                SAME: "the article's claim is not visible here",
                SLOWER: "the opposite of the article's claim"}[v.effect]
    sentence = f"{here}: {tail}."
    others = [s for s in sweep if s.point != v.point]
    if others:
        counts = {e: [s.point for s in sweep if s.effect == e] for e in (FASTER, SAME, SLOWER)}
        parts = [f"{_PAST[e]} at {', '.join(p)}" for e, p in counts.items() if p]
        sentence += f" Across the sweep: {'; '.join(parts)}."
    return sentence


def lesson_verdicts(lesson: Any, rows: Sequence[Row]) -> list[Verdict]:
    """Every comparison of ``lesson`` at every point that has both variants (correct ones: a wrong
    kernel's speed does not count), from the run's rows (``extra["point"]``: size, param, value)."""
    by = {}
    points = []
    for r in rows:
        lbl = point_label(r.extra.get("point") or {})
        by[(r.name, lbl)] = r
        if lbl not in points:
            points.append(lbl)
    out = []
    for c in lesson.comparisons:
        for p in points:
            b, o = by.get((c.baseline, p)), by.get((c.optimised, p))
            if b is None or o is None or b.correct is False or o.correct is False:
                continue
            out.append(judge(lesson.name, c.baseline, c.optimised, c.what, p, b.measurement, o.measurement))
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
