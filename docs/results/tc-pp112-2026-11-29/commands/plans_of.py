"""Each draw_held_out*.py's helper: the H200 fp8 plans (132 SMs, 4800 GB/s) a source tree's
choose_config gives a list of shapes, in a subprocess with that tree on PYTHONPATH."""
import json
import subprocess
import sys

CODE = """
import json, sys
import gemmlab.runtime.dispatch_tc as D
out = {}
for m, n, k in json.load(sys.stdin):
    out[f"{m}x{n}x{k}"] = D.choose_config("fp8", m, n, k, 132, 4800.0)
print(json.dumps(out))
"""


def plans(src: str, shapes: list) -> dict:
    r = subprocess.run([sys.executable, "-c", CODE], input=json.dumps(shapes), text=True,
                       capture_output=True, check=True, env={"PYTHONPATH": src})
    return json.loads(r.stdout)
