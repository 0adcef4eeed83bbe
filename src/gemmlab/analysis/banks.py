"""Shared-memory bank conflicts of one warp-wide access, from the index expression in the source.

The model (CUDA C++ Programming Guide, "Shared Memory" for compute capability 5.x and later):
shared memory has 32 banks; successive 32-bit words go to successive banks (bank = word % 32); the
threads of a request that touch different words of one bank are served one after another (one
*wavefront* each), while threads reading the same word get it broadcast. Accesses wider than 4 bytes
are split: 8-byte accesses are served per half-warp (16 lanes, 2 wavefronts at best) and 16-byte
ones per quarter-warp (8 lanes, 4 wavefronts at best), so LDS.64/LDS.128 reach their minimum with no
conflict at all. N-way = the most distinct words any bank must serve in one of those phases.

Ground truth on a GPU is ncu's ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum`` against
``smsp__sass_inst_executed_op_shared_ld.sum`` (wavefronts per request).

The expression is parsed with ``ast`` and evaluated by a whitelist (integers, names, + - * / % << >>
& | ^ ~, C integer semantics for / and %); nothing is ``eval``-ed.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from gemmlab.errors import InputError

BANKS = 32
WORD_BYTES = 4
WARP = 32
ELEMENT_BYTES = (1, 2, 4, 8, 16)
# Lanes served together per element size: 8-byte accesses per half-warp, 16-byte per quarter-warp.
LANES_PER_PHASE = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}
MAX_EXPR_CHARS = 500
_MAX_ABS = 1 << 62  # keeps shifts from building huge integers
RESERVED_NAMES = ("lane", "tid", "warp", "tx", "ty", "tz", "threadIdx.x", "threadIdx.y", "threadIdx.z")

_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor)
_UNARY = (ast.USub, ast.UAdd, ast.Invert)


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q  # C truncates toward zero


def _c_mod(a: int, b: int) -> int:
    return a - _c_div(a, b) * b  # C: the sign of the dividend


def _name_of(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


class _Expr:
    """A parsed, whitelisted index expression."""

    def __init__(self, text: str, tree: ast.expr) -> None:
        self.text = text
        self.tree = tree
        self._check(tree)

    def _check(self, node: ast.AST) -> None:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return
        if _name_of(node) is not None:
            return
        if isinstance(node, ast.BinOp) and isinstance(node.op, _BINOPS):
            self._check(node.left)
            self._check(node.right)
            return
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, _UNARY):
            self._check(node.operand)
            return
        raise InputError(
            f"{self.text!r}: {ast.unparse(node)!r} is not allowed; use integers, names (lane, tid, threadIdx.x, "
            f"--var NAME=VALUE) and + - * / % << >> & | ^ ~"
        )

    def evaluate(self, env: Mapping[str, int], node: Optional[ast.AST] = None) -> int:
        node = self.tree if node is None else node
        if isinstance(node, ast.Constant):
            return node.value
        name = _name_of(node)
        if name is not None:
            if name not in env:
                known = ", ".join(sorted(env))
                raise InputError(f"{self.text!r}: unknown name {name!r}; pass --var {name}=VALUE (known: {known})")
            return env[name]
        if isinstance(node, ast.UnaryOp):
            v = self.evaluate(env, node.operand)
            return -v if isinstance(node.op, ast.USub) else (~v if isinstance(node.op, ast.Invert) else v)
        assert isinstance(node, ast.BinOp)  # _check admitted nothing else
        a, b = self.evaluate(env, node.left), self.evaluate(env, node.right)
        op = node.op
        if isinstance(op, (ast.Div, ast.FloorDiv, ast.Mod)) and b == 0:
            raise InputError(f"{self.text!r}: division by zero in {ast.unparse(node)!r} at lane {env.get('lane')}")
        if isinstance(op, (ast.LShift, ast.RShift)) and not 0 <= b < 63:
            raise InputError(f"{self.text!r}: shift by {b} in {ast.unparse(node)!r}; shifts must be 0..62")
        r = {
            ast.Add: lambda: a + b,
            ast.Sub: lambda: a - b,
            ast.Mult: lambda: a * b,
            ast.Div: lambda: _c_div(a, b),
            ast.FloorDiv: lambda: _c_div(a, b),
            ast.Mod: lambda: _c_mod(a, b),
            ast.LShift: lambda: a << b,
            ast.RShift: lambda: a >> b,
            ast.BitAnd: lambda: a & b,
            ast.BitOr: lambda: a | b,
            ast.BitXor: lambda: a ^ b,
        }[type(op)]()
        if abs(r) >= _MAX_ABS:
            raise InputError(f"{self.text!r}: {ast.unparse(node)!r} overflows a 64-bit index")
        return r


def parse_index(text: str, row_length: Optional[int] = None) -> tuple[_Expr, Optional[str]]:
    """The element index expression, and the array name when written as ``As[row][col]``.

    ``As[e]`` is index ``e``; ``As[r][c]`` is ``r * row_length + c`` (row_length elements per row).
    """
    if len(text) > MAX_EXPR_CHARS:
        raise InputError(f"expression of {len(text)} characters: at most {MAX_EXPR_CHARS}")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise InputError(f"{text!r}: not an expression ({e.msg})") from None
    subs: list[ast.expr] = []
    node = tree
    while isinstance(node, ast.Subscript):
        subs.insert(0, node.slice)
        node = node.value
    if not subs:
        return _Expr(text, tree), None
    array = _name_of(node)
    if array is None:
        raise InputError(f"{text!r}: subscripts must follow an array name, as in As[row][col]")
    if len(subs) == 1:
        return _Expr(text, subs[0]), array
    if len(subs) > 2:
        raise InputError(f"{text!r}: at most two subscripts, As[row][col]")
    if row_length is None:
        raise InputError(f"{text!r}: a 2-D access needs --row-length (elements per row of {array})")
    if row_length < 1:
        raise InputError(f"{row_length}: must be ≥ 1", option="row_length")
    index = ast.BinOp(ast.BinOp(subs[0], ast.Mult(), ast.Constant(row_length)), ast.Add(), subs[1])
    return _Expr(text, ast.fix_missing_locations(index)), array


def lane_env(
    lane: int,
    warp: int = 0,
    block: tuple[int, int, int] = (1024, 1, 1),
    variables: Optional[Mapping[str, int]] = None,
) -> dict[str, int]:
    """The names an expression can use for one lane of warp ``warp`` in a block of shape ``block``."""
    tid = warp * WARP + lane
    bx, by, _ = block
    tx, ty, tz = tid % bx, (tid // bx) % by, tid // (bx * by)
    env = {
        "lane": lane, "tid": tid, "warp": warp,
        "tx": tx, "ty": ty, "tz": tz,
        "threadIdx.x": tx, "threadIdx.y": ty, "threadIdx.z": tz,
        "blockDim.x": block[0], "blockDim.y": block[1], "blockDim.z": block[2],
    }
    for k, v in (variables or {}).items():
        if k in env:
            raise InputError(f"{k}={v}: {k!r} is set per lane; choose another name", option="var")
        env[k] = v
    return env


@dataclass(frozen=True)
class LaneAccess:
    lane: int
    index: int  # element index
    address: int  # byte offset from the array base
    banks: tuple[int, ...]  # banks of the 32-bit words it touches


@dataclass(frozen=True)
class Padding:
    """A padded row stride and what it gives."""

    stride: int  # elements per row now
    padded_stride: int
    expression: str
    conflict_way: int
    wavefronts: int
    extra_bytes_per_row: int

    def to_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


@dataclass(frozen=True)
class BankResult:
    expression: str
    elem_bytes: int
    accesses: tuple[LaneAccess, ...]
    phase_ways: tuple[int, ...]  # N-way of each phase (whole warp, half-warps or quarter-warps)
    padding: Optional[Padding]
    padding_note: str

    @property
    def conflict_way(self) -> int:
        """N-way conflict: the most distinct words one bank serves in one phase (1 = none)."""
        return max(self.phase_ways)

    @property
    def wavefronts(self) -> int:
        return sum(self.phase_ways)

    @property
    def ideal_wavefronts(self) -> int:
        return len(self.phase_ways)

    def to_dict(self) -> dict[str, Any]:
        return {
            "expression": self.expression,
            "elem_bytes": self.elem_bytes,
            "conflict_way": self.conflict_way,
            "wavefronts": self.wavefronts,
            "ideal_wavefronts": self.ideal_wavefronts,
            "phase_ways": list(self.phase_ways),
            "lanes": [
                {"lane": a.lane, "index": a.index, "address": a.address, "banks": list(a.banks)} for a in self.accesses
            ],
            "padding": self.padding.to_dict() if self.padding else None,
            "padding_note": self.padding_note,
        }


def _phase_ways(accesses: list[LaneAccess], elem_bytes: int) -> tuple[int, ...]:
    per_phase = LANES_PER_PHASE[elem_bytes]
    ways = []
    for start in range(0, WARP, per_phase):
        words_by_bank: dict[int, set[int]] = {}
        for acc in accesses[start:start + per_phase]:
            first = acc.address // WORD_BYTES
            last = (acc.address + elem_bytes - 1) // WORD_BYTES
            for w in range(first, last + 1):
                words_by_bank.setdefault(w % BANKS, set()).add(w)
        ways.append(max(len(s) for s in words_by_bank.values()))
    return tuple(ways)


def _accesses(expr: _Expr, elem_bytes: int, envs: list[dict[str, int]]) -> list[LaneAccess]:
    out = []
    for env in envs:
        idx = expr.evaluate(env)
        if idx < 0:
            raise InputError(f"{expr.text!r}: index {idx} at lane {env['lane']} is negative")
        addr = idx * elem_bytes
        words = range(addr // WORD_BYTES, (addr + elem_bytes - 1) // WORD_BYTES + 1)
        out.append(LaneAccess(env["lane"], idx, addr, tuple(sorted({w % BANKS for w in words}))))
    return out


_LANE_NAMES = frozenset(RESERVED_NAMES)


def _terms(node: ast.expr) -> list[ast.expr]:
    """The terms of a sum: a + b + c → [a, b, c]."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _terms(node.left) + _terms(node.right)
    return [node]


def _stride_site(tree: ast.expr, variables: Mapping[str, int]) -> Optional[tuple[ast.AST, int, str]]:
    """For ``row * STRIDE + col`` (any number of terms; ``row`` depends on the lane): the node holding
    STRIDE, its value and the row expression. STRIDE is an integer literal or a --var name."""
    for term in _terms(tree):
        if not (isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult)):
            continue
        for side, other in ((term.right, term.left), (term.left, term.right)):
            lane_dependent = any(_name_of(n) in _LANE_NAMES for n in ast.walk(other))
            if not lane_dependent:
                continue
            if isinstance(side, ast.Constant) and type(side.value) is int and side.value > 0:
                return side, side.value, ast.unparse(other)
            if isinstance(side, ast.Name) and side.id in variables and variables[side.id] > 0:
                return side, variables[side.id], ast.unparse(other)
    return None


def _with_stride(expr: _Expr, site: ast.AST, stride: int) -> _Expr:
    tree = copy.deepcopy(expr.tree)
    target = None
    for a, b in zip(ast.walk(expr.tree), ast.walk(tree)):
        if a is site:
            target = b
            break
    assert target is not None
    new = ast.Constant(stride)
    for parent in ast.walk(tree):
        if isinstance(parent, ast.BinOp):
            if parent.left is target:
                parent.left = new
            if parent.right is target:
                parent.right = new
    text = ast.unparse(tree)
    return _Expr(text, ast.fix_missing_locations(tree))


def _suggest_padding(
    expr: _Expr, elem_bytes: int, envs: list[dict[str, int]], variables: Mapping[str, int], current: tuple[int, ...]
) -> tuple[Optional[Padding], str]:
    if max(current) == 1:
        return None, "no conflict: nothing to pad"
    site = _stride_site(expr.tree, variables)
    if site is None:
        return None, "the index is not of the form row * STRIDE + col with a lane-dependent row, so no padding is suggested"
    node, stride, row = site
    best: Optional[Padding] = None
    # Try every pad up to one full row of banks (32 words) worth of elements.
    for pad in range(1, max(1, BANKS * WORD_BYTES // elem_bytes) + 1):
        cand = _with_stride(expr, node, stride + pad)
        ways = _phase_ways(_accesses(cand, elem_bytes, envs), elem_bytes)
        if best is None or sum(ways) < best.wavefronts:
            best = Padding(stride, stride + pad, cand.text, max(ways), sum(ways), pad * elem_bytes)
        if max(ways) == 1:
            break
    if best is None or best.wavefronts >= sum(current):
        return None, f"padding the row stride {stride} does not reduce the conflict (try an XOR swizzle)"
    return best, (
        f"stride of {row}: {stride} → {best.padded_stride} elements (pad each row of {stride} elements by "
        f"{best.padded_stride - stride}, +{best.extra_bytes_per_row} B per row)"
    )


def bank_conflicts(
    expression: str,
    elem_bytes: int = 4,
    *,
    variables: Optional[Mapping[str, int]] = None,
    row_length: Optional[int] = None,
    warp: int = 0,
    block: tuple[int, int, int] = (1024, 1, 1),
) -> BankResult:
    """Banks, N-way conflict and wavefronts of one warp's shared-memory access ``expression``
    (an element index, or ``As[row][col]`` with ``row_length``), and a padded alternative."""
    if elem_bytes not in ELEMENT_BYTES:
        raise InputError(f"{elem_bytes}: element size must be one of {', '.join(map(str, ELEMENT_BYTES))}", option="elem_bytes")
    threads = block[0] * block[1] * block[2]
    if min(block) < 1 or threads > 1024:
        raise InputError(f"{'x'.join(map(str, block))}: dimensions ≥ 1 and at most 1024 threads", option="block")
    if not 0 <= warp < max(1, -(-threads // WARP)):
        raise InputError(f"{warp}: a block of {threads} threads has warps 0..{-(-threads // WARP) - 1}", option="warp")
    variables = dict(variables or {})
    expr, _ = parse_index(expression, row_length)
    envs = [lane_env(lane, warp, block, variables) for lane in range(WARP)]
    accesses = _accesses(expr, elem_bytes, envs)
    ways = _phase_ways(accesses, elem_bytes)
    expr = _Expr(ast.unparse(expr.tree), expr.tree)  # name the index itself (As[r][c] → r * N + c)
    padding, note = _suggest_padding(expr, elem_bytes, envs, variables, ways)
    return BankResult(expression, elem_bytes, tuple(accesses), ways, padding, note)


def parse_var(text: str) -> tuple[str, int]:
    """``k=3`` → ("k", 3); InputError otherwise."""
    m = re.fullmatch(r"\s*([A-Za-z_]\w*(?:\.[xyz])?)\s*=\s*(-?\d+)\s*", text)
    if not m:
        raise InputError(f"{text!r}: expected NAME=INTEGER, e.g. k=3", option="var")
    return m.group(1), int(m.group(2))
