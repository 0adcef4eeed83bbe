"""Lesson runs as tables and sentences: one run, two runs (two GPUs) side by side, and the
article's figures beside them. Pure: lesson run records in, rows of strings out; the CLI prints them,
``report.lesson_html`` renders them. Every number is derived from the records' rows; every "did it
help?" is ``bench.stats.effect`` (through ``lessons.verdict``).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from gemmlab.bench.results import Row, RunRecord
from gemmlab.bench.stats import speedup
from gemmlab.errors import InputError
from gemmlab.lessons import record as L
from gemmlab.lessons import registry
from gemmlab.lessons.article import ARTICLE
from gemmlab.lessons.verdict import article_effects, headline, judge, lesson_verdicts, point_label

RUN_COLUMNS = ("Variant", "Time (ms)", "IQR (ms)", "vs baseline", "Rate", "% of ceiling", "Correct")
COMPARE_COLUMNS = ("Variant", "A time (ms)", "A vs baseline", "B time (ms)", "B vs baseline", "B speed vs A")


def _ms(v: Optional[float]) -> str:
    return "–" if v is None else f"{v * 1e3:,.4f}"


def _x(v: Optional[float]) -> str:
    return "–" if v is None else f"{v:.2f}x"


def rate(run: RunRecord, row: Row) -> tuple[str, str]:
    """(rate, % of its ceiling): GFLOP/s vs the FP32 peak, else GB/s vs the copy bandwidth."""
    g = row.gflops
    if g:
        pct = run.pct_of_peak(row)
        return f"{g:,.1f} GFLOP/s", "–" if pct is None else f"{pct:.1f}% of FP32 peak"
    bw = L.bandwidth(row)
    if bw:
        pct = L.pct_of_copy(run, row)
        return f"{bw / 1e9:,.1f} GB/s", "–" if pct is None else f"{pct:.1f}% of copy"
    return "–", "–"


def _vs_baseline(run: RunRecord, row: Row) -> str:
    return "baseline" if row.name == L.baseline_name(run) else _x(L.speedup_vs_baseline(run, row))


def run_tables(run: RunRecord) -> list[tuple[str, list[list[str]]]]:
    """(title, rows) per point of one lesson run, rows in RUN_COLUMNS order."""
    out = []
    for pt in L.points(run):
        rows = []
        for r in run.rows:
            if L.point_of(r) != pt:
                continue
            rt, pct = rate(run, r)
            check = "ok" if r.correct else f"WRONG: {(r.check.reason if r.check else '?') or '?'}"
            rows.append([r.name, _ms(r.median_s), _ms(r.iqr_s), _vs_baseline(run, r), rt, pct,
                         check + (" (noisy)" if r.noisy else "")])
        out.append((f"{run.meta.get('lesson')} at {point_label(pt)}", rows))
    return out


def _lesson(run: RunRecord) -> Any:
    return registry.get(str(run.meta.get("lesson")))


def verdict_rows(run: RunRecord) -> list[list[str]]:
    """Each comparison at each point, judged from the run's rows."""
    return [[f"{v.baseline} -> {v.optimised}", v.point, v.text] for v in lesson_verdicts(_lesson(run), run.rows)]


def article_rows(lesson: str) -> list[list[str]]:
    """The article's table for ``lesson`` as printed (Method, MX330 ms, A4000 ms), or []."""
    return [[r.label, f"{r.ms[0]:.3f} ms", f"{r.ms[1]:.3f} ms"] for r in ARTICLE[lesson].rows]


def sentence(run: RunRecord) -> str:
    lesson = _lesson(run)
    h = headline(lesson, lesson_verdicts(lesson, run.rows), run.gpu) or {}
    return str(h.get("sentence") or "no verdict: the headline comparison was not measured (or a variant failed its check)")


# --- two runs ------------------------------------------------------------------------------------

def compare_runs(a: RunRecord, b: RunRecord) -> dict:
    """The same lesson on two GPUs: per point, each variant's time on both, each comparison's effect
    on both next to the article's, and each run's transfer sentence."""
    if a.meta.get("lesson") != b.meta.get("lesson"):
        raise InputError(f"RUN_A is lesson {a.meta.get('lesson')!r} and RUN_B lesson {b.meta.get('lesson')!r}; compare "
                         "two runs of the same lesson (--lesson NAME picks it in a database)")
    lesson = _lesson(a)
    ga, gb = a.gpu, b.gpu
    if ga == gb:
        ga, gb = f"{ga} [A]", f"{gb} [B]"
    key = lambda r: (r.name, point_label(L.point_of(r)))  # noqa: E731
    rb = {key(r): r for r in b.rows}
    shared = []
    for pt in L.points(a):
        rows = []
        for r in a.rows:
            if L.point_of(r) != pt or key(r) not in rb:
                continue
            o = rb[key(r)]
            rows.append([r.name, _ms(r.median_s), _vs_baseline(a, r), _ms(o.median_s), _vs_baseline(b, o),
                         _x(speedup(r.measurement, o.measurement))])
        if rows:
            shared.append({"point": pt, "title": f"{lesson.name} at {point_label(pt)}", "rows": rows})
    if not shared:
        raise InputError(f"the two {lesson.name} runs share no variant at the same point; run both with the same --size/--points")
    steps = []
    for c in lesson.comparisons:
        art = article_effects(lesson.name, c.baseline, c.optimised)
        for pt in [s["point"] for s in shared]:
            pa = {r.name: r for r in a.rows if L.point_of(r) == pt}
            pb = {r.name: r for r in b.rows if L.point_of(r) == pt}
            if not all(k in p for p in (pa, pb) for k in (c.baseline, c.optimised)):
                continue
            where = point_label(pt)
            va = judge(lesson.name, c.baseline, c.optimised, c.what, where, pa[c.baseline].measurement,
                       pa[c.optimised].measurement)
            vb = judge(lesson.name, c.baseline, c.optimised, c.what, where, pb[c.baseline].measurement,
                       pb[c.optimised].measurement)
            steps.append({"change": f"{c.baseline} -> {c.optimised}", "point": where, "a": va.text, "b": vb.text,
                          "article": "not measured" if art is None else
                          ", ".join(f"{g.replace('NVIDIA ', '')} {s:.2f}x ({e})" for g, s, e in art)})
    return {"lesson": lesson.name, "title": lesson.title, "a": ga, "b": gb, "points": shared, "steps": steps,
            "article": {"rows": article_rows(lesson.name), "claim": ARTICLE[lesson.name].claim},
            "sentences": {ga: sentence(a), gb: sentence(b)}}


STEP_COLUMNS = ("Change", "Point", "A", "B", "Article (MX330, A4000)")


def step_rows(cmp: dict) -> list[list[str]]:
    return [[s["change"], s["point"], s["a"], s["b"], s["article"]] for s in cmp["steps"]]


def latest_by_lesson(runs: Sequence[RunRecord]) -> dict[str, RunRecord]:
    """The newest run of each lesson (runs oldest first), in the article's order."""
    newest: dict[str, RunRecord] = {}
    for r in runs:
        if r.kind == "lesson":
            newest[str(r.meta.get("lesson"))] = r
    return {n: newest[n] for n in registry.NAMES if n in newest}

