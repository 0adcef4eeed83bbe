"""The register-blocked SGEMM probe's variants (kernels/sgemm_rb.cu) compile with nvcc for sm_90 at
-O3 without spills or a stack frame, within their resident-block register caps (CPU only; skipped
without nvcc). ``python tests/test_sgemm_rb_nvcc.py`` prints ptxas's lines per variant."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from conftest import requires_nvcc
from gemmlab.kernels import sgemm_rb
from gemmlab.runtime import nvcc, toolchain

ARCH = "sm_90"


def ptxas_report(arch: str = ARCH) -> str:
    with tempfile.TemporaryDirectory(prefix="gemmlab-rb-") as d:
        src = Path(d) / "sgemm_rb.cu"
        src.write_text(sgemm_rb.translation_unit(sgemm_rb.VARIANTS), encoding="utf-8")
        cmd = [toolchain.find_nvcc(), "-cubin", f"-arch={arch}", "-O3", "-std=c++17", "-lineinfo",
               "-Xptxas", "-v", "-o", str(Path(d) / "unit.cubin"), str(src)]
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert res.returncode == 0, res.stderr[-4000:]
        return res.stderr + res.stdout


@requires_nvcc
def test_variants_compile_without_spills_within_their_caps():
    report = {r.kernel: r for r in nvcc.parse_ptxas_report(ptxas_report())}
    for v in sgemm_rb.VARIANTS:
        r = report[v.kernel]
        assert (r.spill_stores, r.spill_loads, r.stack_frame) == (0, 0, 0), v.name
        assert v.MINB * v.NT * r.registers <= 65536, (v.name, r.registers)
        assert r.smem == 0  # shared memory is all dynamic


if __name__ == "__main__":
    sys.exit(print(ptxas_report()))
