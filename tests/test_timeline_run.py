"""Timeline through CUPTI (trace reader, wrapper protocol) and nsys (fake subprocess), and the CLI import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gemmlab.cli import main
from gemmlab.errors import InputError, ToolMissing, UserError
from gemmlab.profile import cupti_timeline, timeline_run

FIX = Path(__file__).parent / "fixtures"


def test_kernels_from_a_torch_profiler_trace():
    ev = cupti_timeline.kernels_from_trace(json.loads((FIX / "cupti" / "torch_profiler_trace.json").read_text()))
    assert [(e.name, e.duration_ns) for e in ev] == [
        ("cupy_copy__float32_float32", pytest.approx(31744.0)),
        ("gemmlab_coalesced", pytest.approx(2506176.0)),
        ("gemmlab_coalesced", pytest.approx(2510400.0)),
        ("gemmlab_coalesced", pytest.approx(2498112.0)),
    ]  # in start order; the memset, driver call, flow and instant events are not kernels


def test_trace_without_events_is_rejected():
    with pytest.raises(InputError, match="no 'traceEvents' list"):
        cupti_timeline.kernels_from_trace({"foo": 1})


@pytest.mark.parametrize("argv, program", [
    (["python3", "run.py", "--n", "2"], ["run.py", "--n", "2"]),
    (["run.py"], ["run.py"]),
    ([sys.executable, "-m", "pkg.mod", "x"], ["-m", "pkg.mod", "x"]),
])
def test_python_program(argv, program):
    assert cupti_timeline.python_program(argv) == program


def test_non_python_program_needs_nsys():
    with pytest.raises(InputError, match=r"runs Python programs only .* install Nsight Systems"):
        cupti_timeline.python_program(["./sgemm", "4096"])


def fake_wrapper(events, exit_code=0, write=True, stderr=""):
    """A subprocess.run stand-in for the CUPTI wrapper: writes the events file it was asked for."""
    calls = []

    def run(argv, **kw):
        calls.append(argv)
        assert argv[1:4] == ["-m", cupti_timeline.WRAPPER_MODULE, "--out"] and argv[5] == "--"
        if write:
            Path(argv[4]).write_text(json.dumps(cupti_timeline.events_to_json(events, exit_code)))
        return subprocess.CompletedProcess(argv, exit_code if write else 1, "", stderr)

    return run, calls


def test_cupti_timeline_summarises_like_kern_sum():
    from gemmlab.profile.timeline import KernelEvent

    ev = [KernelEvent("k1", 100.0, 0.0), KernelEvent("k2", 300.0, 1.0), KernelEvent("k1", 200.0, 2.0)]
    run, calls = fake_wrapper(ev)
    tl = timeline_run.run_timeline(["python3", "run.py", "--n", "2"], via="cupti", runner=run)
    assert calls[0][6:] == ["run.py", "--n", "2"]
    assert tl.via == "cupti"
    assert [(r.name, r.instances, r.total, r.med, r.time_pct) for r in tl.rows] == [
        ("k1", 2, 300.0, 150.0, 50.0), ("k2", 1, 300.0, 300.0, 50.0)]


def test_cupti_program_failure_and_crash():
    run, _ = fake_wrapper([], exit_code=4)
    with pytest.raises(UserError, match="exited with code 4 under the CUPTI wrapper"):
        timeline_run.run_timeline(["run.py"], via="cupti", runner=run)
    run, _ = fake_wrapper([], write=False, stderr="Traceback\nValueError: boom\n")
    with pytest.raises(UserError, match=r"crashed under the CUPTI wrapper: exit code 1; its last stderr lines: "
                                         r"Traceback \| ValueError: boom"):
        timeline_run.run_timeline(["run.py"], via="cupti", runner=run)


def test_nsys_path_reads_kern_sum_and_falls_back_to_the_old_report_name(tmp_path):
    csv_text = (FIX / "nsys" / "gpukernsum_2022.csv").read_text()
    seen = []

    def run(argv, **kw):
        seen.append(argv[1:3])
        if argv[1] == "profile":
            out = next(a for a in argv if a.startswith("--output=")).split("=", 1)[1]
            Path(out + ".nsys-rep").write_bytes(b"rep")
            return subprocess.CompletedProcess(argv, 0, "", "")
        if argv[3] == "cuda_gpu_kern_sum":  # an nsys too old to know the new name
            return subprocess.CompletedProcess(argv, 1, "", "ERROR: Report 'cuda_gpu_kern_sum' could not be found.")
        return subprocess.CompletedProcess(argv, 0, csv_text, "")

    tl = timeline_run.run_timeline(["./app"], via="nsys", runner=run, nsys_exe="/opt/nsys")
    assert tl.via == "nsys" and len(tl.rows) == 3 and tl.rows[0].instances == 10
    assert seen == [["profile", "--trace=cuda"], ["stats", "--report"], ["stats", "--report"]]


def test_auto_falls_back_to_cupti_when_nsys_makes_no_report():
    from gemmlab.profile.timeline import KernelEvent

    wrapper, _ = fake_wrapper([KernelEvent("k", 5.0)])

    def run(argv, **kw):
        if argv[0] == "/opt/nsys":
            return subprocess.CompletedProcess(argv, 0, "", "Generated: /tmp/x.qdstrm\nImporter failed\n")
        return wrapper(argv, **kw)

    tl = timeline_run.run_timeline(["python3", "run.py"], via="auto", runner=run, nsys_exe="/opt/nsys")
    assert tl.via == "cupti" and tl.rows[0].name == "k"
    assert tl.notes == ["nsys made no report (exit code 0): Generated: /tmp/x.qdstrm | Importer failed; "
                        "used CUPTI through torch.profiler instead"]


def test_via_nsys_without_nsys(monkeypatch):
    monkeypatch.setattr(timeline_run, "find_nsys", lambda: None)
    with pytest.raises(ToolMissing, match="nsys .* not found"):
        timeline_run.run_timeline(["./app"], via="nsys")
    with pytest.raises(InputError, match="via 'x': expected one of auto, nsys, cupti"):
        timeline_run.run_timeline(["./app"], via="x")


def test_cli_timeline_import_json(capsys):
    main(["timeline", "--import", str(FIX / "nsys" / "nsys_stats_stdout.txt"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert [r["report"] for r in out["reports"]] == ["osrt_sum", "cuda_api_sum", "cuda_gpu_kern_sum",
                                                     "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"]
    assert out["reports"][2]["rows"][1]["med"] == 7632010.0


def test_cli_timeline_import_table(capsys):
    main(["timeline", "--import", str(FIX / "nsys" / "cuda_gpu_kern_sum.csv")])  # noqa
    out = capsys.readouterr().out
    assert out.lstrip().startswith("cuda_gpu_kern_sum") and "Time" in out and "55.2" in out


def test_cli_timeline_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        main(["timeline"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err == "gemmlab: error: nothing to time: give -- CMD ARGS, --script FILE.py, or --import FILE.csv\n"


def test_wrapper_runs_the_program_as_main_with_its_argv(tmp_path, monkeypatch):
    out = tmp_path / "seen.json"
    script = tmp_path / "prog.py"
    script.write_text("import json, sys\n"
                      f"json.dump({{'argv': sys.argv, 'name': __name__}}, open({str(out)!r}, 'w'))\n"
                      "sys.exit(3)\n")
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert cupti_timeline._run_program([str(script), "--n", "2"]) == 3
    assert json.loads(out.read_text()) == {"argv": [str(script), "--n", "2"], "name": "__main__"}


def test_wrapper_without_pytorch_says_so(tmp_path):
    try:
        import torch  # noqa: F401
        pytest.skip("PyTorch is installed here; the no-torch path cannot be exercised")
    except ImportError:
        pass
    script = tmp_path / "p.py"
    script.write_text("print('hi')\n")
    with pytest.raises(ToolMissing, match="neither nsys nor PyTorch"):
        cupti_timeline.cupti_events([sys.executable, str(script)], timeout_s=120)
