"""What every edit kind reads and returns: the finding's target, the files it may change,
and either an edit (the file's new text) or the reason no edit is mechanical."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import libcst as cst

from tfdiag.fix.outcome import Edit, NoEdit, Target
from tfdiag.fix.source import Source, read

__all__ = ["Edit", "EditFn", "Files", "NoEdit", "Target", "edited", "source_for"]


class Files:
    """The user's files an edit may read and change: those under ``root``, parsed once."""

    def __init__(self, root: Path, candidates: tuple[Path, ...] = ()) -> None:
        self.root = root.resolve()
        self._candidates = candidates
        self._parsed: dict[Path, Source | NoEdit] = {}

    def inside(self, path: Path) -> bool:
        try:
            path.resolve().relative_to(self.root)
        except ValueError:
            return False
        return True

    def get(self, file: str | Path) -> Source | NoEdit:
        """The parsed file, or why it cannot be edited (outside the tree, not Python)."""
        path = Path(file)
        path = (path if path.is_absolute() else self.root / path).resolve()
        if path in self._parsed:
            return self._parsed[path]
        found: Source | NoEdit
        if not self.inside(path):
            found = NoEdit(f"{path} is outside the script's folder: a library's file is not edited")
        elif path.suffix == ".ipynb":
            found = NoEdit(f"{path.name} is a notebook: its cells are not edited")
        elif not path.is_file():
            found = NoEdit(f"{path} is not a file here")
        else:
            try:
                found = Source(str(path), *read(path))
            except (UnicodeDecodeError, SyntaxError, cst.ParserSyntaxError) as exc:
                found = NoEdit(f"{path.name} does not parse ({type(exc).__name__})")
            except OSError as exc:
                found = NoEdit(f"{path.name} cannot be read ({exc.strerror or exc})")
        self._parsed[path] = found
        return found

    def sources(self) -> Iterator[Source]:
        """The candidate files that parse (the script and the user's files it ran)."""
        for path in self._candidates:
            found = self.get(path)
            if isinstance(found, Source):
                yield found


EditFn = Callable[[Files, Target], "Edit | NoEdit"]


def edited(source: Source, kind: str, line: int, new: cst.Module, summary: str) -> Edit:
    """The edit of ``source`` to the tree ``new``; ``line`` is both old and new line."""
    return Edit(kind, source.path, line, line, source.text, new.code, summary, source.encoding)


def source_for(files: Files, target: Target) -> Source | NoEdit:
    if not target.file or not target.line:
        return NoEdit("the finding names no line of your code")
    return files.get(target.file)


def statement_for(files: Files, target: Target) -> tuple[Source, cst.SimpleStatementLine] | NoEdit:
    """The file of the finding's line and the statement on it."""
    source = source_for(files, target)
    if isinstance(source, NoEdit):
        return source
    stmt = source.statement_at(target.line)
    if stmt is None:
        return NoEdit(f"line {target.line} is no statement")
    return source, stmt
