"""Print the SASS around the first run of 4 QGMMA/HGMMA (a whole stage's K-steps) of a dispatch kernel.
usage: PYTHONPATH=<tree>/src python sass_loop.py CUOBJDUMP dtype:config [lines before] (cuobjdump: see sass_mix.py)"""
import re, subprocess, sys, tempfile
from pathlib import Path
from gemmlab.runtime import nvcc, dispatch_tc as D
from gemmlab.kernels.source import translation_unit
from gemmlab.kernels.families import compile_arch
cuobjdump, spec = sys.argv[1], sys.argv[2]
before = int(sys.argv[3]) if len(sys.argv) > 3 else 60
dtype, config = spec.split(":")
rung = D.config_rung(dtype, config)
arch = compile_arch(rung, "sm_90")
with tempfile.TemporaryDirectory() as d:
    (Path(d) / "u.cu").write_text(translation_unit([rung]))
    subprocess.run([nvcc.find_nvcc(), "-cubin", nvcc.arch_flag(arch), *nvcc.BASE_OPTIONS, "-o", f"{d}/u.cubin", f"{d}/u.cu"], check=True, capture_output=True)
    sass = subprocess.run([cuobjdump, "-sass", f"{d}/u.cubin"], check=True, capture_output=True, text=True).stdout
lines = [l for l in sass.splitlines() if re.match(r"\s*/\*[0-9a-f]{4,}\*/", l)]
idx = [i for i, l in enumerate(lines) if "GMMA" in l]
# the first window with 4 GMMAs within 40 lines
for j in range(len(idx) - 3):
    if idx[j + 3] - idx[j] < 60:
        lo, hi = max(0, idx[j] - before), idx[j + 3] + 25
        print("\n".join(re.sub(r"\s+", " ", l.split(";")[0]).strip() for l in lines[lo:hi]))
        break
