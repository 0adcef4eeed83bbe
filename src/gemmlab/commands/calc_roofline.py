"""gemmlab roofline and gemmlab ceilings."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Optional

import typer

from gemmlab.analysis.roofline import (
    Ceilings,
    RooflinePoint,
    impossible,
    ncu_ceilings,
    place,
    point_from_gemm,
    point_from_launch,
    spec_ceilings,
)
from gemmlab.bench import ceilings as store_mod
from gemmlab.commands.calc_parse import parse_gemm
from gemmlab.commands.common import (
    CaptureOpt,
    JsonOpt,
    KernelOpt,
    load_launches,
    renamed,
    table_command,
)
from gemmlab.errors import InputError
from gemmlab.hardware import GPUS, find_gpu
from gemmlab.output import console, err_console, print_json, print_table
from gemmlab.problem import parse_shape

CEILING_SOURCES = ("auto", "measured", "ncu", "spec")
StoreOpt = Annotated[
    Optional[Path], typer.Option("--store", help="Ceilings store (default ~/.local/share/gemmlab/ceilings.json).")
]


def measured_ceilings(m: store_mod.CeilingMeasurement) -> Ceilings:
    return Ceilings(
        m.gpu,
        m.fp32_flops,
        m.copy_bytes_per_s,
        "measured",
        f"measured {m.timestamp}: cuBLAS SGEMM n={m.gemm_n}, {m.copy_bytes / 2**30:g} GiB D2D copy",
    )


def resolve_ceilings(mode: str, gpu: Optional[str], launches: list, store: Optional[Path]) -> Ceilings:
    """Measured ceilings when stored for this GPU, else ncu's peaks from the capture, else the spec
    table (``mode`` forces one source)."""
    if mode not in CEILING_SOURCES:
        raise InputError(f"--ceilings {mode!r}: one of {', '.join(CEILING_SOURCES)}")
    candidates = []
    if mode in ("auto", "measured") and gpu:
        m = store_mod.latest_for(gpu, store)
        candidates.append(measured_ceilings(m) if m else None)
    if mode in ("auto", "ncu") and launches:
        candidates.append(ncu_ceilings(launches[0]))
    if mode in ("auto", "spec") and gpu:
        spec = find_gpu(gpu)
        candidates.append(spec_ceilings(spec) if spec else None)
    for c in candidates:
        if c is not None:
            return c
    what = {"auto": "ceilings", "measured": "measured ceilings", "ncu": "ncu peaks in the capture",
            "spec": "spec numbers"}[mode]
    return _no_ceilings(what, gpu)


def _no_ceilings(what: str, gpu: Optional[str]) -> Ceilings:
    raise InputError(
        f"no {what} for {gpu or 'an unnamed GPU'}: run 'gemmlab ceilings --measure' on it, or pass --gpu with "
        f"one of {', '.join(GPUS)}"
    )


def _capture_gpu(launches: list) -> Optional[str]:
    for k in launches:
        m = k.metrics.get("device__attribute_display_name")
        if m is not None and isinstance(m.value, str):
            return m.value
    return None


def refuse_impossible(points: list[RooflinePoint], ceil: Ceilings, gpu: Optional[str], launches: list, *,
                      gemm: Optional[str], ms: Optional[float], capture: Optional[str]) -> None:
    """One line naming the input, for a point faster than the GPU can be (``roofline.impossible``).

    Against ncu's ceilings each launch is checked under its own peaks: with ``--clock-control none``
    launches run at different clocks, and the shown ceilings are the first launch's."""
    spec = find_gpu(ceil.gpu) or (find_gpu(gpu) if gpu else None)
    l2 = spec.l2_bytes if spec is not None else None
    for i, p in enumerate(points):
        own = ncu_ceilings(launches[i]) if ceil.source == "ncu" and i < len(launches) else None
        why = impossible(p, own or ceil, l2)
        if why is None:
            continue
        if capture is None:
            raise InputError(f"--shape {gemm} --ms {ms:g}: {why}; is the time in milliseconds, and the GPU right?")
        if p.source == "analytic":
            raise InputError(f"--shape {gemm}: kernel {p.name!r} in {capture}: {why}; is {gemm} the kernel's shape?")
        raise InputError(f"--from-capture {capture}: kernel {p.name!r}: {why}; the capture's counters and duration "
                         f"disagree, or these ceilings are not the GPU it ran on (--gpu, --ceilings)")


def roofline_cmd(
    from_capture: CaptureOpt = None,
    kernel: KernelOpt = None,
    gemm: Annotated[Optional[str], typer.Option(
        "--shape", help="GEMM shape M,N,K: the analytic FLOP and bytes, for the captured kernels or the --ms point.")
    ] = None,
    gemm_old: Annotated[Optional[str], typer.Option("--gemm", hidden=True)] = None,
    ms: Annotated[Optional[float], typer.Option("--ms", help="Time of the --shape point in ms (without a capture).")] = None,
    name: Annotated[Optional[str], typer.Option("--name", help="Label of the --shape point.")] = None,
    beta_nonzero: Annotated[bool, typer.Option("--beta-nonzero", help="C is read too (β ≠ 0): 4·M·N more bytes.")] = False,
    gpu: Annotated[Optional[str], typer.Option("--gpu", help="GPU for the ceilings: device name or spec key (h100).")] = None,
    ceilings: Annotated[
        str, typer.Option("--ceilings", help="Ceiling source: auto (measured > ncu > spec), measured, ncu, spec.")
    ] = "auto",
    store: StoreOpt = None,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="Write a log-log chart (.png, .svg, .pdf).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --plot file.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Place kernels on the FP32 roofline: arithmetic intensity vs achieved FLOP/s against the roofs."""
    # Every option is checked before the capture is read: reading a .ncu-rep needs NVIDIA's
    # ncu_report (exit 3), and a bad option must say so first (exit 2).
    if gemm_old is not None:  # the former --gemm took N or MxNxK
        gemm = ",".join(map(str, parse_gemm(renamed(gemm, gemm_old, "--shape", "--gemm"), "--gemm")))
    shape = parse_shape(gemm) if gemm else None
    if ceilings not in CEILING_SOURCES:
        raise InputError(f"--ceilings {ceilings!r}: one of {', '.join(CEILING_SOURCES)}")
    if not from_capture:
        if shape is None or ms is None:
            raise InputError("give --from-capture FILE, or --shape M,N,K with --ms TIME for an analytic point")
        if not (math.isfinite(ms) and ms > 0):
            raise InputError(f"--ms {ms}: the time must be a positive number of milliseconds")
    elif ms is not None:
        raise InputError("--ms is for an analytic point without a capture; a capture brings its own times")
    if plot is not None:
        from gemmlab.report import roofline_plot

        roofline_plot._check_path(plot, force)  # the same check plot_roofline makes, before any work
    launches = load_launches(from_capture, kernel) if from_capture else []
    points = [point_from_launch(k, gemm=shape, beta_nonzero=beta_nonzero) for k in launches]
    if not launches:
        label = name or f"gemm {'x'.join(map(str, shape))}"  # type: ignore[arg-type]
        points.append(point_from_gemm(label, *shape, ms * 1e-3, beta_nonzero=beta_nonzero))  # type: ignore[misc, operator]
    gpu_name = gpu or _capture_gpu(launches)
    ceil = resolve_ceilings(ceilings, gpu_name, launches, store)
    refuse_impossible(points, ceil, gpu_name, launches, gemm=gemm, ms=ms, capture=from_capture)
    placements = [place(p, ceil) for p in points]
    written = None
    if plot is not None:
        from gemmlab.report.roofline_plot import plot_roofline

        written = plot_roofline(placements, ceil, plot, overwrite=force)
    if json_out:
        print_json({"ceilings": ceil.to_dict(), "points": [p.to_dict() for p in placements],
                    "plot": None if written is None else str(written)})
        return
    print_table(
        ["kernel", "counts", "FLOP/byte", "achieved", "roof", "bound", "% of roof", "% of peak"],
        [
            [p.point.name, p.point.source, f"{p.point.intensity:.2f}", f"{p.point.rate / 1e12:.2f}",
             f"{p.attainable / 1e12:.2f}", p.bound, f"{p.pct_of_attainable:.1f}", f"{p.pct_of_peak:.1f}"]
            for p in placements
        ],
        title=f"FP32 roofline on {ceil.gpu} (achieved and roof in TFLOP/s)",
        caption=(
            f"ceilings ({ceil.source}): {ceil.fp32_flops / 1e12:.1f} TFLOP/s, {ceil.dram_bytes_per_s / 1e9:.0f} GB/s, "
            f"ridge {ceil.ridge:.1f} FLOP/byte — {ceil.detail}"
        ),
    )
    if any(p.point.source == "ncu" for p in placements):
        console.print(
            "Intensity counts DRAM bytes only: a kernel whose operands stay in L2 sits far to the right even "
            "when L1/L2 traffic or latency bounds it."
        )
    if written is not None:
        console.print(f"plot: {written}")


def ceilings_cmd(
    measure: Annotated[bool, typer.Option("--measure", help="Measure this GPU now and store the result.")] = False,
    store: StoreOpt = None,
    gemm_n: Annotated[int, typer.Option(
        "--size", help="Square SGEMM M=N=K (reduced to fit free memory).")] = store_mod.DEFAULT_GEMM_N,
    gemm_n_old: Annotated[Optional[int], typer.Option("--n", hidden=True)] = None,
    copy_mib: Annotated[int, typer.Option("--copy-mib", help="Size of the copied buffer, MiB (≥ 1024).")] = 1024,
    runs: Annotated[int, typer.Option("--repeats", help="Timed runs per measurement (median is kept).")] = 10,
    runs_old: Annotated[Optional[int], typer.Option("--runs", hidden=True)] = None,
    device: Annotated[int, typer.Option("--device", help="CUDA device index.")] = 0,
    spec: Annotated[bool, typer.Option("--spec", help="List the spec table used when nothing is measured.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Measured FP32 (cuBLAS) and copy-bandwidth ceilings: show the stored ones, or --measure this GPU."""
    if spec:
        _print_spec(json_out)
        return
    if measure:
        from rich.progress import Progress

        runs = renamed(runs, runs_old, "--repeats", "--runs", unset=10)
        gemm_n = renamed(gemm_n, gemm_n_old, "--size", "--n", unset=store_mod.DEFAULT_GEMM_N)
        _check_measure_options(gemm_n, copy_mib, runs, device)
        store_mod.load_store(store)  # a store that cannot take the result is refused before the GPU works
        backend = store_mod.CupyBackend(device)
        with Progress(console=err_console, transient=True) as bar:
            task = bar.add_task("measuring", total=2 * runs)
            done = {"sgemm": 0, "copy": 0}

            def progress(phase: str, n: int, total: int) -> None:
                done[phase] = n
                bar.update(task, completed=sum(done.values()), description=f"measuring {phase}")

            m = store_mod.measure(backend, gemm_n=gemm_n, copy_bytes=copy_mib * 2**20, runs=runs, progress=progress)
        path = store_mod.save_measurement(m, store)
        if json_out:
            print_json({"stored_in": str(path), "measurement": m.to_dict()})
            return
        _print_measurements([m], f"Measured on {m.gpu}, stored in {path}")
        return
    found = store_mod.stored(store)
    if json_out:
        print_json([m.to_dict() for m in found])
        return
    if not found:
        console.print(
            f"No measured ceilings in {store or store_mod.default_store_path()}; run 'gemmlab ceilings --measure' "
            f"on a GPU ('--spec' lists the spec numbers used meanwhile)."
        )
        return
    _print_measurements(found, f"Measured ceilings in {store or store_mod.default_store_path()}")


def _check_measure_options(gemm_n: int, copy_mib: int, runs: int, device: int) -> None:
    """The --measure options, checked before CuPy and the GPU are looked for (bad input says so first,
    exit 2; no GPU is exit 3)."""
    if gemm_n < store_mod.MIN_GEMM_N:
        raise InputError(f"--size {gemm_n}: the SGEMM size must be ≥ {store_mod.MIN_GEMM_N}; below it cuBLAS does "
                         f"not reach the FP32 peak")
    min_mib = store_mod.DEFAULT_COPY_BYTES // 2**20
    if copy_mib < min_mib:
        raise InputError(f"--copy-mib {copy_mib}: at least {min_mib} MiB, to stream from DRAM rather than L2")
    if runs < 3:
        raise InputError(f"--repeats {runs}: at least 3 timed runs, so that a median means something")
    if device < 0:
        raise InputError(f"--device {device}: a CUDA device index, 0 or more")


def _print_measurements(ms: list, title: str) -> None:
    rows = []
    for m in ms:
        g = store_mod.summarize(m.gemm_seconds)
        c = store_mod.summarize(m.copy_seconds)
        spread = max((g["q3"] - g["q1"]) / g["median"], (c["q3"] - c["q1"]) / c["median"])
        rows.append([m.gpu, f"{m.fp32_flops / 1e12:.2f}", m.gemm_n, f"{m.copy_bytes_per_s / 1e9:.0f}",
                     f"{m.copy_bytes / 2**30:g}", f"{100 * spread:.1f}", m.timestamp])
    print_table(["GPU", "FP32 TFLOP/s", "SGEMM n", "copy GB/s", "copy GiB", "IQR/median %", "measured"], rows,
                title=title, caption="copy GB/s counts bytes read + written; medians of the timed runs")


def _print_spec(json_out: bool) -> None:
    if json_out:
        print_json([{"key": g.key, "name": g.name, "arch": g.arch, "sm_count": g.sm_count,
                     "fp32_flops": g.fp32_flops, "dram_bytes_per_s": g.dram_bytes_per_s, "l2_bytes": g.l2_bytes,
                     "source": g.source} for g in GPUS.values()])
        return
    print_table(
        ["key", "GPU", "arch", "SMs", "boost MHz", "FP32 TFLOP/s", "DRAM GB/s", "L2 MiB"],
        [[g.key, g.name, g.arch, g.sm_count, f"{g.boost_clock_mhz:g}", f"{g.fp32_flops / 1e12:.1f}",
          f"{g.dram_bytes_per_s / 1e9:.0f}", f"{g.l2_bytes / 2**20:g}"] for g in GPUS.values()],
        title="Spec ceilings (datasheets; used when nothing is measured)",
    )


def register(app: typer.Typer) -> None:
    app.command("roofline")(table_command(roofline_cmd))
    app.command("ceilings")(table_command(ceilings_cmd))
