"""Static SASS opcode counts of gemmlab's dispatch kernels (CPU: nvcc -cubin, then cuobjdump -sass).

usage: PYTHONPATH=<tree>/src python sass_mix.py CUOBJDUMP dtype:config [...]

No cuobjdump on the CPU machine? PyPI has it: `pip download --no-deps nvidia-cuda-cuobjdump`, then
unzip the wheel (13.5.37 here) and pass nvidia/cu13/bin/cuobjdump."""
import collections, re, subprocess, sys, tempfile
from pathlib import Path
from gemmlab.runtime import nvcc, dispatch_tc as D
from gemmlab.kernels.source import translation_unit
from gemmlab.kernels.families import compile_arch

cuobjdump = sys.argv[1]
for spec in sys.argv[2:]:
    dtype, config = spec.split(":")
    rung = D.config_rung(dtype, config)
    src = translation_unit([rung])
    arch = compile_arch(rung, "sm_90")
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "u.cu").write_text(src)
        cmd = [nvcc.find_nvcc(), "-cubin", nvcc.arch_flag(arch), *nvcc.BASE_OPTIONS, "-o", f"{d}/u.cubin", f"{d}/u.cu"]
        subprocess.run(cmd, check=True, capture_output=True)
        sass = subprocess.run([cuobjdump, "-sass", f"{d}/u.cubin"], check=True, capture_output=True, text=True).stdout
    ops = collections.Counter()
    for line in sass.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
        if m:
            ops[m.group(1)] += 1
    total = sum(ops.values())
    top = ", ".join(f"{o} {n}" for o, n in ops.most_common(14))
    print(f"{spec}: {total} SASS instructions; R2UR {ops['R2UR']}, QGMMA {ops['QGMMA']}, HGMMA {ops['HGMMA']}; {top}")
