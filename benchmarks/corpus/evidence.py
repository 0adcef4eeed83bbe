"""First-principles evidence for each kernel of a corpus capture, independent of the analyzer.

    python benchmarks/corpus/evidence.py RAW_BASE.csv INDEX.json CEILINGS.json [--json OUT]

Reads a ``--set full`` raw page exported with ``--print-units base`` with nothing but the csv module and
raw ncu metric names (no gemmlab code), and prints per kernel the quantities a GPU performance engineer
sets a truth from:

- DRAM bytes moved / time, against the copy bandwidth measured on the same GPU (``gemmlab ceilings
  --measure``): a kernel that moves ≥ ~75-80% of what a plain copy can is DRAM-bound whatever else it does;
- the busiest pipe (tensor HMMA/IMMA/DMMA, FMA, FP64, ALU, XU) in % of its peak, and issue activity;
- L1/TEX, L2 and SM throughput (% of peak) for on-chip limits;
- grid vs SMs and waves (small grid, tail), theoretical and achieved occupancy;
- sectors per request of global loads and stores, shared-memory bank-conflict share, threads active per
  instruction, local-memory share of sectors, atomic requests;
- the top warp-stall reasons (cycles per issued instruction).

The truth file (``tests/fixtures/corpus/truth.json``) is written by hand from this table; the analyzer's
rules never read it.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys

STALLS = ("barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss", "lg_throttle",
          "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction",
          "not_selected", "short_scoreboard", "sleeping", "tex_throttle", "wait")


def rows(path: str) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        r = list(csv.reader(f))
    head = r[0]
    return [dict(zip(head, row)) for row in r[2:] if row]


def num(row: dict[str, str], name: str) -> float | None:
    v = row.get(name, "")
    if v in ("", "n/a"):
        return None
    try:
        return float(v.replace(",", ""))
    except ValueError:
        return None


def ratio(a, b):
    return None if a is None or not b else a / b


def evidence(row: dict[str, str], copy_bps: float) -> dict:
    g = lambda n: num(row, n)  # noqa: E731
    dur_s = (g("gpu__time_duration.sum") or 0) * 1e-9
    dram_bytes = (g("dram__bytes_read.sum") or 0) + (g("dram__bytes_write.sum") or 0)
    pipes = {
        "tensor_hmma": g("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
        "tensor_imma": g("sm__pipe_tensor_op_imma_cycles_active.avg.pct_of_peak_sustained_active"),
        "tensor_dmma": g("sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active"),
        "fma": g("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"),
        "fp64": g("sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active"),
        "alu": g("sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active"),
        "xu": g("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"),
        "lsu": g("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"),
        "shared": g("sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active"),
    }
    top_pipe = max(((k, v) for k, v in pipes.items() if v is not None), key=lambda kv: kv[1], default=(None, None))
    cpi = {s: g(f"smsp__average_warps_issue_stalled_{s}_per_issue_active.ratio") for s in STALLS}
    cpi_total = sum(v for v in cpi.values() if v)
    top_stalls = sorted(((s, v) for s, v in cpi.items() if v), key=lambda kv: -kv[1])[:3]
    sectors_local = (g("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum") or 0) + \
        (g("l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum") or 0)
    sectors_global = (g("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") or 0) + \
        (g("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") or 0)
    sms = g("launch__sm_count") or 0
    grid = g("launch__grid_size") or 0
    return {
        "kernel": row.get("Kernel Name", "")[:120],
        "duration_us": dur_s * 1e6,
        "dram_gbps": dram_bytes / dur_s / 1e9 if dur_s else None,
        "dram_of_copy_ceiling": dram_bytes / dur_s / copy_bps if dur_s else None,
        "dram_pct_ncu": g("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
        "l2_pct": g("lts__throughput.avg.pct_of_peak_sustained_elapsed"),
        "l1_pct": g("l1tex__throughput.avg.pct_of_peak_sustained_active"),
        "sm_pct": g("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        "issue_pct": g("smsp__issue_active.avg.pct_of_peak_sustained_active"),
        "pipes": pipes,
        "top_pipe": top_pipe[0],
        "top_pipe_pct": top_pipe[1],
        "grid": grid,
        "block": g("launch__block_size"),
        "sms": sms,
        "grid_over_sms": grid / sms if sms else None,
        "waves": g("launch__waves_per_multiprocessor"),
        "occ_theoretical": g("sm__maximum_warps_per_active_cycle_pct"),
        "occ_achieved": g("sm__warps_active.avg.pct_of_peak_sustained_active"),
        "ld_sectors_per_req": ratio(g("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
                                    g("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")),
        "st_sectors_per_req": ratio(g("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
                                    g("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")),
        "bank_conflict_share": ratio(g("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"),
                                     g("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")),
        "threads_per_inst": g("smsp__thread_inst_executed_per_inst_executed.ratio"),
        "local_share": ratio(sectors_local, sectors_local + sectors_global) if sectors_local else 0.0,
        "atomic_requests": (g("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum") or 0)
        + (g("l1tex__t_requests_pipe_lsu_mem_global_op_red.sum") or 0),
        "cpi": cpi_total,
        "top_stalls": [(s, round(v / cpi_total, 3)) for s, v in top_stalls] if cpi_total else [],
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("raw_base")
    p.add_argument("index")
    p.add_argument("ceilings")
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    copy_bps = json.load(open(a.ceilings))["measurement"]["copy_bytes_per_s"]
    index = json.load(open(a.index))
    out = []
    for i, row in enumerate(rows(a.raw_base)):
        e = evidence(row, copy_bps)
        e["id"] = i
        e["case"] = index[i]["case"]
        out.append(e)
    f = lambda v, d=0: "-" if v is None else f"{v:.{d}f}"  # noqa: E731
    print(f"{'id':>3} {'case':34} {'kernel':28} {'us':>8} {'dram/cp':>7} {'L2%':>4} {'L1%':>4} {'SM%':>4} "
          f"{'iss%':>4} {'pipe':>11} {'grid/SM':>7} {'occ t/a':>7} {'ld/st spr':>9} {'bank':>4} {'thr':>4} stalls")
    for e in out:
        print(f"{e['id']:>3} {e['case'][:34]:34} {e['kernel'].split('(')[0][-28:]:28} {f(e['duration_us'],1):>8} "
              f"{f(100 * e['dram_of_copy_ceiling'] if e['dram_of_copy_ceiling'] is not None else None):>6}% "
              f"{f(e['l2_pct']):>4} {f(e['l1_pct']):>4} {f(e['sm_pct']):>4} {f(e['issue_pct']):>4} "
              f"{(e['top_pipe'] or '-')[:6]:>6}{f(e['top_pipe_pct']):>4}% {f(e['grid_over_sms'], 1):>7} "
              f"{f(e['occ_theoretical'])}/{f(e['occ_achieved']):<3} {f(e['ld_sectors_per_req'], 1):>4}/"
              f"{f(e['st_sectors_per_req'], 1):<4} {f(100 * (e['bank_conflict_share'] or 0)):>4} "
              f"{f(e['threads_per_inst'], 0):>4} " + ",".join(f"{s}:{v:.2f}" for s, v in e["top_stalls"]))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
