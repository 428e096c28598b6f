"""One module per subcommand; each has ``register(subparsers)``. Order is the help order."""

from __future__ import annotations

from tfdiag.commands import catalog, demo, explain, run, snakeviz

COMMANDS = (explain, snakeviz, demo, catalog, run)
