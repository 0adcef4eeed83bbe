"""A kernel's short name from its demangled signature, in every format (``records.bare_name``).

Kernels in anonymous namespaces (PyTorch's softmax, optimizers, layer norm: ``native::<unnamed>::``)
used to come out with an empty name: the first ``<`` of ``<unnamed>`` was taken for the start of
the template arguments.
"""

from __future__ import annotations

import re

import pytest

from conftest import FIXTURES
from gemmlab.profile import ncu_rep
from gemmlab.profile.load import load
from gemmlab.profile.records import bare_name

CORPUS = FIXTURES / "corpus" / "h100"

TRICKY = [
    # anonymous namespaces, as ncu/cu++filt, Itanium c++filt and MSVC print them
    ("void at::native::<unnamed>::cunn_SoftMaxForward<4, float, float, float, "
     "at::native::<unnamed>::SoftMaxForwardEpilogue>(T4 *, const T2 *, int)", "cunn_SoftMaxForward"),
    ("native::<unnamed>::fill_reverse_indices_kernel(long *, int, cuda::IntDivider<unsigned int>)",
     "fill_reverse_indices_kernel"),
    ("void (anonymous namespace)::foo_kernel<int>(int)", "foo_kernel"),
    ("void {anonymous}::bar(float *)", "bar"),
    ("void `anonymous namespace'::baz(float *)", "baz"),
    ("void <unnamed>::only_anonymous()", "only_anonymous"),
    # PyTorch's optimizer kernels: anonymous namespaces inside the template arguments too
    ("void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>::TensorListMetadata<4>, "
     "at::native::<unnamed>::FusedAdamMathFunctor<float, 4, 0, 0>, const float *, double>(T1, T2, T3...)",
     "multi_tensor_apply_kernel"),
    # nested templates, lambdas with spaces and parentheses, operator() inside the arguments
    ("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::BinaryFunctor<float, "
     "float, float, at::native::binary_internal::MulFunctor<float>>>(at::TensorIteratorBase &, const T1 &)"
     "::[lambda(int) (instance 1)]>(int, T3)", "elementwise_kernel"),
    ("void native::reduce_kernel<512, 1, native::ReduceOp<float, native::func_wrapper_t<float, "
     "native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::[lambda(float, float) "
     "(instance 1)]>, unsigned int, float, 4, 4>>(T3)", "reduce_kernel"),
    # a template as the return type; casts and negative numbers in the arguments
    ("std::enable_if<!T7, void>::type internal::kernel<int, int, float>(T1)", "kernel"),
    ("void native::radixSortKVInPlace<2, (int)-1, 32, 4, float, long, unsigned int>(cuda::TensorInfo<T5, T7>, T7)",
     "radixSortKVInPlace"),
    # function pointers and function types in template arguments; a comparison in them
    ("void apply<void (*)(float *, int), 3>(float *)", "apply"),
    ("void kern<std::function<void (int)>>(int)", "kern"),
    ("void kern<&foo>(int)", "kern"),
    ("void foo<(N < 3)>(int)", "foo"),
    ("void bar<(N > 3)>(int)", "bar"),
    # a member operator keeps its class
    ("void ns::Functor<float>::operator()<int>(int) const", "Functor::operator()"),
    ("void ns::Functor::operator ()(int)", "Functor::operator()"),
    ("void ns::Cmp::operator<(int)", "Cmp::operator<"),
    # plain names, C linkage, parameters with templates, a name cut short inside its arguments
    ("gemm_tiled16", "gemm_tiled16"),
    ("gemm_tiled16(const float *, const float *, float *, int, int, int)", "gemm_tiled16"),
    ("void ns::gemm<128>(const float *, int)", "gemm"),
    ("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, arch::Sm80, 1>::Params)",
     "fmha_cutlassF_f32_aligned_64x64_rf_sm80"),
    ("void cutlass::Kernel2<cutlass_80_wmma_tensorop_i161616gemm_s8_128x128_32x2_nn_align4>(T1::Params)", "Kernel2"),
    ("void native::elementwise_kernel<128, 2, void native::gpu_kernel_impl_nocast<native::direct_copy_kernel_cuda("
     "at::TensorIteratorBase &)::[la", "elementwise_kernel"),
    ("_Z10add_kernelPfS_", "_Z10add_kernelPfS_"),
    ("  spaced_kernel  ", "spaced_kernel"),
    ("", ""),
]


@pytest.mark.parametrize("demangled,expected", TRICKY)
def test_bare_name(demangled, expected):
    assert bare_name(demangled) == expected


_SENSIBLE = re.compile(r"^[A-Za-z_]\w*(::operator\S+)?$")


@pytest.fixture(scope="module")
def corpus_raw():
    return load(CORPUS / "corpus_targeted_raw.csv")


def test_every_launch_of_the_pytorch_corpus_has_a_sensible_name(corpus_raw):
    assert len(corpus_raw) == 125
    for k in corpus_raw:
        assert _SENSIBLE.match(k.name), (k.id, k.name, k.demangled)
        assert k.name in k.demangled
        # the name is the function's own: what follows it is its template arguments or parameters
        assert re.search(rf"(^|[\s:]){re.escape(k.name)}(<|\(|$)", k.demangled), (k.name, k.demangled)
    names = {k.name for k in corpus_raw}
    assert {"cunn_SoftMaxForwardReg", "multi_tensor_apply_kernel", "vectorized_layer_norm_kernel",
            "CatArrayBatchedCopy_vectorized", "fill_reverse_indices_kernel", "conv_depthwise2d_forward_kernel",
            "elementwise_kernel", "vectorized_elementwise_kernel", "reduce_kernel", "kernel", "Kernel2",
            "flash_fwd_kernel", "gemmlab_warptiling", "planted_bank_conflicts"} <= names


def test_details_page_of_the_corpus_names_launches_the_same(corpus_raw):
    details = load(CORPUS / "corpus_targeted_details.csv")
    assert [(k.id, k.name) for k in details] == [(k.id, k.name) for k in corpus_raw]


def test_analyze_json_has_no_empty_name(capsys):
    import json

    from conftest import run_cli

    code, out, _ = run_cli(capsys, "analyze", str(CORPUS / "corpus_targeted_raw.csv"), "--json")
    assert code == 0
    kernels = json.loads(out)["kernels"]
    assert len(kernels) == 125 and all(k["name"] for k in kernels)


def test_ncu_rep_records_take_the_name_from_the_demangled_signature():
    demangled = ("void at::native::<unnamed>::cunn_SoftMaxForward<4, float, float, float, "
                 "at::native::<unnamed>::SoftMaxForwardEpilogue>(T4 *, const T2 *, int)")
    payload = {"launches": [
        {"id": 0, "function": "cunn_SoftMaxForward", "demangled": demangled, "metrics": [[], [], []], "rules": []},
        {"id": 1, "function": "plain", "demangled": "", "metrics": [[], [], []], "rules": []},
    ]}
    a, b = ncu_rep.to_launches(payload, "x.ncu-rep")
    assert (a.name, a.demangled) == ("cunn_SoftMaxForward", demangled)
    assert b.name == "plain"  # no demangled name: ncu_report's function name
