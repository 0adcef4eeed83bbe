"""Small integer expressions of the problem's shape, for a user kernel's launch geometry.

``grid=cdiv(N, 64), cdiv(M, 64)``, ``smem=(BM + BN) * BK * 4``, ``requires=K % 4 == 0``: the names
are M, N, K and the constants the declaration defines (``BM=64``). Division is C's integer division
(a launch geometry is integers; ``cdiv`` rounds up). Only arithmetic, comparisons, ``and``/``or``/
``not`` and the functions in ``FUNCTIONS`` are allowed: the text comes from a user's file, and
``eval`` would run anything in it.
"""

from __future__ import annotations

import ast
import operator
from typing import Mapping

from gemmlab.errors import InputError


def cdiv(a: int, b: int) -> int:
    """Ceiling division, what CUDA code spells ``(a + b - 1) / b``."""
    if b == 0:
        raise ZeroDivisionError("cdiv by zero")
    return -(-a // b)


FUNCTIONS = {"cdiv": cdiv, "ceil_div": cdiv, "min": min, "max": max}

_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: lambda a, b: _cdivide(a, b), ast.FloorDiv: lambda a, b: _cdivide(a, b),
    ast.Mod: lambda a, b: _cmod(a, b),
}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}


def _cdivide(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("division by zero")
    q = abs(a) // abs(b)  # C truncates toward zero
    return q if (a >= 0) == (b >= 0) else -q


def _cmod(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("modulo by zero")
    return a - b * _cdivide(a, b)


MAX_CHARS = 500  # a launch expression is a line; a longer text is a mistake (and could nest past the stack)


def parse(text: str, what: str) -> ast.expr:
    """The expression's tree, refused (naming ``what``) when it holds anything but the allowed forms."""
    src = str(text).strip()
    if len(src) > MAX_CHARS:
        raise InputError(f"{what}: an expression of {len(src)} characters; expected at most {MAX_CHARS}")
    try:
        tree = ast.parse(src.replace("&&", " and ").replace("||", " or "), mode="eval").body
    except (SyntaxError, RecursionError):
        raise InputError(f"{what}: {text!r} is not an expression of M, N, K and constants") from None
    for node in ast.walk(tree):
        ok = isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.Name, ast.Load,
                               ast.Constant, ast.Call, ast.operator, ast.boolop, ast.USub, ast.UAdd, ast.Not))
        ok = ok or type(node) in _COMPARE  # ==, !=, <, <=, >, >= only (not in / is)
        if isinstance(node, ast.Constant) and (isinstance(node.value, bool) or not isinstance(node.value, int)):
            ok = False
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
                                               and not node.keywords):
            ok = False
        if isinstance(node, ast.BinOp) and type(node.op) not in _BINARY:
            ok = False
        if not ok:
            raise InputError(f"{what}: {text!r}: only integers, M, N, K, declared constants, + - * / % "
                             f"comparisons, and/or/not and {', '.join(FUNCTIONS)}() are allowed")
    return tree


def evaluate(text: str, names: Mapping[str, int], what: str) -> int:
    """The integer value of ``text`` with ``names`` bound (a comparison gives 1 or 0)."""
    tree = parse(text, what)

    def ev(node: ast.expr) -> int:
        if isinstance(node, ast.Constant):
            return int(node.value)
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise InputError(f"{what}: {text!r} uses {node.id!r}; known names: {', '.join(sorted(names))}")
            return int(names[node.id])
        if isinstance(node, ast.UnaryOp):
            v = ev(node.operand)
            if isinstance(node.op, ast.USub):
                return -v
            if isinstance(node.op, ast.Not):
                return int(not v)
            return v
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.BoolOp):
            vals = [ev(v) for v in node.values]
            return int(all(vals) if isinstance(node.op, ast.And) else any(vals))
        if isinstance(node, ast.Compare):
            left = ev(node.left)
            for op, right_node in zip(node.ops, node.comparators):
                right = ev(right_node)
                if not _COMPARE[type(op)](left, right):
                    return 0
                left = right
            return 1
        if isinstance(node, ast.Call):
            return int(FUNCTIONS[node.func.id](*[ev(a) for a in node.args]))
        raise InputError(f"{what}: cannot evaluate {ast.dump(node)}")  # parse() lets nothing else through

    try:
        return ev(tree)
    except RecursionError:
        raise InputError(f"{what}: {text!r} nests too deeply") from None
    except ZeroDivisionError as e:
        raise InputError(f"{what}: {text!r} divides by zero at {_show(names)} ({e})") from None
    except TypeError as e:  # a function called with the wrong number of arguments
        raise InputError(f"{what}: {text!r}: {e}") from None


def _show(names: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in names.items() if k in ("M", "N", "K"))


def split_top(text: str) -> list[str]:
    """``"cdiv(N,64), cdiv(M,64)"`` → the two expressions: commas inside parentheses stay."""
    parts, depth, cur = [], 0, []
    for ch in str(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur).strip())
    return [p for p in parts if p]
