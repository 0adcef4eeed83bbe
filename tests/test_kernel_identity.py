"""A kernel's short identity (``analysis.kernel_names.identity``): the op or functor a demangled signature
stands for, so eight PyTorch elementwise launches no longer all read ``vectorized_elementwise_kernel``.

The signatures are real ones: ncu 2025.3.1 on an H100 (tests/fixtures/corpus/h100, the .ncu-rep's
``at::native::…(int)4`` form and the CSV pages' ``native::…4`` form of the same kernels)."""

from __future__ import annotations

import pytest

from gemmlab.analysis.kernel_names import identity, template_args

VEC = "void at::native::vectorized_elementwise_kernel<(int)4, {}, std::array<char *, (unsigned long)2>>(int, T2, T3)"

REAL = [
    # PyTorch elementwise: the op, from a functor or from the function its lambda is defined in
    ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<float>, "
     "std::array<char *, (unsigned long)3>>(int, T2, T3)", "elementwise: add"),
    ("void native::vectorized_elementwise_kernel<4, native::CUDAFunctor_add<float>, std::array<char *, 3>>"
     "(int, T2, T3)", "elementwise: add"),  # the CSV pages' spelling
    ("void at::native::vectorized_elementwise_kernel<(int)8, at::native::AUnaryFunctor<c10::BFloat16, "
     "c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float>>, std::array<char *, "
     "(unsigned long)2>>(int, T2, T3)", "elementwise: mul"),
    (VEC.format("at::native::exp_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 2)]::operator ()() "
                "const::[lambda() (instance 2)]::operator ()() const::[lambda(float) (instance 1)]"),
     "elementwise: exp"),
    (VEC.format("at::native::GeluCUDAKernelImpl(at::TensorIteratorBase &, at::native::GeluType)::[lambda() "
                "(instance 2)]::operator ()() const::[lambda(c10::BFloat16) (instance 1)]"), "elementwise: gelu"),
    (VEC.format("at::native::<unnamed>::silu_kernel(at::TensorIteratorBase &)::[lambda() (instance 1)]::operator "
                "()() const::[lambda(c10::Half) (instance 1)]"), "elementwise: silu"),
    (VEC.format("at::native::<unnamed>::where_kernel_impl(at::TensorIterator &)::[lambda() (instance 1)]::operator "
                "()() const::[lambda(bool, float, float) (instance 1)]"), "elementwise: where"),
    # GNU c++filt's lambda spelling
    ("void at::native::vectorized_elementwise_kernel<4, at::native::sin_kernel_cuda(at::TensorIteratorBase&)"
     "::{lambda()#1}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, T2, T3)",
     "elementwise: sin"),
    ("void at::native::vectorized_elementwise_kernel<(int)2, at::native::FillFunctor<long>, std::array<char *, "
     "(unsigned long)1>>(int, T2, T3)", "elementwise: fill"),
    ("void at::native::elementwise_kernel<(int)128, (int)2, void at::native::gpu_kernel_impl_nocast<at::native::"
     "direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() const::[lambda() "
     "(instance 7)]::operator ()() const::[lambda(float) (instance 1)]>(at::TensorIteratorBase &, const T1 &)::"
     "[lambda(int) (instance 1)]>(int, T3)", "elementwise (strided): direct_copy"),
    ("void at::native::_scatter_gather_elementwise_kernel<(int)128, (int)8, void at::native::"
     "_cuda_scatter_gather_internal_kernel<(bool)1, float, long>::operator ()<at::native::ReduceAdd>(at::"
     "TensorIterator &, long, long, long, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
     "scatter_gather: reduce_add"),
    ("void at::native::_scatter_gather_elementwise_kernel<(int)128, (int)8, void at::native::"
     "_cuda_scatter_gather_internal_kernel<(bool)0, at::native::OpaqueType<(int)4>, long>::operator ()<at::native::"
     "TensorAssign>(at::TensorIterator &, long, long, long, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
     "scatter_gather: tensor_assign"),
    # reductions and the foreach / optimizer kernels
    ("void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
     "at::native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::[lambda(float, float) "
     "(instance 1)]>, unsigned int, float, (int)4, (int)4>>(T3)", "reduce: sum"),
    ("void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, "
     "unsigned int, long, (int)4, (int)4>>(T3)", "reduce: arg_max"),
    ("void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<long, at::native::func_wrapper_t<long, "
     "at::native::MinNanFunctor<long>>, unsigned int, long, (int)4, (int)4>>(T3)", "reduce: min_nan"),
    ("void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>::FusedOptimizerTensorListMetadata"
     "<(int)4>, at::native::<unnamed>::FusedAdamMathFunctor<float, (int)4, (at::native::ADAM_MODE)0, (bool)0>, "
     "const float *, double, double, double, double, double, bool, const float *, const float *>(T1, T2, T3...)",
     "multi_tensor: fused_adam_math"),
    ("void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>::TensorListMetadata<(int)1>, "
     "at::native::<unnamed>::BinaryOpScalarFunctor<float, (int)1, (int)1, (int)0>, std::plus<float>, float>"
     "(T1, T2, T3...)", "multi_tensor: binary_op_scalar(plus)"),
    ("void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>::TensorListMetadata<(int)2>, "
     "at::native::<unnamed>::UnaryOpFunctor<float, (int)2, (int)1, (int)1>, at::native::Sqrt<float>>(T1, T2, T3...)",
     "multi_tensor: unary_op(sqrt)"),
    # other templates: the name, the element type, the functors
    ("void at::native::<unnamed>::cunn_SoftMaxForward<4, float, float, float, at::native::<unnamed>::"
     "SoftMaxForwardEpilogue>(T4 *, const T2 *, int)", "cunn_SoftMaxForward<float, SoftMaxForwardEpilogue>"),
    ("void at::native::<unnamed>::cunn_SoftMaxForwardReg<c10::BFloat16, float, c10::BFloat16, at::native::<unnamed>::"
     "LogSoftMaxForwardEpilogue, long, (int)4>(T3 *, const T1 *, T5)",
     "cunn_SoftMaxForwardReg<BFloat16, LogSoftMaxForwardEpilogue>"),
    ("void at::native::<unnamed>::vectorized_layer_norm_kernel<c10::BFloat16, float, (bool)0>(int, T2, const T1 *, "
     "const T1 *, const T1 *, T2 *, T2 *, T1 *)", "vectorized_layer_norm_kernel<BFloat16>"),
    ("void at::native::indexFuncLargeIndex<float, long, unsigned int, (int)2, (int)2, (int)-2, (bool)1, at::native::"
     "<unnamed>::ReduceAdd>(at::cuda::detail::TensorInfo<T1, T3>, at::cuda::detail::TensorInfo<const T1, T3>, "
     "at::cuda::detail::TensorInfo<const T2, T3>, int, int, T3, T3, long, long, const T8 &, T1)",
     "indexFuncLargeIndex<float, ReduceAdd>"),
    ("std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, float, float, float, float, (bool)0, (bool)1, "
     "(bool)0, (bool)0, (int)9, (bool)0, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const float>, "
     "cublasGemvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<float>, float>>(T13)",
     "gemvx::kernel<float>"),
    ("at::native::<unnamed>::fill_reverse_indices_kernel(long *, int, at::cuda::detail::IntDivider<unsigned int>)",
     "fill_reverse_indices_kernel"),
    # libraries: CUTLASS 2's kernel is its template argument; cuBLAS loses its fixed tail; nvjet stays
    ("void cutlass::Kernel2<cutlass_80_wmma_tensorop_i161616gemm_s8_forwardCompat_128x128_32x2_nn_align4>(T1::Params)",
     "cutlass_80_wmma_tensorop_i161616gemm_s8_forwardCompat_128x128_32x2_nn_align4"),
    ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_execute_"
     "kernel__5x_cublas", "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_"
                         "alignc4"),
    ("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_"
     "cublas", "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_warpgroupsize2x1x1_segment_k_off"),
    ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"),
    # Triton and plain C names as they are
    ("add_kernel", "add_kernel"),
    ("gemmlab_warptiling", "gemmlab_warptiling"),
    ("gemm_tiled16(const float *, const float *, float *, int, int, int)", "gemm_tiled16"),
]


@pytest.mark.parametrize("demangled, short", REAL)
def test_identity_of_real_kernels(demangled, short):
    assert identity(demangled) == short


def test_two_functors_of_one_template_never_read_alike():
    """The user saw eight groups all named vectorized_elementwise_kernel (add, mul, exp, …)."""
    names = [d for d, _ in REAL if "vectorized_elementwise_kernel" in d and "CUDAFunctor_add" not in d]
    shorts = [identity(d) for d in names]
    assert len(set(shorts)) == len(shorts)
    assert all(s.startswith("elementwise: ") and "vectorized_elementwise_kernel" not in s for s in shorts)


def test_cut_and_empty_names_degrade_gracefully():
    assert identity("") == ""
    assert identity("", "plain") == "plain"
    cut = "void at::native::<unnamed>::cunn_SoftMaxForward<float, float, float, at::native::<unn"
    assert identity(cut) == "cunn_SoftMaxForward<float>"
    assert identity("void native::elementwise_kernel<128, 2, void native::gpu_kernel_impl_nocast<native::"
                    "direct_copy_kernel_cuda(at::TensorIteratorBase &)::[la") == "elementwise (strided): direct_copy"


def test_template_args_split_at_the_top_level_only():
    assert template_args("void f<(int)4, A<b, c>, (N < 3)>(int)", "f") == ["(int)4", "A<b, c>", "(N < 3)"]
    assert template_args("plain(int)", "plain") is None
