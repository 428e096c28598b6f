"""The package version, in a module of its own so nothing has to import the package root."""

from __future__ import annotations

__version__ = "0.1.0"
