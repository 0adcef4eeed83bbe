"""Build KernelLaunch records from gemmlab short metric names, for rule tests on synthetic data."""

from __future__ import annotations

from gemmlab.profile.metrics import METRICS
from gemmlab.profile.records import KernelLaunch, Metric, RuleResult


def make_launch(name: str = "kernel", *, rules: list[RuleResult] | None = None, process: str = "app",
                **shorts: float) -> KernelLaunch:
    """A launch whose metrics are the given short names (stored under their preferred ncu name)."""
    k = KernelLaunch(id=0, name=name, demangled=f"{name}(float *)", source="synthetic", format="raw-csv",
                     process=process, rules=list(rules or []))
    for short, value in shorts.items():
        d = METRICS[short]
        k.metrics[d.names[0]] = Metric(float(value), d.unit)
    return k


# A healthy launch geometry on an H100 (132 SMs, 64 warps per SM): full occupancy, many waves.
HEALTHY_LAUNCH = dict(block_size=256, grid_size=132 * 8 * 20, sm_count=132, waves=20.0, registers=32,
                      occ_theoretical=100.0, occ_achieved=95.0, occ_limit_registers=8, occ_limit_shared_mem=32,
                      occ_limit_warps=8, occ_limit_blocks=32, smem_static=0, smem_dynamic=0, smem_driver=1024)

# Every stall reason at zero, with a CPI of 10 cycles; override the ones a test needs.
QUIET_STALLS = {f"stall_{r}": 0.0 for r in (
    "barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss", "lg_throttle",
    "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction",
    "not_selected", "short_scoreboard", "sleeping", "tex_throttle", "wait")}


def uncollected(argv: list[str], missing) -> list[str]:
    """The missing metrics an ncu argv would not collect: neither by name in --metrics, nor through a
    --section that defines them, nor (for a derived SOL percentage) through all of its constituents."""
    from gemmlab.profile.metrics import DERIVED_SOL_NEEDS

    asked = set(argv[argv.index("--metrics") + 1].split(",")) if "--metrics" in argv else set()
    sections = {argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--section"}

    def by_name(short: str) -> bool:  # by name, or (the SourceCounters samples) by the section that defines it
        return bool(set(METRICS[short].names) & asked) or METRICS[short].section in sections

    return [m.metric for m in missing
            if not (m.section in sections or set(m.ncu_names) & asked
                    or (m.metric in DERIVED_SOL_NEEDS and all(by_name(n) for n in DERIVED_SOL_NEEDS[m.metric])))]


class RecordingMetrics(dict):
    """A launch's metrics dict that records every name the analyzer asks for (``touched``, class-wide:
    reset it before a run), to prove a lean load keeps every metric the rules read."""

    touched: set = set()

    def get(self, key, default=None):
        RecordingMetrics.touched.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        RecordingMetrics.touched.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        RecordingMetrics.touched.add(key)
        return super().__contains__(key)
