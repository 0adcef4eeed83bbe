"""On the GPU: gemmlab profile with the default collection vs --set full, and CUPTI timelines.

Marked gpu (skipped without a GPU) and ncu (skipped here when Nsight Compute is not found).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from gemmlab.errors import ToolMissing
from gemmlab.profile import collect, targets, timeline_run
from gemmlab.profile.runner import find_ncu
from gemmlab.workflows import profile_run

pytestmark = pytest.mark.gpu

SHAPE = (1024, 1024, 1024)
PASS_TARGET = 12  # the target for the default collection on H100 (--set full takes 38 there)


@pytest.fixture(scope="module")
def ncu():
    try:
        return find_ncu(None)
    except ToolMissing as e:
        pytest.skip(f"ncu: {e.message}")


@pytest.mark.ncu
def test_default_collection_is_cheap_and_agrees_with_full(ncu, tmp_path):
    target = targets.rung_target("coalesced", SHAPE)
    default = profile_run.run_profile(target, collect.default_collection(), ncu=ncu,
                                  output=tmp_path / "default.ncu-rep", overwrite=False)
    full = profile_run.run_profile(target, collect.full_collection(), ncu=ncu,
                               output=tmp_path / "full.ncu-rep", overwrite=False)
    assert [k.name for k in default.kernels] == ["gemmlab_coalesced"]  # the launch after the warm-ups, only
    assert default.passes is not None and default.passes <= PASS_TARGET
    assert full.passes > default.passes
    assert len(default.launches) == len(full.launches) == 1
    assert (profile_run.primary_category(default.diagnoses[0]) == profile_run.primary_category(full.diagnoses[0]))


@pytest.mark.ncu
def test_kernel_filter_that_matches_nothing_lists_the_kernels(ncu, tmp_path):
    from gemmlab.errors import UserError

    t = targets.rung_target("coalesced", (256, 256, 256), warmup=1, resolve=lambda *a: "no_such_kernel")
    with pytest.raises(UserError) as e:
        profile_run.run_profile(t, collect.default_collection(["speed_of_light"]), ncu=ncu,
                            output=tmp_path / "x.ncu-rep", overwrite=False)
    assert "no kernel matched -k regex:^no_such_kernel$" in str(e.value)
    assert "gemmlab_coalesced (x2)" in str(e.value)


def test_rung_target_runs_alone():
    p = subprocess.run([sys.executable, "-m", targets.TARGET_MODULE, "--rung", "smem_tiled", "--shape", "300,200,100",
                        "--warmup", "2"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "launched gemmlab_smem_tiled 3 times" in p.stderr


def test_cupti_timeline_sees_cupy_kernels(tmp_path):
    script = tmp_path / "three_launches.py"
    script.write_text(textwrap.dedent("""
        import cupy
        k = cupy.RawKernel(r'extern "C" __global__ void gemmlab_probe(float* x) { x[threadIdx.x] += 1.0f; }',
                           "gemmlab_probe")
        x = cupy.zeros(32, dtype=cupy.float32)
        for _ in range(3):
            k((1,), (32,), (x,))
        cupy.cuda.Device().synchronize()
        assert float(x[0]) == 3.0
    """))
    tl = timeline_run.run_timeline([sys.executable, str(script)], via="cupti", timeout_s=300)
    probe = [r for r in tl.rows if r.name == "gemmlab_probe"]
    assert len(probe) == 1 and probe[0].instances == 3 and probe[0].total > 0
    assert json.loads(json.dumps(tl.to_dict()))["via"] == "cupti"
