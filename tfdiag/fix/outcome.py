"""What an edit kind reads and returns, as plain data: the finding's target, and either
an edit (the file's new text) or the reason no edit is mechanical.

Nothing here imports libcst, so a report that holds proposals (``tfdiag.results``)
loads the syntax-tree library only when it proposes (:mod:`tfdiag.fix.propose`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """The finding an edit answers and the user's line it names.

    ``file`` is an absolute path ("" when the finding names no line: a debugging switch
    the record shows on but could not place); ``remedy`` is the finding's remedy key
    (``construct:tf.function``, ``debug-switch:run-eagerly``); ``evidence`` its evidence
    lines, read as data (the retraced function and argument they name).
    """

    finding: str
    remedy: str
    file: str = ""
    line: int = 0
    code: str = ""
    api: str = ""
    function: str = ""
    function_line: int = 0
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class Edit:
    """One file's new text. ``line`` is the line of the original the edit is about and
    ``new_line`` where that code is in the new text (the site ``tfdiag fix`` times).
    ``encoding`` is the file's (``utf-8-sig`` with a BOM): ``before`` encoded in it is
    the file's bytes, ``after`` encoded in it the bytes written. ``same_call`` is False
    where one call of the new code does the work of many calls of the old (one ``fit`` of
    every epoch): its time per call is no measure, the script's is."""

    kind: str
    file: str
    line: int
    new_line: int
    before: str
    after: str
    summary: str
    encoding: str = "utf-8"
    same_call: bool = True

    @property
    def old_bytes(self) -> bytes:
        return self.before.encode(self.encoding)

    @property
    def new_bytes(self) -> bytes:
        return self.after.encode(self.encoding)


@dataclass(frozen=True)
class NoEdit:
    """Why no edit is offered: one sentence the user reads under the finding's advice."""

    reason: str
