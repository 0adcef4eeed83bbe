"""A user's own GEMM kernel: how it is called and launched, declared in its ``.cu`` file or by flags.

A header block of ``// gemmlab:`` comments anywhere in the file (several ``key=value`` per line, or
one ``key = value`` with spaces), overridden by command-line flags of the same names::

    // gemmlab: args=seed block=16,16          (seed: k(A, B, C, M, N, K), one thread per C element)
    // gemmlab: args=sgemm block=256 tile=64,64 BK=8
    // gemmlab: kernel=sgemm2d<BM,BN,BK,TM,TN> BM=128 BN=128 BK=8 TM=8 TN=8
    // gemmlab: block = BM * BN / (TM * TN)
    // gemmlab: smem = (BM + BN) * BK * 4
    // gemmlab: requires = K % 4 == 0, N % 4 == 0

Keys: ``name`` (the history key; the file's stem by default), ``kernel`` (the ``__global__``
function, or a template's name expression; by default the file's only kernel), ``args`` (a preset or
the parameter order as names from A, B, C, M, N, K, alpha, beta; by default read from the kernel's
own parameter names), ``dtype`` (fp32, bf16, fp16, fp8; by default from the type of A's pointer), ``out``
(C's type), ``block`` (required), ``tile`` (BM,BN: grid = (cdiv(N, BN), cdiv(M, BM))) or ``grid``
(expressions), ``smem`` (dynamic shared memory bytes), ``requires`` (conditions on M, N, K),
``shape`` (the default M,N,K), ``compiler`` (nvrtc, nvcc), ``arch`` (e.g. sm_90a). An upper-case
``NAME=int`` defines a constant for the expressions and the name expression. Without ``tile`` or
``grid`` the grid gives one thread per element of C: (cdiv(N, block.x), cdiv(M, block.y)), the first
seed article's launch.

Everything is checked when it is parsed; an error names the file (or flag) and the line and says
what was expected, so a learner fixes the declaration without reading this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

from gemmlab.errors import InputError
from gemmlab.kernels import expr
from gemmlab.problem import gemm_types, parse_shape

# The two calling conventions a learner already knows (docs/your-kernel.md):
PRESETS: dict[str, tuple[str, ...]] = {
    "seed": ("A", "B", "C", "M", "N", "K"),  # the first seed article: k(A, B, C, M, N, K)
    "sgemm": ("M", "N", "K", "alpha", "A", "B", "beta", "C"),  # siboehm/SGEMM_CUDA's runner
}
ARG_NAMES = ("A", "B", "C", "M", "N", "K", "alpha", "beta")
POINTERS = ("A", "B", "C")
USER_DTYPES = ("fp32", "bf16", "fp16", "fp8")
# C's types per input type: what the checker's bounds and the cuBLAS references cover.
OUT_TYPES = {"fp32": ("fp32",), "bf16": ("bf16", "fp32"), "fp16": ("fp16", "fp32"), "fp8": ("bf16",)}
KEYS = ("name", "kernel", "args", "dtype", "out", "block", "tile", "grid", "smem", "requires", "shape",
        "compiler", "arch")
COMPILERS = ("nvrtc", "nvcc")
# A block has at most 1024 threads on every CUDA GPU since compute capability 2.0; grid.y and
# grid.z at most 65535 (CUDA C++ Programming Guide, "Compute Capabilities", Table 21).
MAX_BLOCK_THREADS = 1024
MAX_BLOCK_Z = 64  # block.x and .y may reach 1024, block.z only 64 (same table)
MAX_GRID_X = 2**31 - 1
MAX_GRID_YZ = 65535

_HEADER = re.compile(r"^\s*(?://|/?\*+)\s*gemmlab\s*:(.*?)(?:\*/)?\s*$")
_KEY = re.compile(r"(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)")
_CONST = re.compile(r"^[A-Z][A-Z0-9_]*$")
_BOUNDS = r"(?:__launch_bounds__\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\s*)?"  # parentheses nest twice
_GLOBAL = re.compile(r"(template\s*<[^{;]*?>\s*)?(?:static\s+)?__global__\s+" + _BOUNDS + r"void\s+" + _BOUNDS
                     + r"([A-Za-z_]\w*)\s*\(([^)]*)\)", re.S)
# The element types a kernel's pointer parameters name, per gemmlab dtype.
_C_TYPES = {
    "fp32": ("float",),
    "bf16": ("__nv_bfloat16", "nv_bfloat16", "__bf16", "bf16", "bfloat16"),
    "fp16": ("__half", "half"),
    "fp8": ("__nv_fp8_e4m3", "fp8_e4m3", "uint8_t", "unsigned char"),
}


@dataclass(frozen=True)
class Kernel:
    """A ``__global__`` function found in the source: its name, parameters, and whether it is a template."""

    name: str
    params: tuple[tuple[str, str], ...]  # (type text, parameter name)
    template: bool
    line: int


@dataclass(frozen=True)
class Declaration:
    """How to call and launch one user GEMM kernel; ``where`` says where each key came from."""

    file: str
    name: str
    kernel: str  # the function, or the name expression with the constants substituted
    args: tuple[str, ...]
    dtype: str
    out_dtype: str
    block: tuple[str, ...]
    grid: Optional[tuple[str, ...]] = None
    tile: Optional[tuple[str, str]] = None
    smem: str = "0"
    requires: tuple[str, ...] = ()
    constants: tuple[tuple[str, int], ...] = ()
    shape: Optional[tuple[int, int, int]] = None
    compiler: str = "nvrtc"
    arch: Optional[str] = None
    where: Mapping[str, str] = field(default_factory=dict)

    @property
    def function(self) -> str:
        """The kernel's bare function name (``sgemm2d`` for ``sgemm2d<64,64>``)."""
        return self.kernel.split("<", 1)[0].strip()

    @property
    def is_template(self) -> bool:
        return "<" in self.kernel

    @property
    def has_scalars(self) -> bool:
        """Whether the kernel takes alpha and beta (otherwise it computes C = A @ B)."""
        return "alpha" in self.args and "beta" in self.args

    def names(self, M: int, N: int, K: int) -> dict[str, int]:
        return {**dict(self.constants), "M": M, "N": N, "K": K}

    def grid_rule(self) -> str:
        """How the grid is computed, in words (shown with the run)."""
        if self.grid is not None:
            return "grid = (" + ", ".join(self.grid) + ")"
        if self.tile is not None:
            return f"grid = (cdiv(N, {self.tile[1]}), cdiv(M, {self.tile[0]})): one block per {self.tile[0]}x{self.tile[1]} tile of C"
        return "grid = (cdiv(N, block.x), cdiv(M, block.y)): one thread per element of C"

    def refusal(self, M: int, N: int, K: int) -> Optional[str]:
        """Why the kernel does not accept M x N x K (its ``requires``), or None."""
        names = self.names(M, N, K)
        failed = [r for r in self.requires if not expr.evaluate(r, names, self._what("requires"))]
        if failed:
            return f"{self.name} requires {' and '.join(failed)}; M,N,K = {M},{N},{K} does not meet it"
        return None

    def launch(self, M: int, N: int, K: int) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
        """(grid, block, dynamic shared memory bytes) at M x N x K, checked against CUDA's limits."""
        names = self.names(M, N, K)
        block = _dims([expr.evaluate(b, names, self._what("block")) for b in self.block], "block", self)
        if self.grid is not None:
            grid = _dims([expr.evaluate(g, names, self._what("grid")) for g in self.grid], "grid", self)
        elif self.tile is not None:
            bm, bn = (expr.evaluate(t, names, self._what("tile")) for t in self.tile)
            if bm < 1 or bn < 1:
                raise InputError(f"{self._what('tile')}: the tile {bm}x{bn} must be positive")
            grid = (expr.cdiv(N, bn), expr.cdiv(M, bm), 1)
        else:
            grid = (expr.cdiv(N, block[0]), expr.cdiv(M, block[1]), 1)
        smem = expr.evaluate(self.smem, names, self._what("smem"))
        if block[2] > MAX_BLOCK_Z:
            raise InputError(f"{self._what('block')}: block.z = {block[2]}; CUDA allows at most {MAX_BLOCK_Z}")
        threads = block[0] * block[1] * block[2]
        if threads > MAX_BLOCK_THREADS:
            raise InputError(f"{self._what('block')}: {block} is {threads} threads; a CUDA block has at most "
                             f"{MAX_BLOCK_THREADS}")
        if grid[0] > MAX_GRID_X or grid[1] > MAX_GRID_YZ or grid[2] > MAX_GRID_YZ:
            raise InputError(f"{self._what('grid')}: grid {grid} at M,N,K={M},{N},{K} exceeds CUDA's limits "
                             f"(x <= {MAX_GRID_X}, y and z <= {MAX_GRID_YZ})")
        if smem < 0:
            raise InputError(f"{self._what('smem')}: {smem} bytes; expected 0 or more")
        return grid, block, smem

    def _what(self, key: str) -> str:
        return f"{self.file}: {key} ({self.where.get(key, 'default')})"

    def to_dict(self) -> dict:
        return {"name": self.name, "kernel": self.kernel, "args": list(self.args), "dtype": self.dtype,
                "out_dtype": self.out_dtype, "block": list(self.block),
                "grid": None if self.grid is None else list(self.grid),
                "tile": None if self.tile is None else list(self.tile), "grid_rule": self.grid_rule(),
                "smem": self.smem, "requires": list(self.requires), "constants": dict(self.constants),
                "shape": None if self.shape is None else list(self.shape), "compiler": self.compiler,
                "arch": self.arch, "where": dict(self.where)}


def _dims(values: list[int], what: str, decl: Declaration) -> tuple[int, int, int]:
    if not 1 <= len(values) <= 3:
        raise InputError(f"{decl._what(what)}: expected 1 to 3 dimensions (x[,y[,z]]), got {len(values)}")
    if any(v < 1 for v in values):
        raise InputError(f"{decl._what(what)}: {tuple(values)}: every dimension must be at least 1")
    values = values + [1] * (3 - len(values))
    return values[0], values[1], values[2]


# --- parsing ----------------------------------------------------------------------------------
def header(text: str, file: str) -> dict[str, tuple[str, str]]:
    """The ``// gemmlab:`` keys of a source: key -> (value, "line N")."""
    found: dict[str, tuple[str, str]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        m = _HEADER.match(line)
        if not m:
            continue
        body = m.group(1)
        keys = list(_KEY.finditer(body))
        if not keys or body[: keys[0].start()].strip():
            raise InputError(f"{file}:{n}: {line.strip()!r}: expected key=value pairs after 'gemmlab:' "
                             f"(keys: {', '.join(KEYS)}, or an upper-case constant like BM=64)")
        for i, k in enumerate(keys):
            end = keys[i + 1].start() if i + 1 < len(keys) else len(body)
            key, value = k.group(1), body[k.end():end].strip()
            if key in found:
                raise InputError(f"{file}:{n}: {key} is declared twice (first at {found[key][1]})")
            found[key] = (value, f"line {n}")
    return found


def kernels_in(text: str) -> list[Kernel]:
    """The ``__global__`` functions of a source, with their parameters (comments removed first)."""
    clean = re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S))
    out = []
    for m in _GLOBAL.finditer(clean):
        params = []
        for p in (x.split("=", 1)[0].strip() for x in m.group(3).split(",")):  # a default value is not the name
            if not p or p == "void":
                continue
            pm = re.match(r"(.*?)([A-Za-z_]\w*)\s*(?:\[\s*\])?$", p, re.S)
            params.append((pm.group(1).strip(), pm.group(2)) if pm else (p, ""))
        if any(k.name == m.group(2) for k in out):  # a prototype, then the definition: one kernel
            continue
        out.append(Kernel(m.group(2), tuple(params), bool(m.group(1)), clean.count("\n", 0, m.start()) + 1))
    return out


def _arg_of(param: str) -> Optional[str]:
    """A parameter's role from its name (A, a, d_A, A_ptr → A; alpha → alpha), or None."""
    bare = re.sub(r"^(d_|g_|dev_)|(_ptr|_d|Ptr)$", "", param)
    for name in ARG_NAMES:
        if bare == name or (len(name) == 1 and bare == name.lower()):
            return name
    return None


def _dtype_of(type_text: str) -> Optional[str]:
    t = re.sub(r"\b(const|__restrict__|restrict|volatile)\b|\*", " ", type_text)
    t = " ".join(t.split())
    for dtype, names in _C_TYPES.items():
        if t in names:
            return dtype
    return None


def _split_ints(value: str, where: str, n: int) -> tuple[str, ...]:
    parts = expr.split_top(value)
    if len(parts) != n:
        raise InputError(f"{where}: {value!r}: expected {n} comma-separated values")
    return tuple(parts)


def declare(path: Path, text: str, flags: Optional[Mapping[str, str]] = None) -> Declaration:
    """The declaration of the kernel in ``text`` (the file at ``path``): its header, then ``flags``
    (key -> value, as the ``--key`` options give them) on top."""
    file = str(path)
    raw = header(text, file)
    for key, value in (flags or {}).items():
        if value is not None and value != "":
            raw[key] = (str(value), f"--declare {key}")
    where = {k: w for k, (_, w) in raw.items()}

    def at(key: str) -> str:
        return f"{file}: {key} ({where[key]})" if key in where else f"{file}: {key}"

    constants: dict[str, int] = {}
    for key, (value, w) in raw.items():
        if key in KEYS:
            continue
        if not _CONST.match(key):
            raise InputError(f"{file}: unknown key {key!r} ({w}); expected one of {', '.join(KEYS)} or an "
                             f"upper-case constant like BM=64")
        if key in ("M", "N", "K"):
            raise InputError(f"{file}: {key} ({w}) is the problem's size, not a constant; set the shape with --shape")
        try:
            constants[key] = int(value, 0)
        except ValueError:
            raise InputError(f"{file}: constant {key} ({w}) = {value!r}: expected an integer") from None

    def val(key: str) -> Optional[str]:
        return raw[key][0] if key in raw else None

    found = kernels_in(text)
    kernel_expr = val("kernel")
    if kernel_expr is None:
        if len(found) != 1:
            listing = ", ".join(k.name for k in found) or "none"
            raise InputError(f"{file}: {'no' if not found else len(found)} __global__ kernels found ({listing}); "
                             f"declare which one with // gemmlab: kernel=NAME (or --declare kernel=NAME)")
        kernel_expr = found[0].name
    for c, v in constants.items():  # BM -> 64 inside a template's name expression
        kernel_expr = re.sub(rf"\b{c}\b", str(v), kernel_expr)
    fn = kernel_expr.split("<", 1)[0].strip()
    match = next((k for k in found if k.name == fn), None)
    if found and match is None:
        raise InputError(f"{at('kernel')}: no __global__ function {fn!r} in the file; it defines "
                         f"{', '.join(k.name for k in found)}")
    if match is not None and match.template and "<" not in kernel_expr:
        raise InputError(f"{at('kernel')}: {fn} is a template; declare the instantiation, e.g. "
                         f"kernel={fn}<BM,BN,...> with the constants BM=... defined")

    args = _args(val("args"), match, at("args"))
    dtype, out_dtype = _types(val("dtype"), val("out"), match, args, at("dtype"))
    block = val("block")
    if block is None:
        raise InputError(f"{file}: declare the block shape: // gemmlab: block=16,16 (or --declare block=16,16)")
    block_t = tuple(expr.split_top(block))
    grid = tuple(expr.split_top(val("grid"))) if val("grid") is not None else None
    tile = _split_ints(val("tile"), at("tile"), 2) if val("tile") is not None else None
    if grid is not None and tile is not None:
        raise InputError(f"{file}: both tile ({where['tile']}) and grid ({where['grid']}) are declared; give one")
    if grid is None and tile is None and len(block_t) < 2:
        raise InputError(f"{file}: block={block} is one-dimensional, so the grid cannot be one thread per "
                         f"element of C; declare tile=BM,BN (one block per BM x BN tile) or grid=...")
    shape = parse_shape(val("shape"), at("shape")) if val("shape") is not None else None
    compiler = val("compiler") or "nvrtc"
    if compiler not in COMPILERS:
        raise InputError(f"{at('compiler')}: {compiler!r}; expected one of {', '.join(COMPILERS)}")
    if compiler == "nvcc" and "<" in kernel_expr:
        raise InputError(f"{at('compiler')}: a template instantiation ({kernel_expr}) needs NVRTC's name "
                         f"expressions; use compiler=nvrtc, or an extern \"C\" wrapper kernel with nvcc")
    arch = val("arch")
    if arch is not None and not re.fullmatch(r"sm_\d+a?", arch):
        raise InputError(f"{at('arch')}: {arch!r}; expected sm_XY or sm_XYa (e.g. sm_90a)")
    decl = Declaration(file=file, name=val("name") or path.stem, kernel=kernel_expr, args=args, dtype=dtype,
                       out_dtype=out_dtype, block=block_t, grid=grid, tile=tile, smem=val("smem") or "0",
                       requires=tuple(expr.split_top(val("requires"))) if val("requires") else (),
                       constants=tuple(sorted(constants.items())), shape=shape, compiler=compiler, arch=arch,
                       where=where)
    if not re.fullmatch(r"[A-Za-z0-9_.+-]+", decl.name):
        raise InputError(f"{at('name')}: {decl.name!r}; expected letters, digits and _ . + -")
    for key, texts in (("block", decl.block), ("grid", decl.grid or ()), ("tile", decl.tile or ()),
                       ("smem", (decl.smem,)), ("requires", decl.requires)):
        for t in texts:
            expr.parse(t, at(key))  # a syntax error now, not at the first launch
    return decl


def _args(value: Optional[str], kernel: Optional[Kernel], where: str) -> tuple[str, ...]:
    if value is not None:
        if value in PRESETS:
            args = PRESETS[value]
        else:
            args = tuple(a.strip() for a in value.split(",") if a.strip())
            bad = [a for a in args if a not in ARG_NAMES]
            if bad:
                raise InputError(f"{where}: {value!r}: expected a preset ({', '.join(PRESETS)}) or the parameter "
                                 f"order as names from {', '.join(ARG_NAMES)}; unknown: {', '.join(bad)}")
    elif kernel is not None:
        roles = [_arg_of(name) for _, name in kernel.params]
        if None in roles:
            names = ", ".join(n for _, n in kernel.params)
            raise InputError(f"{where}: cannot tell which parameter of {kernel.name}({names}) is which; declare "
                             f"args=seed (A, B, C, M, N, K), args=sgemm (M, N, K, alpha, A, B, beta, C) or "
                             f"args=<the order as names from {', '.join(ARG_NAMES)}>")
        args = tuple(roles)  # type: ignore[arg-type]
    else:
        raise InputError(f"{where}: declare the calling convention: args=seed or args=sgemm")
    missing = [a for a in ("A", "B", "C", "M", "N", "K") if a not in args]
    if missing or len(set(args)) != len(args):
        raise InputError(f"{where}: {', '.join(args)}: each of A, B, C, M, N, K exactly once "
                         f"(alpha and beta optional, both or neither); missing: {', '.join(missing) or 'none'}")
    if ("alpha" in args) != ("beta" in args):
        raise InputError(f"{where}: {', '.join(args)}: alpha and beta come together (C = alpha*A@B + beta*C)")
    if kernel is not None and len(kernel.params) != len(args):
        raise InputError(f"{where}: {len(args)} arguments ({', '.join(args)}) but {kernel.name} takes "
                         f"{len(kernel.params)}")
    return args


# What the harness passes for the scalars: 32-bit int for M, N, K and float for alpha, beta (a 64-bit
# parameter would read 8 bytes from a 4-byte argument).
_SCALAR_TYPES = {"int": ("int", "int32_t", "signed", "signed int", "unsigned", "unsigned int", "uint32_t"),
                 "float": ("float",)}


def _types(dtype: Optional[str], out: Optional[str], kernel: Optional[Kernel], args: tuple[str, ...],
           where: str) -> tuple[str, str]:
    by_arg = {}
    if kernel is not None:
        for (type_text, _), role in zip(kernel.params, args):
            if role not in POINTERS:
                want = "int" if role in ("M", "N", "K") else "float"
                bare = " ".join(re.sub(r"\bconst\b", " ", type_text).split())
                if bare not in _SCALAR_TYPES[want]:
                    raise InputError(f"{where}: parameter {role} of {kernel.name} is {type_text!r}; gemmlab passes "
                                     f"{'a 32-bit int' if want == 'int' else 'a float'} for it")
                continue
            if role in POINTERS:
                if "*" not in type_text:
                    raise InputError(f"{where}: parameter {role} of {kernel.name} is {type_text!r}, not a pointer; "
                                     f"check args= (the parameter order)")
                by_arg[role] = _dtype_of(type_text)
    if dtype is None:
        if kernel is not None and by_arg.get("A") is None:
            raise InputError(f"{where}: the type of A's pointer is not one gemmlab knows; declare dtype= (one of "
                             f"{', '.join(USER_DTYPES)})")
        dtype = by_arg.get("A") or "fp32"
    if dtype not in USER_DTYPES:
        raise InputError(f"{where}: {dtype!r}; expected one of {', '.join(USER_DTYPES)}")
    if out is None:
        c = by_arg.get("C")
        out = c if c in ("fp32", "bf16", "fp16") else None
    d, o = gemm_types(dtype, out)
    for role in ("A", "B"):
        if by_arg.get(role) not in (None, d):
            raise InputError(f"{where}: dtype {d}, but {role} is declared as {by_arg[role]} in the kernel's parameters")
    if o not in OUT_TYPES[d]:
        raise InputError(f"{where}: {d} inputs with a {o} output; expected C of {' or '.join(OUT_TYPES[d])}")
    if by_arg.get("C") not in (None, o):
        raise InputError(f"{where}: C is declared as {by_arg['C']} in the kernel's parameters, but the output is {o}")
    return d, o
