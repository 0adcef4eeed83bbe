"""A kernel's short identity for people: the op or functor a demangled signature stands for.

Display only: the analyzer never decides anything from it. The overview groups launches by it (with
the grid and block), tables and cards show it, and the JSON keeps the full name and the demangled
signature beside it.

    >>> identity("void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<float>, "
    ...          "std::array<char *, (unsigned long)3>>(int, T2, T3)")
    'elementwise: add'
    >>> identity("void at::native::<unnamed>::cunn_SoftMaxForward<4, float, float, float, "
    ...          "at::native::<unnamed>::SoftMaxForwardEpilogue>(T4 *, const T2 *, int)")
    'cunn_SoftMaxForward<float, SoftMaxForwardEpilogue>'

What comes out, by family:

* PyTorch's elementwise kernels name their op: ``elementwise: sin`` (``vectorized_elementwise_kernel``),
  ``elementwise (unrolled): add``, ``elementwise (strided): direct_copy`` (``elementwise_kernel``, the
  non-contiguous path), ``scatter_gather: reduce_add``; reductions ``reduce: sum``; the foreach/optimizer
  kernels ``multi_tensor: binary_op_scalar(plus)``;
* a CUTLASS 2 kernel is its template argument (``cutlass::Kernel2<cutlass_80_…_align4>`` →
  ``cutlass_80_…_align4``); cuBLAS/cuDNN ``…_execute_kernel__5x_cublas`` names lose that fixed suffix;
* any other templated kernel keeps its name, its element type and the functors among its template
  arguments: ``vectorized_layer_norm_kernel<BFloat16>``, ``indexFuncLargeIndex<float, ReduceAdd>``;
* a plain name (Triton, ``extern "C"``, your own kernel) stays as it is.

Pure string work, linear in the length of the name.
"""

from __future__ import annotations

import functools
import re
from typing import Optional

from gemmlab.profile.records import _split_top, bare_name

_ANONYMOUS = ("<unnamed>", "(anonymous namespace)", "{anonymous}", "`anonymous namespace'")
_NUMBER = re.compile(r"^(\([\w\s:]+\))?\s*-?\d+[uUlL]*$")  # 4, (int)4, (unsigned long)3, (int)-1
_BOOL = re.compile(r"^(\(bool\)[01]|true|false)$")
_FLOAT_TYPES = {
    "float": "float", "double": "double", "half": "half", "__half": "half", "Half": "half",
    "BFloat16": "BFloat16", "__nv_bfloat16": "BFloat16", "bfloat16_t": "BFloat16", "__nv_fp8_e4m3": "fp8_e4m3",
    "__nv_fp8_e5m2": "fp8_e5m2", "Float8_e4m3fn": "fp8_e4m3", "Float8_e5m2": "fp8_e5m2", "tfloat32_t": "tf32",
    "half_t": "half", "complex<float>": "complex<float>", "complex<double>": "complex<double>",
}
_INT_TYPES = ("bool", "char", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned int",
              "long", "unsigned long", "long long", "unsigned long long", "int8_t", "uint8_t", "int16_t",
              "int32_t", "uint32_t", "int64_t", "uint64_t", "Byte", "Char", "Short", "Int", "Long")
_STD_OPS = {"plus", "minus", "multiplies", "divides", "modulus", "negate", "maximum", "minimum", "equal_to",
            "not_equal_to", "less", "greater", "less_equal", "greater_equal", "logical_and", "logical_or",
            "logical_not", "bit_and", "bit_or", "bit_xor"}
_FUNCTOR = re.compile(r"(Functor|Epilogue|Op|Ops|Assign)$|^Reduce[A-Z][a-z]+$")
# PyTorch's elementwise kernels: the kernel's name → how the identity starts
_ELEMENTWISE = {
    "vectorized_elementwise_kernel": "elementwise",
    "vectorized_templated_elementwise_kernel": "elementwise",
    "unrolled_elementwise_kernel": "elementwise (unrolled)",
    "elementwise_kernel": "elementwise (strided)",
    "elementwise_kernel_with_index": "elementwise (with index)",
}
# functors that only wrap the op (a scalar operand, a dtype cast, a reduction's combine): look inside
_WRAPPERS = {"AUnaryFunctor", "BUnaryFunctor", "BinaryFunctor", "UnaryFunctor", "func_wrapper_t",
             "gpu_kernel_impl", "gpu_kernel_impl_nocast", "gpu_kernel_with_scalars", "opmath_gpu_kernel_with_scalars",
             "launch_vectorized_kernel", "launch_legacy_kernel", "launch_unrolled_kernel", "jitted_gpu_kernel"}
_OP_PREFIXES = ("CUDAFunctor_", "launch_")
_OP_SUFFIXES = ("_kernel_cuda", "_kernel_impl", "CUDAKernelImpl", "KernelImpl", "_kernel", "_cuda", "_impl",
                "Functor", "_functor", "Ops", "_ops")
_LIBRARY_SUFFIX = re.compile(r"(?:_execute)?(_segment_k_(?:on|off))?_kernel__\d+x_(?:cublas|cudnn)$")
_CUTLASS_WRAPPERS = {"Kernel", "Kernel2", "device_kernel"}


@functools.lru_cache(maxsize=8192)  # a pure function of the names; a capture repeats them thousands of times
def identity(demangled: str, name: str = "") -> str:
    """The short identity of a kernel from its demangled signature (``name``, the bare function name,
    when there is no signature). Never empty unless both are."""
    s = (demangled or "").strip()
    if not s:
        return (name or "").strip()
    for anon in _ANONYMOUS:
        s = s.replace(anon, "")
    s = re.sub(r"::(::)+", "::", s)
    func = bare_name(s) or name or s
    args = template_args(s, func)
    if args is None:  # no template arguments (a C name, Triton, cuBLAS): the name itself
        return _library_name(func)
    if func in _ELEMENTWISE:
        op = _first_op(args)
        return f"{_ELEMENTWISE[func]}: {op}" if op else func
    if func == "_scatter_gather_elementwise_kernel":
        m = re.search(r"operator\s*\(\s*\)\s*<([^<>]+(?:<[^<>]*>)?)>", s)
        op = _op_name(m.group(1)) if m else _first_op(args)
        return f"scatter_gather: {op}" if op else func
    if func == "reduce_kernel":
        ops = next((a for a in args if bare_name(a) == "ReduceOp"), None)
        inner = template_args(ops, "ReduceOp") if ops else None
        op = _op_name(inner[1]) if inner and len(inner) > 1 else ""
        return f"reduce: {op}" if op else func
    if func == "multi_tensor_apply_kernel" and len(args) > 1:
        functor = _op_name(args[1])
        op = next((_op_name(a) for a in args[2:] if _is_class(a)), "")
        return f"multi_tensor: {functor}({op})" if op else f"multi_tensor: {functor}"
    if func in _CUTLASS_WRAPPERS and args and not _NUMBER.match(args[0]):
        inner = bare_name(args[0])
        if inner:
            return inner if inner.startswith("cutlass") or func != "device_kernel" else f"device_kernel<{inner}>"
    out = _generic(func, args)
    if func in _GENERIC_NAMES:  # `kernel<float>` says little: `gemvx::kernel<float>`
        m = re.search(rf"(\w+)::{re.escape(func)}\s*<", s)
        if m:
            out = f"{m.group(1)}::{out}"
    return out


def template_args(s: str, func: str) -> Optional[list[str]]:
    """The top-level template arguments of the function ``func`` in signature ``s`` (None when it has
    none). A signature cut short inside them gives the arguments that are complete."""
    for m in re.finditer(rf"(?:^|[\s:*&]){re.escape(func)}\s*<", s):
        start = m.end()
        args, cur, stack = [], [], ["<"]
        i = start
        while i < len(s) and stack:
            ch = s[i]
            if ch in "([{":
                stack.append(ch)
            elif ch == "<":
                if stack[-1] != "(":  # a '<' inside parentheses is a comparison
                    stack.append(ch)
            elif ch in ")]}":
                opener = "([{"[")]}".index(ch)]
                while len(stack) > 1 and stack[-1] != opener:
                    stack.pop()
                if len(stack) > 1:
                    stack.pop()
            elif ch == ">" and s[i - 1] != "-":
                if stack[-1] == "<":
                    stack.pop()
                    if not stack:
                        break
            elif ch == "," and len(stack) == 1:
                args.append("".join(cur).strip())
                cur = []
                i += 1
                continue
            cur.append(ch)
            i += 1
        args.append("".join(cur).strip())  # the last argument (or, in a name cut short, what there is of it)
        return [a for a in args if a]
    return None


def _library_name(func: str) -> str:
    """A cuBLAS/cuDNN kernel without its fixed ``_execute_kernel__5x_cublas`` tail."""
    short = _LIBRARY_SUFFIX.sub(lambda m: m.group(1) or "", func)
    return short or func


def _first_op(args: list[str]) -> str:
    """The op of the first argument that is not a number (an elementwise kernel's functor)."""
    for a in args:
        if _NUMBER.match(a) or _BOOL.match(a):
            continue
        return _op_name(a)
    return ""


def _op_name(expr: str) -> str:
    """``at::native::CUDAFunctor_add<float>`` → ``add``; ``exp_kernel_cuda(…)::[lambda…]`` → ``exp``;
    a wrapper functor (a scalar operand, a reduction's combine) → the op inside it."""
    e = expr.strip()
    head = _owner(e)
    if not head:
        return ""
    if head in _WRAPPERS:
        inner = template_args(e, head)
        if inner:
            cands = [a for a in inner if not (_NUMBER.match(a) or _BOOL.match(a) or _scalar(a))]
            if cands:
                return _op_name(cands[-1] if head not in ("gpu_kernel_impl", "gpu_kernel_impl_nocast",
                                                          "launch_vectorized_kernel", "launch_legacy_kernel",
                                                          "launch_unrolled_kernel") else cands[0])
    if head in _STD_OPS:
        return head
    if head.startswith("[lambda") or head == "lambda":
        return "lambda"
    return _normalise(head)


def _owner(expr: str) -> str:
    """The name an op expression is about: a functor's class (``sum_functor<…>::operator ()(…)`` →
    ``sum_functor``), or the function a lambda is defined in (``exp_kernel_cuda(…)::[lambda…]`` →
    ``exp_kernel_cuda``); ``lambda`` for a bare lambda."""
    stack: list[str] = []
    cut = len(expr)
    for i, ch in enumerate(expr):
        if ch == "(" and not stack:
            cut = i
            break
        if ch in "([{":
            stack.append(ch)
        elif ch == "<" and (not stack or stack[-1] != "("):
            stack.append(ch)
        elif ch in ")]}>" and stack:
            if ch == ">" and stack[-1] != "<":
                continue
            stack.pop()
    head = expr[:cut].strip()
    if head.startswith(("[", "{")):
        return "lambda"
    parts = [p.strip() for p in _split_top(_after_return_type(head), "::") if p.strip()]
    while parts and parts[-1].startswith(("operator", "[", "{")):
        parts.pop()
    if not parts:
        return "lambda" if "lambda" in expr else ""
    last = parts[-1]
    return last[: last.index("<")] if "<" in last else last


def _after_return_type(head: str) -> str:
    """``void ns::f<a b>`` → ``ns::f<a b>``: from the last space outside brackets on."""
    depth, cut = 0, -1
    for i, ch in enumerate(head):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth = max(0, depth - 1)
        elif ch == " " and depth == 0 and not head[i + 1:].startswith("("):
            cut = i
    tail = head[cut + 1:]
    return tail if not tail.startswith("operator") else head


def _normalise(op: str) -> str:
    """``CUDAFunctor_add`` → ``add``, ``GeluCUDAKernelImpl`` → ``gelu``, ``MinNanFunctor`` → ``min_nan``."""
    out = op
    for p in _OP_PREFIXES:
        if out.startswith(p) and len(out) > len(p):
            out = out[len(p):]
    changed = True
    while changed:
        changed = False
        for suf in _OP_SUFFIXES:
            if out.endswith(suf) and len(out) > len(suf):
                out = out[: -len(suf)]
                changed = True
    out = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", out)  # CamelCase → snake_case
    out = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", out)
    return out.lower().strip("_") or op


def _scalar(a: str) -> Optional[str]:
    """The element type a template argument names (``c10::BFloat16`` → ``BFloat16``), or None."""
    t = re.sub(r"\b(const|volatile)\b", "", a).strip()
    if "*" in t or "&" in t:
        return None
    last = t.split("::")[-1].strip()
    if last in _FLOAT_TYPES:
        return _FLOAT_TYPES[last]
    if t in _INT_TYPES or last in _INT_TYPES:
        return t if t in _INT_TYPES else last
    return None


def _is_class(a: str) -> bool:
    """A template argument naming a class type (not a number, an element type or a pointer)."""
    return not (_NUMBER.match(a) or _BOOL.match(a) or _scalar(a) or "*" in a or "&" in a
                or a.split("::")[-1].strip() in ("double", "float", "bool", "int", "long"))


def _is_functor(a: str) -> bool:
    head = bare_name(a)
    return bool(head) and (head in _STD_OPS or bool(_FUNCTOR.search(head)) or "[lambda" in a or "{lambda" in a)


def _generic(func: str, args: list[str]) -> str:
    """``name<element type, functors…>``: what tells two instantiations of one template apart for a
    reader; numbers, policies and tensor descriptors are left out."""
    types = [t for t in (_scalar(a) for a in args) if t]
    floats = [t for t in types if t in _FLOAT_TYPES.values()]
    keep = [floats[0]] if floats else types[:1]
    for a in args:
        if _NUMBER.match(a) or _BOOL.match(a) or _scalar(a):
            continue
        if _is_functor(a):
            op = bare_name(a)
            if "[lambda" in a or "{lambda" in a:
                op = _op_name(a)
            op = op.split("::")[-1] if op else ""
            if op and op not in keep:
                keep.append(op)
    return f"{func}<{', '.join(keep)}>" if keep else func


_GENERIC_NAMES = {"kernel", "Kernel", "kern", "main_kernel", "device_kernel", "fill", "copy"}
