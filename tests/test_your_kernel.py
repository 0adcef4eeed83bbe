"""Your own kernel in the loop, on the CPU: the declaration and its errors, the expressions, placement
on the ladder, the isolated child (with fake children: crash, hang, error, progress) and the command's
refusals before any GPU work."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import run_cli

from gemmlab.analysis.placement import Rung, place
from gemmlab.bench.isolate import ChildFailed, ChildTimeout, run_child
from gemmlab.bench.interleave import interleaved
from gemmlab.bench.user import check_shapes
from gemmlab.errors import InputError, UserError
from gemmlab.kernels import expr
from gemmlab.kernels.declared import declare, kernels_in

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "your-kernel"

SEED = """\
// gemmlab: block=16,16
__global__ void gemm_naive(const float* A, const float* B, float* C, int M, int N, int K) {}
"""


def decl_of(text: str, tmp_path: Path, flags: dict | None = None, name: str = "k.cu"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return declare(p, p.read_text(), flags)


# --- the declaration --------------------------------------------------------------------------
def test_seed_signature_is_read_from_the_parameter_names(tmp_path):
    d = decl_of(SEED, tmp_path)
    assert d.args == ("A", "B", "C", "M", "N", "K") and d.dtype == "fp32" and d.name == "k"
    # no tile or grid: one thread per element of C, block.x along N
    assert d.launch(100, 33, 7) == ((3, 7, 1), (16, 16, 1), 0)


def test_sgemm_preset_template_constants_and_expressions(tmp_path):
    d = decl_of("""\
        // gemmlab: args=sgemm kernel=sg<BM,BN,BK> BM=128 BN=64 BK=8
        // gemmlab: block = BM * BN / 64
        // gemmlab: tile=BM,BN smem=(BM + BN) * BK * 4 requires=K % 4 == 0, N % 4 == 0
        template <int BM, int BN, int BK>
        __global__ void __launch_bounds__((BM * BN) / (64)) sg(int M, int N, int K, float alpha, const float *A,
                                                           const float *B, float beta, float *C) {}
        """, tmp_path)
    assert d.kernel == "sg<128,64,8>" and d.has_scalars and d.is_template
    assert d.launch(1000, 1000, 64) == ((16, 8, 1), (128, 1, 1), (128 + 64) * 8 * 4)
    assert d.refusal(1000, 1000, 64) is None
    assert "requires N % 4 == 0" in d.refusal(1000, 1001, 64)
    assert check_shapes(d, (1024, 1024, 1024))[1][1] is not None  # 127x129x67: K % 4 != 0, skipped


def test_flags_override_the_header(tmp_path):
    d = decl_of(SEED, tmp_path, {"block": "32,8", "name": "mine"})
    assert d.block == ("32", "8") and d.name == "mine" and d.where["block"] == "--declare block"


@pytest.mark.parametrize("text, flags, message", [
    ("__global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {}", None, "declare the block shape"),
    ("// gemmlab: block=16,16 colour=red\n" + SEED.split("\n", 1)[1], None, "unknown key 'colour'"),
    ("// gemmlab: block=16,16\n// gemmlab: block=8,8\n" + SEED.split("\n", 1)[1], None, "block is declared twice"),
    ("// gemmlab: block=16,16\n__global__ void k(const float* x, const float* y, float* z, int m, int n, int kk) {}",
     None, "cannot tell which parameter"),
    ("// gemmlab: block=16,16 args=sgemm\n" + SEED.split("\n", 1)[1], None, "8 arguments"),
    ("// gemmlab: block=16,16 args=seed\n__global__ void k(const float* A, float B, float* C, int M, int N, int K) {}",
     None, "not a pointer"),
    ("// gemmlab: block=256 tile=64,64 grid=1,1\n" + SEED.split("\n", 1)[1], None, "both tile"),
    ("// gemmlab: block=256\n" + SEED.split("\n", 1)[1], None, "one-dimensional"),
    ("// gemmlab: block=__import__('os').getpid(),1\n" + SEED.split("\n", 1)[1], None, "only integers"),
    ("// gemmlab: block=16,16\ntemplate <int T> __global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {}",
     None, "is a template"),
    ("// gemmlab: block=16,16\n__global__ void a() {}\n__global__ void b() {}", None, "2 __global__ kernels found (a, b)"),
    (SEED, {"kernel": "nope"}, "no __global__ function 'nope'"),
    (SEED, {"dtype": "fp64"}, "expected one of fp32, bf16, fp16, fp8"),
    (SEED, {"dtype": "bf16"}, "A is declared as fp32"),
    (SEED, {"shape": "1,2"}, "three positive integers"),
])
def test_declaration_errors_name_the_file_and_what_was_expected(tmp_path, text, flags, message):
    with pytest.raises(InputError) as e:
        decl_of(text, tmp_path, flags)
    assert message in e.value.message and "k.cu" in e.value.message


def test_launch_limits_are_checked_at_the_shape(tmp_path):
    d = decl_of(SEED, tmp_path, {"block": "64,32"})
    with pytest.raises(InputError, match="2048 threads; a CUDA block has at most 1024"):
        d.launch(64, 64, 64)
    d = decl_of(SEED, tmp_path, {"block": "1,1"})
    with pytest.raises(InputError, match="exceeds CUDA's limits"):
        d.launch(70000, 1, 1)  # grid.y = 70000 > 65535


def test_types_come_from_the_pointers(tmp_path):
    d = decl_of("""\
        // gemmlab: block=128 tile=64,64
        __global__ void k(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K) {}
        """, tmp_path)
    assert (d.dtype, d.out_dtype) == ("bf16", "fp32")


def test_kernels_in_ignores_comments_and_reads_launch_bounds():
    found = kernels_in("// __global__ void commented(int a) {}\n/* __global__ void c2() */\n"
                       "__global__ void __launch_bounds__(256, 2) real(float* C, int n) {}")
    assert [k.name for k in found] == ["real"] and found[0].params == (("float*", "C"), ("int", "n"))


def test_every_example_declares_and_launches_at_odd_shapes():
    files = sorted(EXAMPLES.glob("0*.cu"))
    assert len(files) == 5
    for p in files:
        d = declare(p, p.read_text())
        assert d.name == "article_gemm"
        grid, block, _ = d.launch(127, 129, 67)
        # the grid covers C at a shape that is a multiple of no tile
        covered = grid[0] * grid[1] * block[0] * block[1] if d.tile is None else None
        if covered is not None:
            assert covered >= 127 * 129


# --- expressions ------------------------------------------------------------------------------
def test_expressions_follow_c_integer_division():
    assert expr.evaluate("7 / 2", {}, "x") == 3 and expr.evaluate("-7 / 2", {}, "x") == -3
    assert expr.evaluate("-7 % 2", {}, "x") == -1  # C: the sign of the dividend
    assert expr.evaluate("cdiv(N, 64) * 2", {"N": 65}, "x") == 4
    assert expr.evaluate("K % 4 == 0 && M > 1", {"K": 8, "M": 2}, "x") == 1
    with pytest.raises(InputError, match="divides by zero"):
        expr.evaluate("M / K", {"M": 1, "K": 0}, "grid")
    with pytest.raises(InputError, match="uses 'Q'"):
        expr.evaluate("Q + 1", {"M": 1}, "grid")
    assert expr.split_top("cdiv(N, 64), cdiv(M, 64)") == ["cdiv(N, 64)", "cdiv(M, 64)"]


# --- placement on the ladder -------------------------------------------------------------------
def test_placement_between_level_and_beyond():
    rungs = [Rung("naive", 2.0), Rung("coalesced", 10.0, "coalesce"), Rung("tiled", 14.0, "tile"),
             Rung("vectorized", 48.0, "float4 loads")]
    p = place(41.0, rungs, "test")
    assert (p.below.name, p.above.name) == ("tiled", "vectorized")
    assert "between tiled (14%) and vectorized (48%)" in p.text and "the next rung, vectorized, changes: float4 loads" in p.text
    assert [r.name for r in place(14.2, rungs, "t").level] == ["tiled"]  # within 3%: level
    assert "above every rung" in place(90.0, rungs, "t").text
    assert "below the first rung" in place(1.0, rungs, "t").text


def test_interleaved_rounds_alternate_the_order():
    order = []
    interleaved(["a", "b"], lambda i, f: order.append(f) or (i,), rounds=4)
    assert order == ["a", "b", "b", "a", "a", "b", "b", "a"]


# --- the isolated child --------------------------------------------------------------------------
def fake_child(tmp_path: Path, body: str) -> tuple:
    """A child program: ``body`` runs with ``job`` (the parsed JOB) and ``result_path`` bound."""
    script = tmp_path / "child.py"
    script.write_text("import json, os, signal, sys, time\njob = json.load(open(sys.argv[1]))\n"
                      "result_path = sys.argv[2]\n" + textwrap.dedent(body))
    return (sys.executable, str(script))


def test_child_result_and_progress_come_back(tmp_path):
    seen = []
    child = fake_child(tmp_path, """\
        print('@@gemmlab-progress ' + json.dumps({"name": "k", "i": 0, "total": 2, "phase": "check"}), file=sys.stderr)
        json.dump({"status": "ok", "echo": job["x"]}, open(result_path, "w"))
        """)
    run = run_child(child, {"x": 41}, what="k.cu", timeout_s=30, on_progress=seen.append)
    assert run.result == {"status": "ok", "echo": 41} and seen[0]["phase"] == "check"


def test_a_crashing_child_is_one_line_naming_the_signal(tmp_path):
    child = fake_child(tmp_path, """\
        print("CUDA error: an illegal memory access was encountered", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
        """)
    with pytest.raises(ChildFailed) as e:
        run_child(child, {}, what="k.cu", timeout_s=30)
    assert "SIGSEGV" in e.value.message and "illegal memory access" in e.value.message and e.value.code == 1
    assert "\n" not in e.value.message


def test_a_hanging_child_is_killed_at_the_time_limit(tmp_path):
    child = fake_child(tmp_path, "time.sleep(60)\n")
    with pytest.raises(ChildTimeout, match=r"no result after 1 s .* --timeout"):
        run_child(child, {}, what="k.cu", timeout_s=1)


def test_a_child_input_error_keeps_its_exit_code(tmp_path):
    child = fake_child(tmp_path, "print('gemmlab: error: k.cu: bad shape', file=sys.stderr); sys.exit(2)\n")
    with pytest.raises(UserError) as e:
        run_child(child, {}, what="k.cu", timeout_s=30)
    assert e.value.code == 2 and e.value.message == "k.cu: bad shape"


def test_bench_user_reports_a_wrong_result_without_timing(tmp_path):
    from gemmlab.workflows.user_run import WrongResult, bench_user, read_input

    src = tmp_path / "k.cu"
    src.write_text(SEED)
    child = fake_child(tmp_path, """\
        json.dump({"status": "wrong", "checked": [], "failed": {"shape": [127, 129, 67], "check": {
            "ok": False, "reason": "3 elements never written", "n_unwritten": 3, "first_unwritten": [126, 0]}}},
            open(result_path, "w"))
        """)
    with pytest.raises(WrongResult) as e:
        bench_user(read_input(str(src)), (256, 256, 256), {}, place_it=False, child=child)
    assert "wrong result at M,N,K=127,129,67" in e.value.message and "not timed" in e.value.message
    assert e.value.code == 1


def test_bench_user_crash_status_is_one_line(tmp_path):
    from gemmlab.workflows.user_run import bench_user, read_input

    src = tmp_path / "k.cu"
    src.write_text(SEED)
    child = fake_child(tmp_path, """\
        json.dump({"status": "crash", "message": "CUDA error: cudaErrorIllegalAddress"}, open(result_path, "w"))
        """)
    with pytest.raises(ChildFailed, match="cudaErrorIllegalAddress .*unaffected"):
        bench_user(read_input(str(src)), (256, 256, 256), {}, place_it=False, child=child)


def test_bench_user_builds_a_versioned_record_placed_on_the_stored_ladder(tmp_path):
    from gemmlab.bench.results import Check, Row, RunRecord
    from gemmlab.bench.spec import BenchSpec
    from gemmlab.bench.stats import Measurement
    from gemmlab.store import Store
    from gemmlab.workflows.user_run import bench_user, read_input

    def row(name, ms, ref=False, summary=""):
        return Row(Measurement(BenchSpec(name, 256, 256, 256), (ms / 1e3,) * 5), Check(True), ref, {"summary": summary})

    env = {"gpu": "Fake GPU"}
    ladder = RunRecord("ladder", (row("naive", 10.0), row("tiled", 2.0, summary="tiles"), row("cublas", 1.0, True)),
                       env, {"shape": {"M": 256, "N": 256, "K": 256}, "dtype": "fp32"})
    db = tmp_path / "runs.sqlite"
    with Store(db) as s:
        s.add_record(ladder)
    user = RunRecord("user", (row("k", 4.0), row("cublas", 1.0, True)), env,
                     {"shape": {"M": 256, "N": 256, "K": 256}, "dtype": "fp32"})
    src = tmp_path / "k.cu"
    src.write_text(SEED)
    child = fake_child(tmp_path, f"""\
        assert job["ladder"] == [], "a stored ladder is reused, not measured again"
        assert job["text"].startswith("// gemmlab")
        json.dump({{"status": "ok", "checked": [], "ladder": None, "record": json.loads({json.dumps(json.dumps(user.to_dict()))})}},
                  open(result_path, "w"))
        """)
    run = bench_user(read_input(str(src)), (256, 256, 256), {}, db=db, gpu="Fake GPU", child=child)
    kernel = run.record.meta["kernel"]
    assert kernel["name"] == "k" and len(kernel["source_sha256"]) == 64 and kernel["source"] == SEED
    place_ = run.record.meta["placement"]
    assert (place_["below"]["name"], place_["above"]["name"]) == ("naive", "tiled")
    assert place_["pct_of_cublas"] == pytest.approx(25.0)


# --- the command refuses bad input before the GPU ------------------------------------------------
def test_bench_missing_file_is_exit_2(tmp_path, capsys):
    code, _, err = run_cli(capsys, "bench", str(tmp_path / "nope.cu"))
    assert code == 2 and "no such file" in err


def test_bench_bad_declaration_is_exit_2_naming_the_line(tmp_path, capsys):
    p = tmp_path / "k.cu"
    p.write_text("// gemmlab: block=16,16 colour=red\n" + SEED.split("\n", 1)[1])
    code, _, err = run_cli(capsys, "bench", str(p))
    assert code == 2 and "unknown key 'colour' (line 1)" in err


def test_bench_declare_flag_format(tmp_path, capsys):
    p = tmp_path / "k.cu"
    p.write_text(SEED)
    code, _, err = run_cli(capsys, "bench", str(p), "--declare", "block")
    assert code == 2 and "--declare 'block': expected KEY=VALUE" in err


def test_bench_shape_refused_by_requires_before_the_gpu(tmp_path, capsys):
    p = tmp_path / "k.cu"
    p.write_text(SEED)
    code, _, err = run_cli(capsys, "bench", str(p), "--declare", "requires=K % 8 == 0", "--shape", "64,64,60")
    assert code == 2 and "requires K % 8 == 0" in err


def test_rung_only_flags_are_refused_for_rungs(capsys):
    code, _, err = run_cli(capsys, "bench", "coalesced", "--watch")
    assert code == 2 and "--watch is for your own kernel" in err


def test_watch_benches_again_after_each_save_and_survives_errors(tmp_path, monkeypatch):
    from gemmlab.commands import yours

    src = tmp_path / "k.cu"
    src.write_text(SEED)
    runs, ticks = [], iter(range(100))

    def fake_once(inp, **kw):
        runs.append(inp.sha256)
        if len(runs) == 2:
            raise UserError("k.cu: wrong result")  # printed, and the watch goes on

    def fake_sleep(_s):
        n = next(ticks)
        if n in (1, 3):  # two saves, each with new text
            src.write_text(SEED + f"// edit {n}\n")
            import os

            os.utime(src, ns=(10**18 + n, 10**18 + n))
        if n == 5:
            raise KeyboardInterrupt

    monkeypatch.setattr(yours, "_once", fake_once)
    monkeypatch.setattr(yours.time, "sleep", fake_sleep)
    with pytest.raises(KeyboardInterrupt):
        yours._watch(str(src), {}, None, None, {"ncu_path": None})
    assert len(runs) == 3 and len(set(runs)) == 3


def test_a_spec_kernel_failing_names_its_keyword_shape():
    from gemmlab.workflows.user_run import wrong_message

    msg = wrong_message("softmax.py", {"shape": {"rows": 127, "cols": 1000},
                                       "check": {"ok": False, "reason": "3 NaN/inf elements where the reference is finite"}})
    assert msg == ("softmax.py: wrong result at rows=127, cols=1000: 3 NaN/inf elements where the reference is "
                   "finite - not timed")


# --- fp16 (a user's .cu kernel with __half pointers) ------------------------------------------------
def _fp16_runs():
    import numpy as np

    def fp32_accumulate(a, b, c, al, be):
        c[...] = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)

    def fp16_accumulate(a, b, c, al, be):  # an __hfma chain: every partial sum rounded to half
        acc = np.zeros(c.shape, np.float16)
        for k in range(a.shape[1]):
            acc = (acc + a[:, k:k + 1] * b[k:k + 1, :]).astype(np.float16)
        c[...] = acc

    def half_written(a, b, c, al, be):
        c[:8] = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)[:8]

    def nan_one(a, b, c, al, be):
        fp32_accumulate(a, b, c, al, be)
        c[3, 4] = np.float16("nan")

    return fp32_accumulate, fp16_accumulate, half_written, nan_one


def test_fp16_check_holds_fp32_accumulation_and_catches_the_rest():
    import numpy as np

    from gemmlab.bench.check import Checker

    ok, fp16_acc, half, nan = _fp16_runs()
    ch = Checker(xp=np, seed=3)
    assert ch.check(ok, 33, 17, 2000, in_dtype="fp16", out_dtype="fp16").ok
    r = ch.check(fp16_acc, 33, 17, 2000, in_dtype="fp16", out_dtype="fp16")
    assert not r.ok and "FP16-input" in r.reason  # half accumulation is not what the bound allows
    assert "poison" in ch.check(half, 33, 17, 100, in_dtype="fp16", out_dtype="fp16").reason
    assert "NaN or inf, first at (3, 4)" in ch.check(nan, 33, 17, 100, in_dtype="fp16", out_dtype="fp16").reason


def test_half_pointers_declare_an_fp16_kernel(tmp_path):
    d = decl_of("""\
        // gemmlab: block=16,16
        __global__ void h(const __half* A, const __half* B, float* C, int M, int N, int K) {}
        """, tmp_path)
    assert (d.dtype, d.out_dtype) == ("fp16", "fp32")


# --- a rung exported as a user file ------------------------------------------------------------
def test_every_exportable_rung_declares_its_own_launch(tmp_path):
    from gemmlab.kernels import registry
    from gemmlab.kernels.export import refusal, user_file

    exported = 0
    for dtype in ("fp32", "bf16", "fp8"):
        for r in registry.ladder(dtype):
            if refusal(r):
                continue
            p = tmp_path / f"{r.name}.cu"
            p.write_text(user_file(r))
            d = declare(p, p.read_text())
            assert (d.dtype, d.out_dtype, d.args) == (r.dtype, r.out_dtype, ("M", "N", "K", "alpha", "A", "B", "beta", "C"))
            for s in ((127, 129, 67), (2048, 2048, 2048), (1000, 3000, 80)):
                assert (d.refusal(*s) is None) == r.accepts(*s), (r.name, s)
                if d.refusal(*s) is None:
                    grid, block, smem = r.launch_config(*s)
                    assert d.launch(*s) == (tuple(grid), tuple(block), smem), (r.name, s)
            exported += 1
    assert exported >= 12


def test_tma_and_abstract_rungs_are_not_exported(capsys):
    code, _, err = run_cli(capsys, "kernels", "--export", "tma_bf16")
    assert code == 2 and "TMA tensor maps" in err
    code, _, err = run_cli(capsys, "kernels", "--export", "autotuned")
    assert code == 2 and "picks its kernel" in err


def test_a_python_gemm_is_placed_after_it_ran(tmp_path):
    """Its dtype is known only from its record: the ladder is then measured by a second child."""
    from gemmlab.bench.results import Check, Row, RunRecord
    from gemmlab.bench.spec import BenchSpec
    from gemmlab.bench.stats import Measurement
    from gemmlab.workflows.user_run import bench_user, read_input

    def row(name, ms, ref=False):
        return Row(Measurement(BenchSpec(name, 64, 64, 64, dtype="bf16"), (ms / 1e3,) * 5), Check(True), ref)

    env = {"gpu": "Fake GPU"}
    meta = {"shape": {"M": 64, "N": 64, "K": 64}, "dtype": "bf16"}
    user = RunRecord("user", (row("mm", 2.0), row("cublas", 1.0, True)), env, meta)
    ladder = RunRecord("ladder", (row("wmma_bf16", 4.0), row("mma_sync_bf16", 1.5), row("cublas", 1.0, True)), env, meta)
    src = tmp_path / "mm.py"
    src.write_text("def mm(a, b):\n    return a @ b\n")
    child = fake_child(tmp_path, f"""\
        rec = {json.dumps(user.to_dict())!r} if job["entry"] == "python" else {json.dumps(ladder.to_dict())!r}
        if job["entry"] == "ladder":
            assert job["shape"] == [64, 64, 64] and "wmma_bf16" in job["ladder"]
        json.dump({{"status": "ok", "record": json.loads(rec), "ladder": None}}, open(result_path, "w"))
        """)
    run = bench_user(read_input(f"{src}:mm"), None, {}, db=tmp_path / "none.sqlite", gpu="Fake GPU", child=child)
    assert run.ladder is not None and run.ladder.kind == "ladder"
    p = run.record.meta["placement"]
    assert (p["below"]["name"], p["above"]["name"]) == ("wmma_bf16", "mma_sync_bf16")


def test_a_stored_user_run_prints_as_a_table_and_as_csv_alone(tmp_path, capsys):
    from gemmlab.bench.results import Check, Row, RunRecord
    from gemmlab.bench.spec import BenchSpec
    from gemmlab.bench.stats import Measurement
    from gemmlab.store import Store

    def row(name, ms, ref=False):
        return Row(Measurement(BenchSpec(name, 64, 64, 64), (ms / 1e3,) * 5), Check(True), ref)

    meta = {"shape": {"M": 64, "N": 64, "K": 64}, "dtype": "fp32", "checked": [{"shape": [64, 64, 64], "ok": True}],
            "kernel": {"name": "k", "function": "k", "file": "/x/k.cu", "source_sha256": "ab" * 32}}
    db = tmp_path / "r.sqlite"
    with Store(db) as s:
        s.add_record(RunRecord("user", (row("k", 2.0), row("cublas", 1.0, True)), {"gpu": "G"}, meta))
    code, out, err = run_cli(capsys, "runs", "1", "--db", str(db))
    assert code == 0 and "k (k), fp32 64x64x64 on G" in out and "checked at: 64x64x64 ok" in out
    code, out, err = run_cli(capsys, "runs", "1", "--db", str(db), "--csv")
    assert code == 0 and "checked at" not in out and "checked at: 64x64x64 ok" in err
    lines = out.splitlines()
    assert lines[0].startswith("Version,Time (ms),") and lines[1].startswith("k,2.0000,") and len(lines) == 3


# --- what a review found: each a test ----------------------------------------------------------
@pytest.mark.parametrize("text", ["K in M", "K is M", "~K", "-" * 3000 + "K", "M" + "*M" * 400])
def test_expressions_refuse_membership_inversion_and_runaway_nesting(text):
    with pytest.raises(InputError):
        expr.evaluate(text, {"M": 2, "K": 3}, "grid")


@pytest.mark.parametrize("sig, message", [
    ("const float* A, const float* B, float* C, long M, int N, int K", "parameter M of k is 'long'"),
    ("const float* A, const float* B, float* C, size_t M, size_t N, size_t K", "gemmlab passes a 32-bit int"),
    ("int M, int N, int K, double alpha, const float* A, const float* B, double beta, float* C", "'double'"),
    ("const T* A, const T* B, T* C, int M, int N, int K", "declare dtype="),
    ("const float* A, const float* B, __half* C, int M, int N, int K", "fp32 inputs with a fp16 output"),
    ("const __half* A, const float* B, __half* C, int M, int N, int K", "B is declared as fp32"),
])
def test_parameters_the_harness_cannot_pass_are_refused(tmp_path, sig, message):
    with pytest.raises(InputError, match=re.escape(message)):
        decl_of(f"// gemmlab: block=16,16\n__global__ void k({sig}) {{}}\n", tmp_path)


def test_default_arguments_and_a_prototype_before_the_definition(tmp_path):
    d = decl_of("""\
        // gemmlab: block=16,16
        __global__ void k(const float* A, const float* B, float* C, int M, int N, int K = 64);
        __global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {}
        """, tmp_path)
    assert d.kernel == "k" and d.args == ("A", "B", "C", "M", "N", "K")


def test_block_z_is_held_to_64(tmp_path):
    with pytest.raises(InputError, match="block.z = 65"):
        decl_of(SEED, tmp_path, {"block": "4,4,65", "tile": "4,4"}).launch(64, 64, 64)


def test_an_edited_local_header_is_part_of_the_compile_key(tmp_path):
    from gemmlab.runtime.user_cuda import local_includes

    (tmp_path / "inc").mkdir()
    (tmp_path / "helpers.cuh").write_text('#include "inc/deep.cuh"\n#define TILE 16\n')
    (tmp_path / "inc" / "deep.cuh").write_text("#define DEEP 1\n")
    found = local_includes('#include "helpers.cuh"\n#include <cuda_fp16.h>\n', tmp_path)
    assert [Path(p).name for p, _ in found] == ["helpers.cuh", "deep.cuh"]
    assert "TILE 16" in found[0][1]


def test_fp16_is_not_placed_on_another_dtypes_ladder():
    from gemmlab.workflows.user_run import LADDER_DTYPES, placement_rungs

    assert "fp16" not in LADDER_DTYPES
    rungs = placement_rungs("bf16", (2048, 2048, 2047))  # K off a 16-byte pitch: TMA rungs refuse it
    assert "tma_bf16" not in rungs and "wgmma_bf16" in rungs


def test_a_spec_kernel_and_its_reference_never_share_a_tensor():
    torch = pytest.importorskip("torch")
    from gemmlab.bench.user_python import clone

    data = (torch.zeros(3), {"out": torch.ones(2)}, 5)
    copy = clone(data)
    copy[0].add_(1)
    copy[1]["out"].zero_()
    assert data[0].sum() == 0 and data[1]["out"].sum() == 2 and copy[2] == 5


def test_alpha_for_a_kernel_without_scalars_is_refused_before_the_gpu(tmp_path, capsys):
    p = tmp_path / "k.cu"
    p.write_text(SEED)
    code, _, err = run_cli(capsys, "bench", str(p), "--alpha", "2")
    assert code == 2 and "--alpha/--beta need a kernel that takes alpha and beta" in err
