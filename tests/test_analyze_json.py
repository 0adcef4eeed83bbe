"""The documented JSON schema of `gemmlab analyze --json` (schema_version 1)."""

from __future__ import annotations

import json
import math

import pytest
from conftest import NCU_H100
from launch_factory import make_launch

from gemmlab.analysis.diagnose import diagnose, diagnose_all
from gemmlab.analysis.evidence import SCHEMA_VERSION, Evidence, report_dict
from gemmlab.analysis.vocabulary import Category
from gemmlab.output import dumps
from gemmlab.profile.load import load

KERNEL_KEYS = {"id": int, "name": str, "primary": dict, "findings": list, "missing_evidence": list,
               "collect_command": str, "recommendations": list}
EXTRA_KERNEL_KEYS = {"demangled": str, "source": str, "format": str, "is_gemm": bool, "triage": dict,
                     "collect_argv": list, "collect_purpose": str, "collect_note": str}
FINDING_KEYS = {"category": str, "confidence": str, "summary": str, "at_limit": bool, "evidence": list,
                "impact": (int, float), "impact_basis": str, "recommendations": list}
EVIDENCE_KEYS = {"metric": str, "value": (int, float, str, type(None)), "unit": str, "compared_with": str,
                 "why": str, "ncu_name": str, "source": str}


def strict_loads(text: str):
    def no_constants(name):
        raise ValueError(f"non-strict JSON constant {name}")
    return json.loads(text, parse_constant=no_constants)


def check(obj: dict, keys: dict) -> None:
    for k, t in keys.items():
        assert k in obj, f"missing key {k!r} in {sorted(obj)}"
        assert isinstance(obj[k], t), f"{k!r} is {type(obj[k]).__name__}, expected {t}"


def check_finding(f: dict) -> None:
    check(f, FINDING_KEYS)
    assert f["category"] in {c.value for c in Category}
    assert f["confidence"] in ("high", "medium", "low")
    assert 0.0 <= f["impact"] <= 1.0
    for e in f["evidence"]:
        check(e, EVIDENCE_KEYS)
        assert e["source"] in ("counter", "derived", "ncu-rule", "launch")


@pytest.fixture(scope="module")
def doc():
    ds = diagnose_all(load(NCU_H100 / "gemm_ladder_raw.csv"))
    return strict_loads(dumps(report_dict("gemm_ladder_raw.csv", ds)))


def test_top_level(doc):
    assert doc["schema_version"] == SCHEMA_VERSION == 1
    assert doc["source"] == "gemm_ladder_raw.csv"
    assert isinstance(doc["kernels"], list) and len(doc["kernels"]) == 5


def test_kernel_objects(doc):
    for k in doc["kernels"]:
        check(k, KERNEL_KEYS)
        check(k, EXTRA_KERNEL_KEYS)
        check_finding(k["primary"])
        for f in k["findings"]:
            check_finding(f)
        for m in k["missing_evidence"]:
            check(m, {"metric": str, "why": str, "ncu_names": list})
        assert k["collect_command"].startswith("ncu ")
        assert k["collect_argv"][0] == "ncu"


def test_gemm_ladder_in_json(doc):
    by = {k["name"]: k for k in doc["kernels"]}
    assert by["gemm_coalesced"]["ladder"]["rung"] == "smem_tiled"
    assert by["gemm_uncoalesced"]["primary"]["ladder"]["rung"] == "coalesced"


def test_inconclusive_json_lists_candidates_and_missing():
    d = diagnose(make_launch("k", sm_pct=10.0, mem_pct=95.0, l1tex_pct=95.0, l2_pct=5.0, dram_pct=1.0))
    k = strict_loads(dumps(report_dict("x", [d])))["kernels"][0]
    assert k["primary"]["category"] == "inconclusive"
    assert k["primary"]["confidence"] == "low"
    assert k["primary"]["candidates"]
    assert k["missing_evidence"] and all(m["section"] for m in k["missing_evidence"])


def test_nan_and_inf_become_null():
    e = Evidence("x", "x", float("nan"), "", "", "").to_dict()
    assert e["value"] is None
    assert Evidence("x", "x", math.inf, "", "", "").to_dict()["value"] is None
    d = diagnose(make_launch("k", sm_pct=10.0, mem_pct=95.0, l1tex_pct=95.0, l2_pct=5.0, dram_pct=1.0))
    d.primary.evidence.append(Evidence("bad", "bad", float("nan"), "", "", ""))
    strict_loads(dumps(report_dict("x", [d])))  # does not raise
