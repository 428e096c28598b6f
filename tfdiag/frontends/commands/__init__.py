"""One module per subcommand; each has ``register(subparsers)``. Order is the help order."""

from __future__ import annotations

from tfdiag.frontends.commands import (
    bench,
    capture,
    catalog,
    compare,
    demo,
    diff,
    explain,
    fix,
    merge,
    run,
    snakeviz,
    tensorboard,
)

COMMANDS = (
    explain,
    run,
    fix,
    compare,
    bench,
    diff,
    merge,
    capture,
    snakeviz,
    tensorboard,
    demo,
    catalog,
)
