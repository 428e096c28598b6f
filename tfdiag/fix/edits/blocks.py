"""Statement surgery on a tree: remove a statement, insert one before another, both at
once (a move). libcst indents a statement by the block it lands in, so a moved line takes
its new block's indentation, and its own comments travel with it."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst


class _Bodies(cst.CSTTransformer):
    def __init__(
        self,
        remove: cst.CSTNode | None,
        before: cst.CSTNode | None,
        insert: Sequence[cst.BaseStatement],
    ) -> None:
        self.remove, self.before, self.insert = remove, before, tuple(insert)
        self._carry: Sequence[cst.EmptyLine] = ()

    def _body(
        self, original: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement]
    ) -> list[cst.BaseStatement]:
        out: list[cst.BaseStatement] = []
        carry: Sequence[cst.EmptyLine] = ()
        for o, u in zip(original, updated):
            if o is self.before:
                out.extend(self.insert)
            if o is self.remove:
                if not self.insert:  # removed, not moved: its comments stay where they were
                    carry = [e for e in getattr(o, "leading_lines", ()) if e.comment]
                continue
            if carry and isinstance(u, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                u = u.with_changes(leading_lines=[*carry, *u.leading_lines])
                carry = ()
            out.append(u)
        return out

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        body = self._body(original_node.body, updated_node.body)
        if not body:  # a block is never empty
            body = [cst.SimpleStatementLine([cst.Pass()])]
        return updated_node.with_changes(body=body)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._body(original_node.body, updated_node.body))


def remove(module: cst.Module, statement: cst.CSTNode) -> cst.Module:
    """``module`` without ``statement`` (``pass`` where its block would be empty)."""
    return module.visit(_Bodies(statement, None, ()))


def move(module: cst.Module, statement: cst.SimpleStatementLine, before: cst.CSTNode) -> cst.Module:
    """``statement`` moved to just before ``before`` (a statement of an outer block)."""
    lines = list(statement.leading_lines)
    while lines and not lines[0].comment:  # blank lines above it stay behind
        lines.pop(0)
    moved = statement.with_changes(leading_lines=lines)
    return module.visit(_Bodies(statement, before, (moved,)))


def line_of(module: cst.Module, statement: cst.CSTNode) -> int:
    """The line ``statement`` (a node equal to it) starts on in ``module`` (0: not found)."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    def squeezed(node: cst.CSTNode) -> str:  # the code, whatever its indentation became
        if isinstance(node, cst.SimpleStatementLine):
            node = node.with_changes(leading_lines=())
        return "".join(cst.Module([]).code_for_node(node).split())

    wanted = squeezed(statement)
    positions = MetadataWrapper(module).resolve(PositionProvider)
    for node, where in positions.items():
        if isinstance(node, type(statement)) and squeezed(node) == wanted:
            return where.start.line
    return 0
