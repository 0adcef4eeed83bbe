"""Every lesson's every variant is correct on the GPU, at the default point and at sizes that are
not multiples of the block (skipped with the reason where there is no GPU). Also: the measured
command end to end on a small sweep, and the occupancy variant really is limited to one block/SM."""

from __future__ import annotations

import json
import zlib

import pytest
from conftest import run_cli

from gemmlab.lessons import registry
from gemmlab.lessons.base import Point

pytestmark = pytest.mark.gpu

CASES = [(les.name, v.name, size) for les in registry.LESSONS for v in les.variants
         for size in (les.default_size, *les.odd_sizes)]


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


@pytest.fixture(scope="module")
def contexts():
    from gemmlab.lessons.run import context

    return {les.name: context(les) for les in registry.LESSONS}


def _points(les, size):
    p = les.param
    if p.is_size:
        return [Point(size, p.name, size)]
    values = {p.default, p.sweep[0], p.sweep[-1]}
    return [Point(size, p.name, v) for v in sorted(values) if les.point_error(Point(size, p.name, v)) is None]


@pytest.mark.parametrize("name,variant,size", CASES)
def test_variant_is_correct(cp, contexts, name, variant, size):
    les = registry.get(name)
    rng = cp.random.default_rng(zlib.crc32(f"{name}/{variant}/{size}".encode()))  # fresh, reproducible
    for pt in _points(les, size):
        ins, outs = les.inputs(cp, rng, pt), les.outputs(cp, pt)
        les.launch(variant, contexts[name], ins, outs, pt)
        cp.cuda.get_current_stream().synchronize()
        r = les.check(variant, ins, outs, pt, cp)
        assert r.ok, f"{name}/{variant} at {pt.label}, n={pt.size}: {r.reason}"
        del ins, outs
        cp.get_default_memory_pool().free_all_blocks()


def test_one_block_per_sm_is_what_the_driver_says(contexts):
    les = registry.get("occupancy")
    ctx = contexts["occupancy"]
    pt = Point(1 << 20, "block", 256)
    limited, full = les.info("one_block_per_sm", ctx, pt), les.info("full", ctx, pt)
    assert limited["blocks_per_sm"] == 1
    assert full["warps_per_sm"] > limited["warps_per_sm"]


@pytest.mark.parametrize("name", registry.NAMES)
def test_lesson_command_end_to_end(capsys, tmp_path, name):
    les = registry.get(name)
    small = {"tiling": ["--points", "100,256"], "atomics": ["--size", "100003", "--points", "0,1"],
             "coalescing": ["--size", "100003", "--points", "4,100"], "bank_conflicts": ["--points", "100,512"],
             "occupancy": ["--size", "100003", "--points", "32,256"], "fusion": ["--points", "1000,100003"]}[name]
    db = tmp_path / "runs.sqlite"
    code, out, err = run_cli(capsys, "lesson", name, *small, "--rep-ms", "5", "--warmup-ms", "2", "--db", str(db), "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["lesson"] == name and len(res["rows"]) == 2 * len(les.variants)
    assert all(r["correct"] for r in res["rows"])
    assert res["headline"] and res["headline"]["sentence"].startswith("On ")
    assert res["run_id"] >= 1
