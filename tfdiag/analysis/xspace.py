"""A JAX profiler trace (XSpace) read into a :class:`JaxProfile`, without TensorFlow.

The XSpace is a protobuf; TensorFlow's ``xplane_pb2`` would import TensorFlow into a JAX
program, and xprof's converters give empty tables for XLA:CPU ops, so the few fields tfdiag
reads are decoded here from the wire format (``tsl/profiler/protobuf/xplane.proto`` and
``xla/service/hlo.proto``, field numbers checked against the generated descriptors):

- ``/host:CPU``: the ``tfdiag-step`` annotations (one per traced call), the ``PjitFunction(f)``
  events of Python calling a compiled program, and each XLA op the PjRt CPU client ran (an
  event with an ``hlo_op`` stat, on ``tf_XLAPjRtCpuClient/…`` and ``tf_XLAEigen/…`` lines);
- ``/host:metadata``: one ``Hlo Proto`` per compiled module, whose instructions carry the
  jaxpr path (``OpMetadata.op_name``: ``jit(predict_step)/conv2d/conv_general_dilated``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from tfdiag.records.jax_profile import JaxProfile, XlaOp

STEP_NAME = "tfdiag-step"
#: The heaviest XLA ops kept in the record.
TOP_OPS = 20
_END = "end: "
#: A fusion is named after the heaviest kind of instruction it fuses, in this order.
_KINDS = ("convolution", "dot", "custom-call", "reduce-window", "reduce", "scatter", "gather")


class XspaceFormatError(ValueError):
    """The bytes are not an XSpace this reader understands."""


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf):
            raise XspaceFormatError("truncated varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7
        if shift > 70:
            raise XspaceFormatError("varint too long")


def fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """``(field number, value)`` of one message: an int (varint, fixed) or bytes."""
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
            yield num, value
        elif wire == 2:
            size, i = _varint(buf, i)
            if i + size > n:
                raise XspaceFormatError("truncated field")
            yield num, buf[i : i + size]
            i += size
        elif wire in (1, 5) and i + (8 if wire == 1 else 4) > n:
            raise XspaceFormatError("truncated field")
        elif wire == 1:
            yield num, struct.unpack_from("<q", buf, i)[0]
            i += 8
        elif wire == 5:
            yield num, struct.unpack_from("<i", buf, i)[0]
            i += 4
        else:
            raise XspaceFormatError(f"unsupported wire type {wire}")


def _text(v: int | bytes) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else ""


def _int(v: int | bytes) -> int:
    return v if isinstance(v, int) else 0


def _packed(v: int | bytes) -> list[int]:
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out


@dataclass
class _Stat:
    name: int
    text: str = ""
    ref: int = 0
    data: bytes = b""
    number: int = 0


def _stat(buf: bytes) -> _Stat:
    s = _Stat(0)
    for num, v in fields(buf):
        if num == 1:
            s.name = _int(v)
        elif num == 5:
            s.text = _text(v)
        elif num == 6 and isinstance(v, bytes):
            s.data = bytes(v)
        elif num == 7:
            s.ref = _int(v)
        elif num in (3, 4):
            s.number = _int(v)
    return s


@dataclass
class _Instr:
    opcode: str
    op_name: str
    called: list[int] = field(default_factory=list)


@dataclass
class _Module:
    instrs: dict[str, _Instr] = field(default_factory=dict)
    computations: dict[int, list[_Instr]] = field(default_factory=dict)


def _hlo_module(proto: bytes) -> _Module:
    """The instructions of an ``HloProto``: name → opcode, jaxpr path, called computations."""
    mod = _Module()
    for num, v in fields(proto):
        if num != 1 or not isinstance(v, bytes):
            continue
        for mnum, comp in fields(v):
            if mnum != 3 or not isinstance(comp, bytes):
                continue
            cid, instrs = 0, []
            for cnum, cv in fields(comp):
                if cnum == 5:
                    cid = _int(cv)
                elif cnum == 2 and isinstance(cv, bytes):
                    name, ins = "", _Instr("", "")
                    for inum, iv in fields(cv):
                        if inum == 1:
                            name = _text(iv)
                        elif inum == 2:
                            ins.opcode = _text(iv)
                        elif inum == 7 and isinstance(iv, bytes):
                            ins.op_name = next((_text(x) for n, x in fields(iv) if n == 2), "")
                        elif inum == 38:
                            ins.called.extend(_packed(iv))
                    mod.instrs[name] = ins
                    instrs.append(ins)
            mod.computations[cid] = instrs
    return mod


def _describe(mod: _Module | None, name: str) -> tuple[str, str]:
    """An op's ``(category, jaxpr path)`` from its module's HLO (a fusion: the heaviest kind
    it fuses and that instruction's path: the fusion's own is its root's, a pooling after
    the convolution it fuses)."""
    if mod is None or name not in mod.instrs:
        return "", ""
    ins = mod.instrs[name]
    if ins.opcode != "fusion":
        return ins.opcode, ins.op_name
    inner = [i for c in ins.called for i in mod.computations.get(c, ())]
    for kind in _KINDS:
        hit = next((i for i in inner if i.opcode == kind), None)
        if hit is not None:
            return kind, hit.op_name or ins.op_name
    path = ins.op_name or next((i.op_name for i in inner if i.op_name), "")
    return "fusion", path


def _fused_layers(mod: _Module | None, name: str, category: str) -> tuple[str, ...]:
    """The Keras layers of a fusion's instructions of its ``category`` (XNNPACK fuses a chain
    of convolutions into one op), in order; empty for an op that is not a fusion."""
    if mod is None or name not in mod.instrs or mod.instrs[name].opcode != "fusion":
        return ()
    inner = [i for c in mod.instrs[name].called for i in mod.computations.get(c, ())]
    found = (layer_of(i.op_name) for i in inner if i.opcode == category and i.op_name)
    return tuple(dict.fromkeys(x for x in found if x))


@dataclass
class _Plane:
    name: str = ""
    events: dict[int, str] = field(default_factory=dict)
    event_stats: dict[int, list[_Stat]] = field(default_factory=dict)
    stat_names: dict[int, str] = field(default_factory=dict)
    lines: list[bytes] = field(default_factory=list)


def _plane(buf: bytes) -> _Plane:
    p = _Plane()
    for num, v in fields(buf):
        if num == 2:
            p.name = _text(v)
        elif num == 3 and isinstance(v, bytes):
            p.lines.append(v)
        elif num in (4, 5) and isinstance(v, bytes):
            key, meta = 0, b""
            for en, ev in fields(v):
                if en == 1:
                    key = _int(ev)
                elif en == 2 and isinstance(ev, bytes):
                    meta = ev
            name, stats = "", []
            for mn, mv in fields(meta):
                if mn == 2:
                    name = _text(mv)
                elif mn == 5 and num == 4 and isinstance(mv, bytes):
                    stats.append(_stat(mv))
            if num == 4:
                p.events[key] = name
                if stats:
                    p.event_stats[key] = stats
            else:
                p.stat_names[key] = name
    return p


def _value(p: _Plane, s: _Stat) -> str:
    return s.text or (p.stat_names.get(s.ref, "") if s.ref else "") or (str(s.number))


@dataclass
class _Event:
    name: str
    start_ps: int
    duration_ps: int
    hlo_op: str = ""
    module: str = ""
    program: str = ""


def _events(p: _Plane) -> Iterator[tuple[str, _Event]]:
    """Every event of the plane, with its line's name."""
    by_name = {v: k for k, v in p.stat_names.items()}
    hlo_op, hlo_module, program = (
        by_name.get(n, -1) for n in ("hlo_op", "hlo_module", "program_id")
    )
    for line in p.lines:
        lname, base, raw = "", 0, []
        for num, v in fields(line):
            if num == 2:
                lname = _text(v)
            elif num == 3:
                base = _int(v) * 1000
            elif num == 4 and isinstance(v, bytes):
                raw.append(v)
        for ev in raw:
            e = _Event("", 0, 0)
            for num, v in fields(ev):
                if num == 1:
                    e.name = p.events.get(_int(v), "")
                elif num == 2:
                    e.start_ps = base + _int(v)
                elif num == 3:
                    e.duration_ps = _int(v)
                elif num == 4 and isinstance(v, bytes):
                    s = _stat(v)
                    if s.name == hlo_op:
                        e.hlo_op = _value(p, s)
                    elif s.name == hlo_module:
                        e.module = _value(p, s)
                    elif s.name == program:
                        e.program = _value(p, s)
            yield lname, e


def _modules(p: _Plane) -> dict[str, _Module]:
    """The metadata plane's HLO modules, by ``module(program id)`` and by module name."""
    hlo = next((k for k, v in p.stat_names.items() if v == "Hlo Proto"), None)
    out: dict[str, _Module] = {}
    for key, stats in p.event_stats.items():
        for s in stats:
            if s.name == hlo and s.data:
                name = p.events.get(key, "")
                mod = _hlo_module(s.data)
                out[name] = mod
                out.setdefault(name.split("(", 1)[0], mod)
    return out


def _union(intervals: Iterable[tuple[int, int]]) -> int:
    total, end = 0, -1
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def _clip(a: int, b: int, steps: Sequence[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    for s, e in steps:
        lo, hi = max(a, s), min(b, e)
        if hi > lo:
            yield lo, hi


def jax_profile_from_xspaces(
    spaces: Sequence[bytes], iteration_s: Sequence[float], export_s: float = 0.0
) -> JaxProfile:
    """The record of the traced steps in the XSpace files ``spaces``.

    Raises:
        XspaceFormatError: not a readable XSpace, or no traced step in it.
    """
    planes = [
        _plane(v) for data in spaces for n, v in fields(data) if n == 1 and isinstance(v, bytes)
    ]
    modules: dict[str, _Module] = {}
    for p in planes:
        if p.name == "/host:metadata":
            modules.update(_modules(p))
    steps: list[tuple[int, int]] = []
    ops: list[_Event] = []
    calls: list[_Event] = []
    for p in planes:
        if p.name == "/host:metadata":
            continue
        for _, e in _events(p):
            if e.name == STEP_NAME:
                steps.append((e.start_ps, e.start_ps + e.duration_ps))
            elif e.hlo_op and not e.name.startswith(_END):
                ops.append(e)
            elif e.name.startswith("PjitFunction(") and e.name.endswith(")"):
                calls.append(e)
    if not steps:
        raise XspaceFormatError(f"no `{STEP_NAME}` event in the trace")
    steps.sort()
    busy, summed = [], 0
    table: dict[tuple[str, str], list[int]] = {}
    where: dict[tuple[str, str], str] = {}
    for e in ops:
        inside = list(_clip(e.start_ps, e.start_ps + e.duration_ps, steps))
        if not inside:
            continue
        busy.extend(inside)
        own = sum(b - a for a, b in inside)
        summed += own
        key = (e.module, e.name)
        row = table.setdefault(key, [0, 0])
        row[0] += 1
        row[1] += own
        where.setdefault(key, f"{e.module}({e.program})" if e.program else e.module)
    rows = []
    for (module, name), (n, own) in table.items():
        mod = modules.get(where[(module, name)]) or modules.get(module)
        category, op_name = _describe(mod, name)
        layers = _fused_layers(mod, name, category)
        rows.append(XlaOp(name, module, category, op_name, n, own * 1e-12, layers))
    rows.sort(key=lambda o: -o.self_s)
    jit: dict[str, list[float]] = {}
    for e in calls:
        if any(s <= e.start_ps < t for s, t in steps):
            c = jit.setdefault(e.name[len("PjitFunction(") : -1], [0, 0.0])
            c[0] += 1
            c[1] += e.duration_ps * 1e-12
    return JaxProfile(
        steps=len(steps),
        iteration_s=tuple(iteration_s),
        step_s=tuple((b - a) * 1e-12 for a, b in steps),
        xla_busy_s=_union(busy) * 1e-12,
        xla_op_s=summed * 1e-12,
        ops=tuple(rows[:TOP_OPS]),
        op_count=len(rows),
        jit_calls=tuple(sorted(((f, int(n), s) for f, (n, s) in jit.items()), key=lambda c: -c[2])),
        export_s=export_s,
    )


def layer_of(op_name: str) -> str:
    """The Keras layer in a jaxpr path (``jit(predict_step)/conv2d/jit(relu)/max`` →
    ``conv2d``): the innermost part that is not a ``jit(…)``/transform nor the primitive."""
    parts = [p for p in op_name.split("/") if p]
    inner = [p for p in parts[:-1] if "(" not in p]
    return inner[-1] if inner else ""
