"""gemmlab calculators: occupancy, waves, banks (here) and roofline, ceilings (calc_roofline).

Commands only: parse options, call the analysis functions, print a table or JSON.
"""

from __future__ import annotations

from typing import Annotated, Any, List, Optional

import typer
from rich.text import Text

from gemmlab.analysis.banks import bank_conflicts, parse_var
from gemmlab.analysis.occupancy import (
    LIMIT_NAMES,
    OccupancyInput,
    OccupancyResult,
    ncu_disagreements,
    occupancy,
    occupancy_from_launch,
    resolve_arch,
)
from gemmlab.analysis.waves import waves, waves_from_launch
from gemmlab.commands.calc_parse import (
    parse_block3,
    parse_block_threads,
    parse_grid_blocks,
    parse_size,
)
from gemmlab.commands.common import (
    CaptureOpt,
    JsonOpt,
    KernelOpt,
    load_launches,
    table_command,
)
from gemmlab.errors import InputError, ToolMissing
from gemmlab.hardware import ARCHS, find_gpu
from gemmlab.kernels.clusters import CLUSTER_SLOTS_132
from gemmlab.output import console, print_json, print_table

ArchOpt = Annotated[Optional[str], typer.Option("--arch", help="Architecture: sm_90, 9.0 or 90.")]
ThreadsOpt = Annotated[
    Optional[str], typer.Option("--threads", "--block", help="Threads per block: 256, or block dims 16x16.")
]
RegsOpt = Annotated[Optional[int], typer.Option("--regs", help="Registers per thread (ptxas -v, ncu).")]
SmemOpt = Annotated[
    str,
    typer.Option(
        "--smem", help="Shared memory per block, static + dynamic: 8192, 8K, 8KiB, 48KB (K = KB = 1024 bytes)."
    ),
]


# --- shared helpers ------------------------------------------------------------------------------


def rung_inputs(name: str, arch: str) -> tuple[int, int, int]:
    """(threads per block, registers per thread, shared bytes per block) of a ladder rung: threads
    and dynamic shared memory from the registry, registers and static shared memory from ptxas's
    resource report (``gemmlab.runtime.nvcc``; needs nvcc, not a GPU)."""
    from gemmlab.kernels import registry
    from gemmlab.runtime import nvcc

    rung = registry.get(name)
    reports = [r for r in nvcc.resources([rung], [arch]) if r.kernel.endswith(rung.name)]
    if not reports:
        raise ToolMissing(f"--rung {name}: nvcc gave no resource report for {arch}")
    res = reports[0]
    return rung.threads, res.registers, res.smem + rung.dynamic_smem


def _manual_occupancy(
    arch: Optional[str], threads: Optional[str], regs: Optional[int], smem: str, **kw: Any
) -> OccupancyResult:
    missing = [o for o, v in (("--arch", arch), ("--threads", threads), ("--regs", regs)) if v is None]
    if missing:
        raise InputError(
            f"missing {', '.join(missing)}: give --arch, --threads and --regs (or --rung / --from-capture)"
        )
    return occupancy(
        resolve_arch(arch),  # type: ignore[arg-type]
        parse_block_threads(threads, "--threads"),  # type: ignore[arg-type]
        regs,  # type: ignore[arg-type]
        parse_size(smem, "--smem"),
        **kw,
    )


def _kib(n: int) -> str:
    return f"{n / 1024:g} KiB"


def _limit_rows(res: OccupancyResult) -> list[list[Any]]:
    i, a = res.inputs, res.arch
    wpb = i.warps_per_block
    if i.regs_per_thread == 0:
        regs_how = "uses no registers"
    elif res.limits["registers"] == 0:
        regs_how = f"{i.regs_per_warp * wpb} registers per block exceed the {a.regs_per_block} a block may use"
    else:
        per_sp = (a.regs_per_sm // a.sub_partitions) // i.regs_per_warp
        regs_how = (
            f"{i.regs_per_thread}/thread → {i.regs_per_warp} per warp (unit {a.reg_alloc_unit}); "
            f"{per_sp} warps per sub-partition × {a.sub_partitions}"
        )
    smem_how = (
        f"{i.smem_allocated} B/block ({i.smem_per_block} + {i.reserved} reserved, unit {a.smem_alloc_unit} B) "
        f"in a {_kib(res.smem_config)} carve-out ({res.smem_config_source})"
    )
    bars_how = (
        f"{i.barriers} barrier(s)/block of {a.barrier_factor * a.max_blocks_per_sm} per SM"
        if a.barrier_limit_applies
        else "no barrier limit before sm_90"
    )
    hows = {
        "warps": f"{a.max_warps_per_sm} warps/SM ÷ {wpb} warps/block",
        "registers": regs_how,
        "shared_mem": smem_how,
        "blocks": f"{a.max_blocks_per_sm} block slots per SM",
        "barriers": bars_how,
    }
    return [[n + (" ◀" if n in res.limiters else ""), res.limits[n], hows[n]] for n in hows]


def _print_occupancy(res: OccupancyResult) -> None:
    i, a = res.inputs, res.arch
    title = (
        f"Occupancy on {a.name} ({a.family}): {i.threads_per_block} threads, {i.regs_per_thread} registers, "
        f"{i.smem_per_block} B shared memory per block"
    )
    limiter = ", ".join(res.limiters) or "—"
    caption = (
        f"{res.blocks_per_sm} blocks/SM × {i.warps_per_block} warps = {res.active_warps} of {res.max_warps} warps: "
        f"occupancy {100 * res.occupancy:.1f}%, limited by {limiter}"
    )
    print_table(["limit", "blocks/SM", "how"], _limit_rows(res), title=title, caption=caption)
    if res.min_carveout is not None and res.min_carveout < res.smem_config:
        console.print(f"A {_kib(res.min_carveout)} carve-out already holds these {res.blocks_per_sm} blocks.")
    if res.blocks_per_sm == 0:
        console.print(Text.assemble(("This launch cannot run:", "bold red"), " no block fits on an SM."))
    if not res.advice and res.blocks_per_sm > 0:
        console.print("Every warp slot is in use; occupancy cannot go higher.")
    for adv in res.advice:
        console.print(f"• {adv.text}", highlight=False)


# --- commands ------------------------------------------------------------------------------------


def occupancy_cmd(
    arch: ArchOpt = None,
    threads: ThreadsOpt = None,
    regs: RegsOpt = None,
    smem: SmemOpt = "0",
    barriers: Annotated[int, typer.Option("--barriers", help="Block barriers the kernel uses (1 with __syncthreads).")] = 1,
    carveout: Annotated[
        Optional[int], typer.Option("--carveout", help="Preferred shared-memory carve-out, percent (default: largest).")
    ] = None,
    smem_config: Annotated[
        Optional[str], typer.Option("--smem-config", help="Carve-out the launch ran with, e.g. 64K (ncu's config size).")
    ] = None,
    rung: Annotated[Optional[str], typer.Option("--rung", help="A ladder rung: registers and shared memory from nvcc.")] = None,
    from_capture: CaptureOpt = None,
    kernel: KernelOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Blocks per SM under every limit, the occupancy, what limits it and what change lifts it."""
    if from_capture is not None:
        if any(v is not None for v in (arch, threads, regs, rung, smem_config, carveout)) or smem != "0":
            raise InputError(
                "--from-capture takes the launch from the capture; drop --arch/--threads/--regs/--smem/--rung"
                "/--smem-config/--carveout"
            )
        _occupancy_from_capture(from_capture, kernel, json_out)
        return
    kw = dict(
        barriers=barriers,
        carveout_pct=carveout,
        smem_config=None if smem_config is None else parse_size(smem_config, "--smem-config"),
    )
    if rung is not None:
        if arch is None:
            raise InputError("--rung needs --arch (the architecture to compile for), e.g. --arch sm_90")
        if threads is not None or regs is not None or smem != "0":
            raise InputError("--rung takes threads, registers and shared memory from the rung; drop "
                             "--threads/--regs/--smem")
        spec = resolve_arch(arch)
        OccupancyInput(spec, 1, 0, **kw)  # --barriers/--carveout/--smem-config checked before nvcc is looked for
        t, r, s = rung_inputs(rung, spec.name)
        res = occupancy(spec, t, r, s, **kw)  # type: ignore[arg-type]
    else:
        res = _manual_occupancy(arch, threads, regs, smem, **kw)
    if json_out:
        print_json(res.to_dict())
    else:
        _print_occupancy(res)


def _occupancy_from_capture(path: str, kernel: Optional[str], json_out: bool) -> None:
    rows, out = [], []
    for launch in load_launches(path, kernel):
        res = occupancy_from_launch(launch)
        diff = ncu_disagreements(res, launch)
        d = res.to_dict()
        d.update(kernel=launch.name, id=launch.id, ncu_agrees=not diff)
        d["ncu_differs"] = {k: list(v) for k, v in diff.items()}
        out.append(d)
        i = res.inputs
        rows.append(
            [
                launch.name,
                i.threads_per_block,
                i.regs_per_thread,
                i.smem_per_block,
                _kib(res.smem_config),
                " ".join(str(res.limits[n]) for n in LIMIT_NAMES),
                res.blocks_per_sm,
                f"{100 * res.occupancy:.1f}",
                ", ".join(res.limiters),
                "yes" if not diff else "NO: " + ", ".join(f"{k} ncu {v[0]} ours {v[1]}" for k, v in diff.items()),
            ]
        )
    if json_out:
        print_json(out)
        return
    print_table(
        ["kernel", "threads", "regs", "smem B", "carve-out", "limits", "blocks/SM", "occupancy %", "limiter", "= ncu"],
        rows,
        title=f"Occupancy of the launches in {path}",
        caption="limits: blocks/SM by warps, registers, shared memory, block slots, barriers; "
        "'= ncu': every launch__occupancy_limit_* and the theoretical occupancy match Nsight Compute's",
    )
    for d in out:
        for adv in d["advice"]:
            console.print(f"• {d['kernel']}: {adv['text']}", highlight=False)


def waves_cmd(
    grid: Annotated[Optional[str], typer.Option("--grid", help="Blocks in the grid: 16384 or 64x256.")] = None,
    blocks_per_sm: Annotated[Optional[int], typer.Option("--blocks-per-sm", help="Resident blocks per SM.")] = None,
    sms: Annotated[Optional[int], typer.Option("--sms", help="Number of SMs.")] = None,
    gpu: Annotated[Optional[str], typer.Option("--gpu", help="Take the SM count from the spec table (h100, a6000...).")] = None,
    arch: ArchOpt = None,
    threads: ThreadsOpt = None,
    regs: RegsOpt = None,
    smem: SmemOpt = "0",
    cluster: Annotated[Optional[int], typer.Option(
        "--cluster", help="CTAs per thread-block cluster (sm_90 on): a wave holds only the clusters "
        "that fit at once.")] = None,
    clusters_at_once: Annotated[Optional[int], typer.Option(
        "--clusters-at-once", help="Clusters the GPU holds at once (cuOccupancyMaxActiveClusters, "
        "ncu's 'Max Active Clusters'); with --cluster 2, 4 or 8 on 132 SMs the H100's and H200's "
        "counts are known.")] = None,
    from_capture: CaptureOpt = None,
    kernel: KernelOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Waves of a launch (grid ÷ (blocks per SM × SMs); in clusters, ÷ the clusters that fit at once
    × their CTAs when fewer) and what the partial last wave costs."""
    if from_capture is not None:
        if any(v is not None for v in (grid, blocks_per_sm, sms, gpu, arch, threads, regs, cluster,
                                       clusters_at_once)) or smem != "0":
            raise InputError("--from-capture takes grid, SMs and resources from the capture; drop the other options")
        results = [(k.name, waves_from_launch(k)) for k in load_launches(from_capture, kernel)]
    else:
        if grid is None:
            raise InputError("missing --grid (blocks in the grid, e.g. 64x256), or use --from-capture")
        grid_blocks = parse_grid_blocks(grid, "--grid")
        if sms is not None and sms < 1:
            raise InputError(f"--sms {sms}: expected the number of SMs, 1 or more")
        if blocks_per_sm is not None:
            _check_blocks_per_sm(blocks_per_sm, arch, gpu)
        if sms is None:
            spec = find_gpu(gpu) if gpu else None
            if gpu and spec is None:
                raise InputError(f"--gpu {gpu!r}: not in the spec table; pass --sms")
            if spec is None:
                raise InputError("missing --sms (SM count), or --gpu NAME to take it from the spec table")
            sms = spec.sm_count
            if arch is None and blocks_per_sm is None:
                arch = spec.arch
        if blocks_per_sm is None:
            blocks_per_sm = _manual_occupancy(arch, threads, regs, smem).blocks_per_sm
        size, at_once = _clusters(cluster, clusters_at_once, blocks_per_sm, sms)
        results = [("launch", waves(grid_blocks, blocks_per_sm, sms, size, at_once))]
    if json_out:
        print_json([dict(kernel=name, **w.to_dict()) for name, w in results])
        return
    rows = [
        [
            name,
            w.grid_blocks,
            w.blocks_per_sm,
            w.sm_count,
            w.blocks_per_wave,
            f"{w.waves:.2f}",
            w.full_waves,
            w.tail_blocks,
            "–" if w.tail_utilisation is None else f"{100 * w.tail_utilisation:.1f}",
            "–" if w.tail_cost_pct is None else f"{w.tail_cost_pct:.1f}",
        ]
        for name, w in results
    ]
    print_table(
        ["kernel", "grid", "blocks/SM", "SMs", "blocks/wave", "waves", "full", "tail blocks", "tail fill %",
         "tail cost %"],
        rows,
        title="Waves (tail cost: NVIDIA's estimate of the partial wave's share of the runtime)",
    )
    for name, w in results:
        console.print(f"• {name}: {w.summary()}", highlight=False)


def _clusters(cluster: Optional[int], at_once: Optional[int], blocks_per_sm: int,
              sms: int) -> tuple[int, Optional[int]]:
    """(CTAs a cluster, clusters at once) for ``gemmlab waves``: as given, or the driver's count on a
    132-SM H100 / H200 (``kernels.clusters.CLUSTER_SLOTS_132``) where the cluster size is in it."""
    if cluster is None or cluster == 1:
        if at_once is not None:
            raise InputError("--clusters-at-once needs --cluster (CTAs per cluster)")
        return 1, None
    if cluster < 1:
        raise InputError(f"--cluster {cluster}: expected the CTAs per cluster, 1 or more")
    if at_once is not None:
        if at_once < 1:
            raise InputError(f"--clusters-at-once {at_once}: expected 1 or more")
        return cluster, at_once
    row = CLUSTER_SLOTS_132.get(cluster)
    if sms != 132 or row is None or blocks_per_sm > len(row):
        raise InputError(f"--cluster {cluster}: pass --clusters-at-once (cuOccupancyMaxActiveClusters, or "
                         f"ncu's 'Max Active Clusters'); the counts known here are 132 SMs' at clusters of "
                         f"{', '.join(map(str, CLUSTER_SLOTS_132))} and 1-{len(next(iter(CLUSTER_SLOTS_132.values())))} "
                         f"blocks an SM")
    return cluster, row[blocks_per_sm - 1]


def _check_blocks_per_sm(n: int, arch: Optional[str], gpu: Optional[str]) -> None:
    """Resident blocks per SM within the block slots of the architecture (of --arch, of --gpu, else
    the most any architecture has)."""
    spec = find_gpu(gpu) if gpu else None
    if arch is not None:
        a = resolve_arch(arch)
        most, where = a.max_blocks_per_sm, f"on {a.name}"
    elif spec is not None:
        most, where = ARCHS[spec.arch].max_blocks_per_sm, f"on {spec.name} ({spec.arch})"
    else:
        most, where = max(a.max_blocks_per_sm for a in ARCHS.values()), "on any GPU"
    if n < 0 or n > most:
        raise InputError(f"--blocks-per-sm {n}: expected 1..{most}, the resident blocks an SM can hold {where}")


def banks_cmd(
    expression: Annotated[str, typer.Argument(help="Shared-memory index of one warp's access, e.g. 'tid * 32 + k' or 'As[tid][k]'.")],
    elem_bytes: Annotated[int, typer.Option("--bytes", help="Element size in bytes: 1, 2, 4, 8 or 16.")] = 4,
    var: Annotated[Optional[List[str]], typer.Option("--var", help="Another name's value, NAME=INT (repeatable).")] = None,
    row_length: Annotated[Optional[int], typer.Option("--row-length", help="Elements per row for As[row][col].")] = None,
    block: Annotated[str, typer.Option("--block", help="Block shape for threadIdx.x/y/z, e.g. 16x16.")] = "1024",
    warp: Annotated[int, typer.Option("--warp", help="Which warp of the block (tid = 32·warp + lane).")] = 0,
    lanes: Annotated[bool, typer.Option("--lanes", help="Also list every lane's index, address and bank.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """N-way bank conflict of one warp's shared-memory access, and the padded alternative."""
    variables = dict(parse_var(v) for v in (var or []))
    res = bank_conflicts(
        expression, elem_bytes, variables=variables, row_length=row_length, warp=warp, block=parse_block3(block)
    )
    if json_out:
        print_json(res.to_dict())
        return
    rows = [[expression, elem_bytes, f"{res.conflict_way}-way", res.wavefronts, res.ideal_wavefronts,
             " ".join(map(str, res.phase_ways))]]
    if res.padding:
        p = res.padding
        rows.append([p.expression, elem_bytes, f"{p.conflict_way}-way", p.wavefronts, res.ideal_wavefronts, "padded"])
    print_table(
        ["index", "bytes", "conflict", "wavefronts", "ideal", "per phase"],
        rows,
        title="Shared-memory bank conflicts of one warp (32 banks × 4 B)",
        caption="phases: whole warp (≤ 4 B), half-warps (8 B), quarter-warps (16 B)",
    )
    if lanes:
        print_table(
            ["lane", "index", "byte address", "banks"],
            [[a.lane, a.index, a.address, " ".join(map(str, a.banks))] for a in res.accesses],
        )
    console.print(res.padding_note, highlight=False)


def register(app: typer.Typer) -> None:
    """Add the calculator commands to the app."""
    app.command("occupancy")(table_command(occupancy_cmd))
    app.command("waves")(table_command(waves_cmd))
    app.command("banks")(table_command(banks_cmd))
