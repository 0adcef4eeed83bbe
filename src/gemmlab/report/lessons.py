"""Lesson runs as tables and sentences: one run, two runs (two GPUs) side by side, and the
article's figures beside them. Pure: result dicts (``gemmlab lesson --json`` / a stored run) in,
rows of strings out; the CLI prints them, ``report.lesson_html`` renders them.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from gemmlab.errors import InputError
from gemmlab.lessons import registry
from gemmlab.lessons.article import ARTICLE, GPUS, speedup as article_speedup
from gemmlab.lessons.verdict import Timing, classify, judge, point_label

RUN_COLUMNS = ("Variant", "Time (ms)", "IQR (ms)", "vs baseline", "Rate", "% of ceiling", "Correct")
COMPARE_COLUMNS = ("Variant", "A time (ms)", "A vs baseline", "B time (ms)", "B vs baseline", "B speed vs A")


def is_lesson_run(d: Any) -> bool:
    return isinstance(d, Mapping) and d.get("command") == "lesson" and isinstance(d.get("rows"), list)


def _ms(v: Optional[float]) -> str:
    return "–" if v is None else f"{v * 1e3:,.4f}"


def _x(v: Optional[float]) -> str:
    return "–" if v is None else f"{v:.2f}x"


def rate(row: Mapping[str, Any]) -> tuple[str, str]:
    """(rate, % of its ceiling): GFLOP/s vs the FP32 peak, else GB/s vs the copy bandwidth."""
    if row.get("gflops"):
        pct = row.get("pct_of_peak")
        return f"{row['gflops']:,.1f} GFLOP/s", "–" if pct is None else f"{pct:.1f}% of FP32 peak"
    bw = row.get("bandwidth_bytes_per_s")
    if bw:
        pct = row.get("pct_of_copy")
        return f"{bw / 1e9:,.1f} GB/s", "–" if pct is None else f"{pct:.1f}% of copy"
    return "–", "–"


def points(run: Mapping[str, Any]) -> list[dict]:
    out: list[dict] = []
    for r in run["rows"]:
        if r.get("point") not in out:
            out.append(r.get("point"))
    return out


def run_tables(run: Mapping[str, Any]) -> list[tuple[str, list[list[str]]]]:
    """(title, rows) per point of one lesson run, rows in RUN_COLUMNS order."""
    out = []
    for pt in points(run):
        rows = []
        for r in run["rows"]:
            if r.get("point") != pt:
                continue
            rt, pct = rate(r)
            check = "ok" if r.get("correct") else f"WRONG: {(r.get('check') or {}).get('reason', '?')}"
            iqr = None if r.get("q1_s") is None else r["q3_s"] - r["q1_s"]
            rows.append([r["kernel"], _ms(r["median_s"]), _ms(iqr),
                         "baseline" if r.get("is_baseline") else _x(r.get("speedup_vs_baseline")), rt, pct,
                         check + (" (noisy)" if r.get("noisy") else "")])
        out.append((f"{run.get('lesson')} at {point_label(pt)}", rows))
    return out


def verdict_rows(run: Mapping[str, Any]) -> list[list[str]]:
    return [[f"{v['baseline']} -> {v['optimised']}", v["point"], v["text"]] for v in run.get("verdicts") or []]


def article_rows(lesson: str) -> list[list[str]]:
    """The article's table for ``lesson`` as printed (Method, MX330 ms, A4000 ms), or []."""
    return [[r.label, f"{r.ms[0]:.3f} ms", f"{r.ms[1]:.3f} ms"] for r in ARTICLE[lesson].rows]


def sentence(run: Mapping[str, Any]) -> str:
    h = run.get("headline") or {}
    return str(h.get("sentence") or "no verdict: the headline comparison was not measured (or a variant failed its check)")


# --- two runs ------------------------------------------------------------------------------------

def _timing(r: Mapping[str, Any]) -> Timing:
    return Timing.from_row(r)


def compare_runs(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict:
    """The same lesson on two GPUs: per point, each variant's time on both, each comparison's effect
    on both next to the article's, and each run's transfer sentence."""
    if a.get("lesson") != b.get("lesson"):
        raise InputError(f"RUN_A is lesson {a.get('lesson')!r} and RUN_B lesson {b.get('lesson')!r}; compare two runs "
                         "of the same lesson (--lesson NAME picks it in a database)")
    lesson = registry.get(str(a["lesson"]))
    ga, gb = str(a.get("gpu") or "A"), str(b.get("gpu") or "B")
    if ga == gb:
        ga, gb = f"{ga} [A]", f"{gb} [B]"
    key = lambda r: (r["kernel"], str(r.get("point")))  # noqa: E731
    rb = {key(r): r for r in b["rows"]}
    shared = []
    for pt in points(a):
        rows = []
        for r in a["rows"]:
            if r.get("point") != pt or key(r) not in rb:
                continue
            o = rb[key(r)]
            rows.append([r["kernel"], _ms(r["median_s"]), "baseline" if r.get("is_baseline") else _x(r.get("speedup_vs_baseline")),
                         _ms(o["median_s"]), "baseline" if o.get("is_baseline") else _x(o.get("speedup_vs_baseline")),
                         _x(r["median_s"] / o["median_s"])])
        if rows:
            shared.append({"point": pt, "title": f"{lesson.name} at {point_label(pt)}", "rows": rows})
    if not shared:
        raise InputError(f"the two {lesson.name} runs share no variant at the same point; run both with the same --size/--sweep")
    steps = []
    for c in lesson.comparisons:
        art = article_speedup(lesson.name, c.baseline, c.optimised)
        for pt in [s["point"] for s in shared]:
            pa = {r["kernel"]: r for r in a["rows"] if r.get("point") == pt}
            pb = {r["kernel"]: r for r in b["rows"] if r.get("point") == pt}
            if not all(k in p for p in (pa, pb) for k in (c.baseline, c.optimised)):
                continue
            va = judge(lesson.name, c.baseline, c.optimised, c.what, point_label(pt), _timing(pa[c.baseline]), _timing(pa[c.optimised]))
            vb = judge(lesson.name, c.baseline, c.optimised, c.what, point_label(pt), _timing(pb[c.baseline]), _timing(pb[c.optimised]))
            steps.append({"change": f"{c.baseline} -> {c.optimised}", "point": point_label(pt), "a": va.text, "b": vb.text,
                          "article": "not measured" if art is None else
                          ", ".join(f"{g.replace('NVIDIA ', '')} {s:.2f}x ({classify(s)})" for g, s in zip(GPUS, art))})
    return {"lesson": lesson.name, "title": lesson.title, "a": ga, "b": gb, "points": shared, "steps": steps,
            "article": {"rows": article_rows(lesson.name), "claim": ARTICLE[lesson.name].claim},
            "sentences": {ga: sentence(a), gb: sentence(b)}}


STEP_COLUMNS = ("Change", "Point", "A", "B", "Article (MX330, A4000)")


def step_rows(cmp: Mapping[str, Any]) -> list[list[str]]:
    return [[s["change"], s["point"], s["a"], s["b"], s["article"]] for s in cmp["steps"]]


def latest_by_lesson(runs: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The newest run of each lesson (runs in store order, oldest first), in the article's order."""
    newest: dict[str, Mapping[str, Any]] = {}
    for r in runs:
        if is_lesson_run(r):
            newest[str(r["lesson"])] = r
    return {n: newest[n] for n in registry.NAMES if n in newest}
