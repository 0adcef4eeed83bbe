"""User-facing errors.

Anything a user can cause (a wrong file, a missing tool, an impossible size) is raised as a
``UserError`` carrying one line that names the input and what was expected. The CLI prints that
line to stderr and exits with ``code`` — never a traceback.

Library code names a bad argument by its parameter (``option="launch_skip"``), not by a command-line
flag: the message reads ``launch_skip -1: expected 0 or more`` to a Python caller, and the CLI,
which knows the command that ran, shows the flag instead (``--launch-skip -1: ...``).
"""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input or environment, reported as one line."""

    def __init__(self, message: str, code: int = 2, *, option: str | None = None) -> None:
        super().__init__(message)
        self.detail = message  # the message without the argument's name
        self.option = option  # the parameter it is about, when one is (named first in the message)
        self.code = code

    @property
    def message(self) -> str:
        return self.named(self.option)

    def named(self, name: str | None) -> str:
        """The message, naming the argument as ``name`` (a flag, for the CLI)."""
        return f"{name} {self.detail}" if name else self.detail

    def __str__(self) -> str:
        return self.message


class InputError(UserError):
    """A file or argument is not what was expected (exit code 2)."""


class ToolMissing(UserError):
    """An external tool (ncu, nvcc, a GPU, CuPy) is not available (exit code 3)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code=3)
