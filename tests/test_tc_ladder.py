"""The tensor-core ladder's next step is read from the tensor-pipe metrics (HMMA vs GMMA, stalls,
waves), never from the kernel's name."""

from __future__ import annotations

import pytest
from launch_factory import HEALTHY_LAUNCH, QUIET_STALLS, make_launch

from gemmlab.analysis import gemm, tc_ladder
from gemmlab.analysis.context import Context
from gemmlab.analysis.evidence import Confidence, Finding
from gemmlab.analysis.vocabulary import Category as C


def ctx(name="anything", **m):
    return Context(make_launch(name, **{**HEALTHY_LAUNCH, **QUIET_STALLS, **m}))


def finding(cat, at_limit=False, impact=0.3):
    return Finding(cat, "summary", Confidence.HIGH, impact, "test", at_limit=at_limit)


def test_tensor_pipe_share_decides_which_ladder():
    assert not tc_ladder.on_tensor_cores(ctx(pipe_fma_pct=80.0))
    assert not tc_ladder.on_tensor_cores(ctx(pipe_tensor_pct=3.0, pipe_fma_pct=60.0))
    assert not tc_ladder.on_tensor_cores(ctx(pipe_tensor_pct=0.0, pipe_fma_pct=1.0))
    assert tc_ladder.on_tensor_cores(ctx(pipe_tensor_pct=40.0))
    assert tc_ladder.on_tensor_cores(ctx(pipe_tensor_gmma_pct=40.0))
    # the H100 WMMA rung: tensor 7.3%, FMA 24.6% - the tensor pipe still does most of the math
    assert tc_ladder.on_tensor_cores(ctx(pipe_tensor_pct=7.3, pipe_fma_pct=24.6))
    # wgmma kernels: a few % of GMMA instruction rate while the tensor pipe is nearly saturated
    # (H100 persistent_bf16: 2.9% vs 93.7%)
    assert tc_ladder.uses_wgmma(ctx(pipe_tensor_pct=93.7, pipe_tensor_gmma_pct=2.9)) is True
    assert tc_ladder.uses_wgmma(ctx(pipe_tensor_pct=60.0, pipe_tensor_gmma_pct=0.0)) is False
    assert tc_ladder.uses_wgmma(ctx(pipe_tensor_pct=60.0)) is None


@pytest.mark.parametrize("name", ["gemmlab_mma_sync_bf16", "my_kernel", "gemmlab_naive_uncoalesced"])
def test_hmma_kernel_on_hopper_is_pointed_at_wgmma_whatever_its_name(name):
    c = ctx(name, pipe_tensor_pct=55.0, pipe_tensor_gmma_pct=0.0)
    step = gemm.next_rung(c, finding(C.TENSOR_BOUND), [])
    assert step.rung == "wgmma_bf16" and "wgmma" in step.action


def test_hmma_kernel_waiting_on_memory_gets_the_cp_async_ring():
    c = ctx(pipe_tensor_pct=30.0, pipe_tensor_gmma_pct=0.0, stall_long_scoreboard=6.0)
    assert gemm.next_rung(c, finding(C.LATENCY_BOUND), []).rung == "cp_async_bf16"


def test_wgmma_kernel_steps():
    c = ctx(pipe_tensor_pct=60.0, pipe_tensor_gmma_pct=3.0, stall_barrier=4.0, gld_requests=1e6)
    assert gemm.next_rung(c, finding(C.BARRIER_STALLS), []).rung == "ws_bf16"
    tma = ctx(pipe_tensor_pct=79.0, pipe_tensor_gmma_pct=2.5, gld_requests=0.0)  # copies by TMA
    assert gemm.next_rung(tma, finding(C.LATENCY_BOUND), []).rung == "persistent_bf16"
    assert gemm.next_rung(c, finding(C.TAIL_EFFECT), []).rung == "persistent_bf16"
    assert gemm.next_rung(c, finding(C.L2_BOUND), []).rung == "persistent_bf16"
    step = gemm.next_rung(c, finding(C.TENSOR_BOUND, at_limit=True), [])
    assert step.rung == "persistent_bf16" and "FP8" in step.action
    # a finding no tensor-core step addresses falls through to the next one by impact
    step = gemm.next_rung(c, finding(C.WARP_DIVERGENCE), [finding(C.TAIL_EFFECT, impact=0.1)])
    assert step.rung == "persistent_bf16"


def test_an_fp8_kernel_is_not_told_to_try_fp8():
    # H100, gemmlab's fp8 128x160c2pp at 8192x4800x1600 (--set full): tensor_bound at 84.1%, and the
    # tensor path ran 1.3e11 FP8-source ops - the advice was "or FP8 (e4m3) doubles the rate"
    fp8 = ctx(pipe_tensor_pct=84.1, pipe_tensor_gmma_pct=4.2, gld_requests=0.0, tensor_fp8_ops=1.275e11)
    step = gemm.next_rung(fp8, finding(C.TENSOR_BOUND, at_limit=True), [])
    assert step.rung == "persistent_fp8" and "already runs FP8" in step.action
    assert "doubles" not in step.action and "84.1% of peak" in step.action
    assert gemm.next_rung(fp8, finding(C.TAIL_EFFECT), []).rung == "persistent_fp8"
    # a BF16 kernel (no FP8 ops) and an export without the counter keep the FP8 suggestion
    for c in (ctx(pipe_tensor_pct=93.7, pipe_tensor_gmma_pct=2.9, tensor_fp8_ops=0.0),
              ctx(pipe_tensor_pct=93.7, pipe_tensor_gmma_pct=2.9)):
        step = gemm.next_rung(c, finding(C.TENSOR_BOUND, at_limit=True), [])
        assert step.rung == "persistent_bf16" and "FP8 (e4m3) doubles" in step.action


def test_fp32_kernels_keep_the_sgemm_ladder():
    c = ctx(pipe_fma_pct=50.0, pipe_tensor_pct=0.0)
    assert gemm.next_rung(c, finding(C.UNCOALESCED_GLOBAL_LOADS), []).rung == "coalesced"
