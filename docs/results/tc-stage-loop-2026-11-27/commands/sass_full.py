import re, subprocess, sys, tempfile
from pathlib import Path
from gemmlab.runtime import nvcc, dispatch_tc as D
from gemmlab.kernels.source import translation_unit
from gemmlab.kernels.families import compile_arch
cuobjdump, spec, out = sys.argv[1], sys.argv[2], sys.argv[3]
dtype, config = spec.split(":")
rung = D.config_rung(dtype, config)
arch = compile_arch(rung, "sm_90")
with tempfile.TemporaryDirectory() as d:
    (Path(d) / "u.cu").write_text(translation_unit([rung]))
    r = subprocess.run([nvcc.find_nvcc(), "-cubin", nvcc.arch_flag(arch), *nvcc.BASE_OPTIONS, "-Xptxas", "-v", "-o", f"{d}/u.cubin", f"{d}/u.cu"], check=True, capture_output=True, text=True)
    print([l for l in r.stderr.splitlines() if "registers" in l or "spill" in l][:3])
    sass = subprocess.run([cuobjdump, "-sass", f"{d}/u.cubin"], check=True, capture_output=True, text=True).stdout
lines = [re.sub(r"\s+", " ", l.split(";")[0]).strip() for l in sass.splitlines() if re.match(r"\s*/\*[0-9a-f]{4,}\*/", l)]
Path(out).write_text("\n".join(lines))
print(len(lines))
