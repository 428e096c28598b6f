"""IPython / Jupyter magics: ``%load_ext tfdiag``, then ``%tfdiag`` and ``%%tfdiag``.

``%tfdiag model.predict(X)`` evaluates the callable and its arguments once in the
notebook's namespace and profiles the call itself (so the report knows it is a
``predict`` and advises on it); any other statement, and a ``%%tfdiag`` cell, is
profiled as a whole, re-run on each iteration. The report renders with rich, as
HTML in a notebook and as text in a terminal. Imported by
:func:`tfdiag.load_ipython_extension` only.
"""

from __future__ import annotations

import argparse
import ast
from dataclasses import replace
from typing import Any, NoReturn

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from tfdiag.frontends.api import profile
from tfdiag.measure.budget import DEFAULT_BUDGET_S
from tfdiag.records.errors import InputError
from tfdiag.results.load import report_from_stats
from tfdiag.results.report import Report

USAGE = (
    "%tfdiag [-n ITERATIONS] [-o VAR] [--save PATH] [--force] [-q] [--verify] model.predict(x)  |  "
    "%%tfdiag [options] on the first line of a cell"
)
_VALUE_OPTIONS = frozenset({"-n", "--iterations", "-o", "--out-var", "--save", "--verify-s"})


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"%tfdiag: {message} (usage: {USAGE})")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="%tfdiag", add_help=False)
    p.add_argument("-n", "--iterations", type=int, default=20)
    p.add_argument("-o", "--out-var", dest="out_var")
    p.add_argument("--save")
    p.add_argument("--force", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true")
    p.add_argument("--full", action="store_true")
    p.add_argument("--verify", action="store_true")
    p.add_argument("--verify-s", dest="verify_s", type=float, default=DEFAULT_BUDGET_S)
    return p


def split_options(line: str) -> tuple[list[str], str]:
    """Leading ``-x [value]`` tokens, and the rest of the line untouched."""
    tokens: list[str] = []
    rest = line.strip()
    while rest.startswith("-"):
        head, _, rest = rest.partition(" ")
        rest = rest.lstrip()
        name, eq, value = head.partition("=")
        tokens.append(head)
        if name in _VALUE_OPTIONS and not eq:
            value, _, rest = rest.partition(" ")
            tokens.append(value)
            rest = rest.lstrip()
    return tokens, rest


def _evaluate(node: ast.expr, ns: dict[str, Any]) -> Any:
    expr = ast.fix_missing_locations(ast.Expression(body=node))
    return eval(compile(expr, "<%tfdiag>", "eval"), ns)


def call_parts(
    statement: str, ns: dict[str, Any]
) -> tuple[Any, tuple[Any, ...], dict[str, Any]] | None:
    """``f(a, *b, k=c, **d)`` → (f, args, kwargs), each evaluated once in ``ns``.

    None when ``statement`` is not a single call expression.
    """
    try:
        tree = ast.parse(statement.strip(), mode="eval")
    except SyntaxError:
        return None
    call = tree.body
    if not isinstance(call, ast.Call):
        return None
    fn = _evaluate(call.func, ns)
    args: list[Any] = []
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            args.extend(_evaluate(arg.value, ns))
        else:
            args.append(_evaluate(arg, ns))
    kwargs: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            kwargs.update(_evaluate(kw.value, ns))
        else:
            kwargs[kw.arg] = _evaluate(kw.value, ns)
    return fn, tuple(args), kwargs


#: Keras methods that print a progress bar per call unless given ``verbose``.
_CHATTY = ("predict", "fit", "evaluate")


def quiet_keras(fn: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with ``verbose=0`` for a Keras ``predict``/``fit``/``evaluate`` called
    without ``verbose``: profiled 20 times, each call would print its own progress bar."""
    owner = getattr(fn, "__self__", None)
    keras_model = owner is not None and callable(getattr(owner, "compile", None))
    if keras_model and getattr(fn, "__name__", "") in _CHATTY and "verbose" not in kwargs:
        return {**kwargs, "verbose": 0}
    return kwargs


def profile_code(source: str, ns: dict[str, Any], *, iterations: int, label: str) -> Report:
    """Profile running ``source`` in ``ns``, once per iteration; the report names the
    Keras method it spent the most time in."""
    code = compile(source, "<%%tfdiag>", "exec")

    def cell() -> None:
        exec(code, ns)

    report = profile(cell, iterations=iterations)
    found = report_from_stats(report.profile, name=label, iterations=iterations, scope=False).call
    inside = f" → {found.label}" if found.method else ""
    call = replace(found, label=f"{label}{inside}", target="")
    return replace(report, call=call)


def _transform(shell: Any, source: str) -> str:
    """IPython syntax (``!cmd``, nested magics) → plain Python, as ``%%timeit`` does."""
    return str(shell.transform_cell(source))


@magics_class
class TfdiagMagics(Magics):
    """``%tfdiag`` (line) and ``%%tfdiag`` (cell)."""

    @line_cell_magic
    def tfdiag(self, line: str, cell: str | None = None) -> None:
        """Profile a call (line) or a cell with tfdiag and show why it is slow.

        Options: -n ITERATIONS (default 20) · -o VAR (store the report in VAR) ·
        --save PATH (.tfdiag.json + .prof) · --force (replace a saved report) ·
        -q (do not show the report) · --full (the whole report, not only its findings) ·
        --verify (line magic on a call: measure each finding's mechanical fix against it,
        docs/verify.md) · --verify-s SECONDS (its budget). The cell shows the short view (the
        findings) by default; ``-o rep`` then ``rep.show()`` prints the whole report.
        """
        tokens, statement = split_options(line)
        opts = _parser().parse_args(tokens)
        if opts.out_var is not None and not opts.out_var.isidentifier():
            raise UsageError(f"%tfdiag: -o needs a variable name, got {opts.out_var!r}")
        shell = self.shell
        if shell is None:
            raise UsageError("%tfdiag runs inside IPython only")
        ns = shell.user_ns
        try:
            if cell is None:
                if not statement:
                    raise UsageError(f"%tfdiag: nothing to profile (usage: {USAGE})")
                source = _transform(shell, statement)
                parts = call_parts(source, ns)
                if parts is not None:
                    fn, args, kwargs = parts
                    kwargs = quiet_keras(fn, kwargs)
                    report = profile(
                        fn,
                        *args,
                        iterations=opts.iterations,
                        verify=opts.verify,
                        verify_s=opts.verify_s,
                        **kwargs,
                    )
                else:
                    if opts.verify:
                        raise UsageError(
                            "%tfdiag: --verify needs a single call (model.predict(x)): "
                            "tfdiag re-runs its fixes on that call"
                        )
                    label = statement if len(statement) <= 40 else statement[:39] + "…"
                    report = profile_code(source, ns, iterations=opts.iterations, label=label)
            else:
                if opts.verify:
                    raise UsageError("%%tfdiag: --verify works on a line magic's single call")
                if statement:
                    raise UsageError(f"%%tfdiag: unexpected {statement!r} (usage: {USAGE})")
                source = _transform(shell, cell)
                report = profile_code(source, ns, iterations=opts.iterations, label="cell")
            if opts.save:
                written = report.save(opts.save, overwrite=opts.force)
                print("saved " + ", ".join(str(p) for p in written))
        except InputError as exc:
            raise UsageError(f"tfdiag: {exc}") from None
        if opts.out_var:
            ns[opts.out_var] = report
        if not opts.quiet:
            report.show(brief=not opts.full)


def register(ipython: Any) -> None:
    ipython.register_magics(TfdiagMagics)
