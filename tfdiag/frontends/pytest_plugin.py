"""The pytest plugin (entry point ``pytest11``: ``tfdiag``): the ``tfdiag_check`` fixture,
the ``tfdiag`` marker, the ``--tfdiag-dir`` option and the ``tfdiag_*`` ini options.

::

    def test_predict_stays_fast(tfdiag_check):
        report = tfdiag_check(model.predict_on_batch, x)

fails the test when the run has a forbidden finding (by default every finding a Python-side
change fixes, at severity medium or above: docs/ci.md), with the finding's id, title,
evidence and fix in the message; the report is saved under ``--tfdiag-dir`` (else the
test's ``tmp_path``), one file set per test. Settings, the first given wins: the call's
arguments, the ``@pytest.mark.tfdiag(...)`` markers (the test's, its class's, its module's),
the ini options, the defaults.

Loading the plugin imports neither TensorFlow nor the profiler: only a test that uses the
fixture does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tfdiag.results.report import Report

_MARKER = "tfdiag"
#: Longest readable part of a report's file name stem kept from a test's node id.
_MAX_STEM = 120
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tfdiag", "tfdiag performance checks")
    group.addoption(
        "--tfdiag-dir",
        default=None,
        help="save each tfdiag_check report here (<test id>.tfdiag.json); default: the "
        "test's tmp_path",
    )
    parser.addini("tfdiag_dir", "folder for tfdiag_check reports (like --tfdiag-dir)")
    parser.addini(
        "tfdiag_forbid",
        "finding ids tfdiag_check fails on (default: every Python-side finding)",
        type="args",
    )
    parser.addini("tfdiag_iterations", "tfdiag_check's iterations (default 10)")
    parser.addini(
        "tfdiag_severity", "lowest severity that fails (low, medium, high; default medium)"
    )
    parser.addini("tfdiag_tf_profiler", "trace with the TF profiler (true/false; default false)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "tfdiag(forbid=[...], iterations=N, severity='medium', tf_profiler=False): "
        "tfdiag_check's settings for these tests",
    )


def report_stem(nodeid: str, check: int = 1) -> str:
    """A file name stem for a test's ``check``-th ``tfdiag_check``: ``tests/test_x.py::test_y[a]``
    → ``tests_test_x.py__test_y_a-<hash>``, the second check ``…_a-2-<hash>``.

    The readable part loses what a file name cannot hold (``[batch 32]`` and ``[batch_32]``
    read alike); the hash, of the node id and the check's number, keeps every pair of
    checks apart — also on a case-insensitive file system — and is the same in every run.
    """
    import hashlib

    stem = _UNSAFE.sub("_", nodeid.replace("::", "__")).strip("_.") or "test"
    stem = stem[:_MAX_STEM]
    if check > 1:
        stem += f"-{check}"
    digest = hashlib.sha1(f"{nodeid}\0{check}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"{stem}-{digest[:10]}"


def _flag(text: str, name: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise pytest.UsageError(f"{name}: expected true or false, got {text!r}")


def _as_flag(value: object) -> bool:
    """``tf_profiler`` as given to a marker or the call: a bool, or a word ``"false"``/
    ``"off"``/``"true"``... (``bool("false")`` is True: the profiler went on)."""
    from tfdiag.records.errors import InputError

    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ("1", "true", "yes", "on"):
            return True
        if word in ("0", "false", "no", "off"):
            return False
    raise InputError(f"tf_profiler: expected True or False, got {value!r}")


def _ini_settings(config: pytest.Config) -> dict[str, Any]:
    out: dict[str, Any] = {}
    forbid = [f for f in config.getini("tfdiag_forbid") if f.strip()]
    if forbid:  # unset or empty: the default set (forbid nothing with the marker's forbid=[])
        out["forbid"] = forbid
    iterations = str(config.getini("tfdiag_iterations")).strip()
    if iterations:
        try:
            out["iterations"] = int(iterations)
        except ValueError:
            raise pytest.UsageError(f"tfdiag_iterations: not an integer: {iterations!r}") from None
    severity = str(config.getini("tfdiag_severity")).strip()
    if severity:
        out["severity"] = severity
    tf_profiler = str(config.getini("tfdiag_tf_profiler")).strip()
    if tf_profiler:
        out["tf_profiler"] = _flag(tf_profiler, "tfdiag_tf_profiler")
    return out


_SETTINGS = ("forbid", "iterations", "severity", "tf_profiler")


class Checker:
    """What the ``tfdiag_check`` fixture gives a test: call it like ``tfdiag.profile``."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._request = request
        self._calls = 0

    def settings(self) -> dict[str, Any]:
        """The ini's settings, then the ``tfdiag`` markers' from the farthest (a module's
        ``pytestmark``) to the closest (the test's own), each overriding the last."""
        out = _ini_settings(self._request.config)
        for marker in reversed(list(self._request.node.iter_markers(_MARKER))):
            if marker.args:
                raise pytest.UsageError("@pytest.mark.tfdiag takes keyword arguments only")
            unknown = set(marker.kwargs) - set(_SETTINGS)
            if unknown:
                raise pytest.UsageError(
                    f"@pytest.mark.tfdiag: unknown setting(s) {', '.join(sorted(unknown))} "
                    f"(it takes {', '.join(_SETTINGS)})"
                )
            out.update(marker.kwargs)
        return out

    def _folder(self) -> Path:
        config = self._request.config
        given = config.getoption("--tfdiag-dir") or str(config.getini("tfdiag_dir")).strip()
        if given:
            folder = Path(given)
            if not folder.is_absolute():
                folder = Path(config.invocation_params.dir) / folder
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a file there, no permission: one line, not a traceback
                pytest.fail(
                    f"tfdiag_check: --tfdiag-dir {given!r} cannot be a folder "
                    f"({exc.strerror or exc})",
                    pytrace=False,
                )
            return folder
        tmp: Path = self._request.getfixturevalue("tmp_path")
        return tmp

    def __call__(
        self,
        fn: Callable[..., Any],
        *args: Any,
        iterations: int | None = None,
        forbid: list[str] | tuple[str, ...] | None = None,
        severity: str | None = None,
        tf_profiler: bool | None = None,
        **kwargs: Any,
    ) -> Report:
        """Profile ``fn(*args, **kwargs)`` and fail the test on a forbidden finding.

        Args:
            iterations: calls after the cold one in each pass (default 10).
            forbid: finding ids that fail the test (default: every Python-side finding,
                docs/ci.md); ``[]``: none (the report is still saved and returned).
            severity: the lowest severity that fails: ``low``, ``medium`` (default), ``high``.
            tf_profiler: also trace with the TF profiler (default False: a second or so).

        Returns:
            the report, when no forbidden finding is present.

        Raises:
            ForbiddenFinding: an AssertionError naming each forbidden finding (id, title,
                evidence, fix) and where the report was saved.
        """
        __tracebackhide__ = True
        from tfdiag.advise.guards import check_forbid, check_severity
        from tfdiag.capture.guard import (
            DEFAULT_ITERATIONS,
            DEFAULT_SEVERITY,
            ForbiddenFinding,
            check_call,
        )
        from tfdiag.capture.plan import check_iterations
        from tfdiag.records.errors import InputError

        given = {"forbid": forbid, "iterations": iterations, "severity": severity}
        given["tf_profiler"] = tf_profiler
        merged = self.settings()
        merged.update({k: v for k, v in given.items() if v is not None})
        try:  # a mistake in the settings: one line, before the call runs
            check_iterations(merged.get("iterations", DEFAULT_ITERATIONS))
            check_severity(merged.get("severity", DEFAULT_SEVERITY))
            if merged.get("forbid") is not None:
                check_forbid(merged["forbid"])
            tf_profiler = _as_flag(merged.get("tf_profiler", False))
        except InputError as exc:
            pytest.fail(f"tfdiag_check: {exc}", pytrace=False)
        self._calls += 1
        stem = report_stem(self._request.node.nodeid, self._calls)
        try:
            return check_call(
                fn,
                args,
                kwargs,
                iterations=merged.get("iterations", DEFAULT_ITERATIONS),
                forbid=merged.get("forbid"),
                severity=merged.get("severity", DEFAULT_SEVERITY),
                tf_profiler=tf_profiler,
                save=self._folder() / stem,
            )
        except ForbiddenFinding as exc:  # the test's line, then the message: no tfdiag frames
            raise exc.with_traceback(None) from None


@pytest.fixture
def tfdiag_check(request: pytest.FixtureRequest) -> Checker:
    """``tfdiag_check(fn, *args, iterations=10, forbid=[...], **kwargs)``: profile the call
    and fail the test on a forbidden finding; returns the report (docs/ci.md)."""
    return Checker(request)
