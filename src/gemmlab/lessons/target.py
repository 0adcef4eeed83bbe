"""The program ``gemmlab lesson NAME --profile`` runs under ncu for one variant.

    python -m gemmlab.lessons.target --lesson atomics --variant block_reduce --size 33554432 --value 0.1

Fresh inputs, poisoned outputs; the variant is launched ``--warmup`` times, then once more inside
the NVTX range ``gemmlab`` (what ncu profiles: ``--nvtx-include gemmlab/``, one launch per kernel
the variant runs), then checked. Errors: one line on stderr, exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional

from gemmlab.errors import UserError
from gemmlab.profile.targets import NVTX_RANGE


def run(lesson_name: str, variant: str, size: int, value: str, warmup: int) -> None:
    from gemmlab.lessons import registry
    from gemmlab.lessons.base import Point
    from gemmlab.lessons.run import context
    from gemmlab.profile.target import nvtx_range
    from gemmlab.runtime.device import require_gpu

    cp = require_gpu()
    lesson = registry.get(lesson_name)
    lesson.variant(variant)
    pt = Point(size, lesson.param.name, lesson.param.validate(value, "--value"))
    ctx = context(lesson)
    ins, outs = lesson.inputs(cp, cp.random.default_rng(), pt), lesson.outputs(cp, pt)
    for _ in range(warmup):
        lesson.launch(variant, ctx, ins, outs, pt)
    cp.cuda.Device().synchronize()
    outs = lesson.outputs(cp, pt)  # fresh poisoned outputs (the counter restarts at zero)
    with nvtx_range(NVTX_RANGE):
        lesson.launch(variant, ctx, ins, outs, pt)
        cp.cuda.Device().synchronize()
    chk = lesson.check(variant, ins, outs, pt, cp)
    if not chk.ok:
        raise UserError(f"lesson {lesson_name} variant {variant} at {pt.label}: {chk.reason}")


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gemmlab.lessons.target", description=__doc__.splitlines()[0])
    p.add_argument("--lesson", required=True)
    p.add_argument("--variant", required=True)
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--value", required=True)
    p.add_argument("--warmup", type=int, default=3)
    a = p.parse_args(argv)
    try:
        run(a.lesson, a.variant, a.size, a.value, a.warmup)
    except UserError as e:
        print(f"gemmlab.lessons.target: error: {e.message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
