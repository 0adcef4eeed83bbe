"""User-facing errors.

Anything a user can cause (a wrong file, a missing tool, an impossible size) is raised as a
``UserError`` carrying one line that names the input and what was expected. The CLI prints that
line to stderr and exits with ``code`` — never a traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input or environment, reported as one line."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def __str__(self) -> str:
        return self.message


class InputError(UserError):
    """A file or argument is not what was expected (exit code 2)."""


class ToolMissing(UserError):
    """An external tool (ncu, nvcc, a GPU, CuPy) is not available (exit code 3)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code=3)
