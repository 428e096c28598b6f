"""Catalog roles: what a function is to the detectors, given by rules (the framework files'
or the user's), asked for by the detectors instead of framework paths."""

from __future__ import annotations

import ast
import dataclasses
import io
import json
import tokenize
from pathlib import Path

import pytest
from synth import SITE, Node, make_report

import tfdiag
from tfdiag.advise.evidence import is_user_function
from tfdiag.analysis.pipeline import analyze
from tfdiag.records.catalog import (
    FRAMEWORK_FILES,
    ROLES,
    STACKS,
    Catalog,
    Category,
    Rule,
    default_catalog,
    frameworks,
)
from tfdiag.records.errors import InputError

ROOT = Path(__file__).resolve().parents[1] / "tfdiag"
N = 5
KERAS = SITE + "keras/src/"
TRAINER = KERAS + "backend/tensorflow/trainer.py"
CALLBACK_LIST = KERAS + "callbacks/callback_list.py"
ITERATOR = SITE + "tensorflow/python/data/ops/iterator_ops.py"
USER = "/home/me/mypkg/train.py"


def _asked_roles() -> dict[str, set[str]]:
    """Every role the detectors (advise/) and analysis/ ask for: the string argument of each
    ``with_role``/``has_role`` call, by module."""
    asked: dict[str, set[str]] = {}
    for path in [
        *sorted((ROOT / "advise").glob("*.py")),
        *sorted((ROOT / "analysis").glob("*.py")),
    ]:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in ("with_role", "has_role"):
                continue
            roles = [a.value for a in node.args if isinstance(a, ast.Constant) and a.value in ROLES]
            strings = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if any(isinstance(a, ast.Name) and a.id == "role" for a in node.args):
                continue  # a helper passing its own ``role`` on
            assert roles, f"{path.name}:{node.lineno}: {name} asks no known role ({strings})"
            asked.setdefault(path.name, set()).add(roles[0])
    return asked


def test_the_detectors_ask_roles_that_exist() -> None:
    asked = _asked_roles()
    assert {"calls.py", "data.py", "evidence.py", "graphs.py", "work.py"} <= set(asked)
    assert len(set().union(*asked.values())) >= 15


@pytest.mark.parametrize("stack", list(STACKS))
def test_every_role_a_detector_asks_for_is_given_in_each_supported_stack(stack: str) -> None:
    files = {f.name: f for f in frameworks()}
    given = {role for name in STACKS[stack] for rule in files[name].rules for role in rule.roles}
    asked = set().union(*_asked_roles().values())
    assert asked - given == set(), f"{stack}: no rule gives {sorted(asked - given)}"


def test_every_documented_role_is_given_by_some_rule_and_asked_for() -> None:
    given = {role for rule in default_catalog().rules for role in rule.roles}
    assert given == set(ROLES)
    assert set().union(*_asked_roles().values()) == set(ROLES)


def test_no_framework_path_is_quoted_in_the_detectors() -> None:
    """Framework knowledge lives in the catalog files: no string in advise/ names a
    TensorFlow or Keras module path."""
    quoted = []
    for path in sorted((ROOT / "advise").glob("*.py")):
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
        for tok in tokens:
            if tok.type == tokenize.STRING and any(
                p in tok.string for p in ("tensorflow/", "keras/", "/python/", "_ops.py")
            ):
                quoted.append(f"{path.name}:{tok.start[0]}: {tok.string[:60]}")
    assert quoted == []


@pytest.mark.parametrize(
    ("target", "own"),
    [
        ("keras.src.models.model.Model.predict", False),
        ("tensorflow.x.f", False),
        ("tf_keras.src.engine.training.Model.fit", False),
        ("mypkg.train.step", True),
    ],
)
def test_a_framework_files_modules_are_not_the_users_own(target: str, own: bool) -> None:
    report = make_report([Node(USER, "step", 1.0, N)], N, target=target, method="step")
    assert is_user_function(report) is own


def test_the_catalog_is_assembled_from_the_framework_files_in_order() -> None:
    assert [f.name for f in frameworks()] == list(FRAMEWORK_FILES)
    assert FRAMEWORK_FILES[-1] == "legacy"  # the TF 2.0-2.3 names never shadow current ones
    assert default_catalog().rules == tuple(r for f in frameworks() for r in f.rules)
    for stack in STACKS.values():
        assert set(stack) <= set(FRAMEWORK_FILES)


# -- roles are not first-match; role-only rules change no category ------------------------


def test_a_role_only_rule_changes_no_category_and_its_role_holds_under_any_rule() -> None:
    data = Rule("lib/data.py", "*", Category.INPUT_PIPELINE, "builds a pipeline")
    marked = Rule("lib/data.py", "make", None, "a builder", roles=frozenset({"pipeline-builder"}))
    user = Rule("lib/other.py", "f", None, "mine", roles=frozenset({"step"}))
    catalog = Catalog([marked, user, data])
    assert catalog.match("lib/data.py", "make") is data
    assert catalog.match("lib/other.py", "f") is None
    step = Node(SITE + "lib/other.py", "f", 1.0, N)
    make = Node(SITE + "lib/data.py", "make", 1.0, N)
    report = make_report([Node(TRAINER, "TensorFlowTrainer.predict", 0.0, N, [make, step])], N)
    report = dataclasses.replace(report, rules=(marked, user, data))
    a = analyze(report)
    names = [fn.name for fn in report.profile.functions]
    assert [names[i] for i in a.with_role("pipeline-builder", "make")] == ["make"]
    assert [names[i] for i in a.with_role("step")] == ["f"]
    assert a.rules[names.index("f")] is None  # still the user's code, not a culprit
    assert a.has_role(names.index("make"), "pipeline-builder")
    assert not a.has_role(names.index("f"), "pipeline-builder")
    # a built-in category rule's role holds too (the entry rule of Keras 3's predict)
    assert [names[i] for i in a.with_role("entry")] == ["TensorFlowTrainer.predict"]


# -- a user's rules file gives their own function a role ------------------------------------


def _fit_with_own_step(rules: tuple[Rule, ...]) -> tfdiag.Report:
    """One ``fit`` of 10 epochs of 2 steps, each step the user's own ``train_step`` (20 % of
    the time), the epochs' set-up the rest."""
    e, s = N * 10, N * 20
    children = [
        Node(USER, "train_step", 0.2 * N, s),
        Node(CALLBACK_LIST, "CallbackList.on_epoch_begin", 1e-5 * e, e),
        Node(CALLBACK_LIST, "CallbackList.on_train_batch_begin", 1e-5 * s, s),
        Node(ITERATOR, "OwnedIterator.__init__", 0.16 * N, e),
    ]
    fit = Node(TRAINER, "TensorFlowTrainer.fit", 0.64 * N, N, children)
    return dataclasses.replace(make_report([fit], N, cold=[], method="fit"), rules=rules)


def test_a_users_rules_file_marks_their_own_function_as_the_step(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(
        json.dumps([{"path": "*/mypkg/train.py", "function": "train_step", "roles": ["step"]}])
    )
    rules = tfdiag.load_rules(path)
    assert rules == (Rule("*/mypkg/train.py", "train_step", None, "", roles=frozenset({"step"})),)
    plain = _fit_with_own_step(())
    marked = _fit_with_own_step(rules)
    # Unmarked, the step's own work is not known: the whole fit is the epochs' overhead.
    assert plain.findings[0].id == "per-epoch-overhead"
    assert plain.findings[0].impact == pytest.approx(1.0, abs=0.01)
    # Marked, the user's step is the steps' work, which fixing the epochs would not remove.
    assert marked.findings[0].id == "per-epoch-overhead"
    assert marked.findings[0].impact == pytest.approx(0.8, abs=0.01)
    assert marked.findings[0].evidence[0].endswith("of which the steps themselves are 20 %")


# -- rules JSON -----------------------------------------------------------------------------


def test_rules_json_round_trips_roles_and_reads_the_old_entry_flag() -> None:
    rule = Rule("a.py", "f", Category.CALLBACKS, "why", claims=True, roles=frozenset({"callback"}))
    assert Rule.from_json(rule.to_json()) == rule
    role_only = Rule("a.py", "f", None, "", roles=frozenset({"step", "entry"}))
    assert "category" not in role_only.to_json()
    assert Rule.from_json(role_only.to_json()) == role_only
    old = {"path": "a.py", "function": "fit", "category": "other", "why": "", "entry": True}
    assert Rule.from_json(old).roles == frozenset({"entry"})
    assert Rule.from_json(old).entry


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"path": "a.py", "function": "f", "roles": ["stepp"]}, "unknown role 'stepp'"),
        ({"path": "a.py", "function": "f", "roles": "step"}, "'roles' must be a list"),
        ({"path": "a.py", "function": "f", "roles": [1]}, "'roles' must be a list"),
        ({"path": "a.py", "function": "f"}, "missing 'category'"),
        ({"path": "a.py", "function": "f", "roles": []}, "missing 'category'"),
    ],
)
def test_a_bad_role_in_a_rules_file_is_one_clear_line(data: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        Rule.from_json(data)


def test_a_saved_report_keeps_the_users_roles(tmp_path: Path) -> None:
    rule = Rule("*/mypkg/train.py", "train_step", None, "mine", roles=frozenset({"step"}))
    report = _fit_with_own_step((rule,))
    path = tmp_path / "run.tfdiag.json"
    report.save(path)
    loaded = tfdiag.load_result(path)
    assert isinstance(loaded, tfdiag.Report)
    assert loaded.rules == (rule,)
    assert [f.impact for f in loaded.findings] == [f.impact for f in report.findings]


def test_the_rules_example_in_the_catalog_doc_loads(tmp_path: Path) -> None:
    from tfdiag.render.catalog_doc import catalog_markdown

    text = catalog_markdown().split("## Your own rules", 1)[1]
    example = text.split("```json\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "rules.json"
    path.write_text(example)
    rules = tfdiag.load_rules(path)
    assert [r.category for r in rules] == [Category.INPUT_PIPELINE, None]
    assert rules[1].roles == frozenset({"step"})
