"""The function index answers the detectors' (path glob, name glob) questions exactly as a
scan of the table with ``fnmatch`` would, and is built once per record however many
detectors ask; the attribution's shortcuts give what its plain walk gives."""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Callable

import pytest
from synth import SITE, keras3_predict_report
from tf20_fixture import tf20_predict_stats

from tfdiag.advise import advise
from tfdiag.analysis.attribute import _OTHER, Dist, _mix, edge_weights, propagate
from tfdiag.analysis.pipeline import analyze
from tfdiag.records import index as index_module
from tfdiag.records.catalog import Category, Rule, default_catalog
from tfdiag.records.function_stat import CallerEdge, FunctionStat, builtin_name
from tfdiag.records.index import FunctionIndex, glob_matcher, globs_matcher
from tfdiag.records.paths import normalize_path


def _scan(fns: list[FunctionStat], path: str, name: str) -> list[int]:
    """What evidence.functions did before the index: a scan with fnmatch."""
    return [
        i
        for i, fn in enumerate(fns)
        if fnmatch.fnmatchcase(normalize_path(fn.file), path)
        and (
            fnmatch.fnmatchcase(fn.name, name)
            or fnmatch.fnmatchcase(fn.name.rsplit(".", 1)[-1], name)
        )
    ]


FILES = [
    "~",
    SITE + "keras/src/backend/tensorflow/trainer.py",
    SITE + "keras/src/callbacks/callback_list.py",
    SITE + "tf_keras/src/callbacks.py",
    "C:\\venv\\Lib\\site-packages\\tensorflow\\python\\keras\\engine\\training_v1.py",
    SITE + "tensorflow/python/data/ops/iterator_ops.py",
    "/home/me/train.py",
    "<string>",
]
NAMES = [
    "TensorFlowTrainer.predict",
    "TensorFlowTrainer.fit",
    "CallbackList.on_train_batch_begin",
    "CallbackList.on_epoch_begin",
    "OwnedIterator.__init__",
    "OwnedIterator._create_iterator",
    "<built-in method tensorflow.python._pywrap_tfe.TFE_Py_Execute>",
    "Model.train_on_batch",
    "step",
    "a[b]",
]
QUESTIONS = [
    ("keras/src/backend/tensorflow/trainer.py", "predict"),
    ("keras/src/backend/tensorflow/trainer.py", "*_on_batch"),
    ("*/python/keras/engine/training*.py", "fit"),
    ("keras/src/callbacks/callback_list.py", "*CallbackList.on_train_batch_begin"),
    ("tf_keras/src/callbacks.py", "CallbackList.on_*"),
    ("~", "*TFE_Py_Execute*"),
    ("tensorflow/python/data/ops/iterator_ops.py", "*.__init__"),
    ("*", "step"),
    ("*train.py", "s?ep"),
    ("*", "a[[]b]"),
    ("keras/*", "[!C]*"),
    ("nowhere.py", "*"),
]


def test_the_index_answers_as_a_fnmatch_scan_does() -> None:
    rng = random.Random(1)
    fns = [
        FunctionStat(rng.choice(FILES), i, rng.choice(NAMES), 1, 1, 0.0, 0.0) for i in range(400)
    ]
    index = FunctionIndex(fns)
    for path, name in QUESTIONS:
        expected = _scan(fns, path, name)
        assert list(index.find(path, name)) == expected, (path, name)
        assert index.find(path, name) is index.find(path, name)  # answered once
    assert any(index.find(p, n) for p, n in QUESTIONS)


@pytest.mark.parametrize("glob", ["*", "a*b", "a?c", "[ab]x", "[!a]x", "x[", "a.b", "lit"])
def test_a_compiled_glob_is_fnmatchcase(glob: str) -> None:
    for text in ["", "ab", "acb", "abc", "ax", "bx", "cx", "x[", "a.b", "axb", "lit", "a/b"]:
        assert glob_matcher(glob)(text) == fnmatch.fnmatchcase(text, glob), (glob, text)
        assert globs_matcher((glob, "zz"))(text) == (
            fnmatch.fnmatchcase(text, glob) or text == "zz"
        )


def test_findings_build_the_index_once_per_record(monkeypatch: pytest.MonkeyPatch) -> None:
    built = []
    original = index_module.FunctionIndex.__init__

    def counting(self: FunctionIndex, functions: object) -> None:
        built.append(1)
        original(self, functions)  # type: ignore[arg-type]

    monkeypatch.setattr(index_module.FunctionIndex, "__init__", counting)
    report = keras3_predict_report()
    found = advise(report, analyze(report))
    assert [f.id for f in found] == ["per-call-input-pipeline"]
    assert len(built) == 1  # dozens of questions, one index


def _first_rule(rules: tuple[Rule, ...], file: str, name: str) -> Rule | None:
    """The catalog's contract, the slow way: the first rule with a category whose globs
    match (a role-only rule decides no category)."""
    names = {name, name.rsplit(".", 1)[-1]}
    if name.startswith("<"):
        short = builtin_name(name).strip("{}")
        names |= {short, short.rsplit(".", 1)[-1]}
    path = normalize_path(file)
    for rule in rules:
        if rule.category is None:
            continue
        if fnmatch.fnmatchcase(path, rule.path) and any(
            fnmatch.fnmatchcase(n, rule.function) for n in names
        ):
            return rule
    return None


def test_the_catalogs_one_matcher_per_file_picks_the_first_matching_rule() -> None:
    user = Rule("keras/src/backend/tensorflow/trainer.py", "*.predict", Category.USER_CODE, "")
    catalog = default_catalog().with_rules([user])
    fns = [*tf20_predict_stats().functions, *keras3_predict_report().profile.functions]
    pairs = [(fn.file, fn.name) for fn in fns]
    pairs += [(f, n) for f in FILES for n in NAMES]
    matched = 0
    for file, name in pairs:
        expected = _first_rule(catalog.rules, file, name)
        assert catalog.match(file, name) is expected, (file, name)
        matched += expected is not None
    assert matched > 20
    assert catalog.match(FILES[1], "TensorFlowTrainer.predict") is user  # user rules first


def _walk(fns: list[FunctionStat], direct: Callable[[int], Dist | None]) -> list[Dist]:
    """The attribution's walk without its one-step settling: the reference it must match."""
    result: list[Dist | None] = [None] * len(fns)
    in_progress = [False] * len(fns)
    for start in range(len(fns)):
        stack = [start]
        while stack:
            i = stack[-1]
            if result[i] is not None:
                stack.pop()
                continue
            d = direct(i)
            if d is not None or not fns[i].callers:
                result[i] = d if d is not None else _OTHER
                stack.pop()
                continue
            pending = [
                e.caller
                for e in fns[i].callers
                if result[e.caller] is None and not in_progress[e.caller]
            ]
            if pending and not in_progress[i]:
                in_progress[i] = True
                stack.extend(pending)
                continue
            known = [r for e in fns[i].callers if (r := result[e.caller]) is not None]
            if not known:
                result[i] = _OTHER
            elif all(d is known[0] for d in known):
                result[i] = known[0]
            else:
                weights = edge_weights(fns[i])
                result[i] = _mix(
                    [
                        (w, r)
                        for w, e in zip(weights, fns[i].callers)
                        if (r := result[e.caller]) is not None
                    ]
                )
            in_progress[i] = False
            stack.pop()
    return [r if r is not None else _OTHER for r in result]


def test_settling_a_function_in_one_step_gives_what_the_walk_gives() -> None:
    """Random call graphs with cycles and self-calls (recursion): where a cycle is cut
    depends on the order the walk reaches it, and the one-step settling keeps that order."""
    cats = list(Category)
    for seed in range(400):
        rng = random.Random(seed)
        n = rng.randint(1, 25)
        times = (0.0, rng.random(), rng.random())
        fns = [
            FunctionStat(
                "f.py",
                i,
                "f",
                1,
                1,
                0.1,
                0.1,
                tuple(
                    CallerEdge(
                        rng.randrange(n),
                        rng.randint(0, 3),
                        1,
                        rng.choice(times),
                        0.0,
                    )
                    for _ in range(rng.randint(0, 3))
                ),
            )  # fmt: skip
            for i in range(n)
        ]
        own: dict[int, Dist] = {i: {rng.choice(cats): 1.0} for i in range(n) if rng.random() < 0.25}
        own.update({i: _OTHER for i in range(n) if rng.random() < 0.1})
        assert propagate(fns, own.get) == _walk(fns, own.get), seed
