"""Where a recorded function lives: an installed package, the standard library, or the
user's own code. One set of patterns for the catalog, the attribution, the sampled
stacks' session and ``tfdiag run``; it works on paths recorded on another machine,
Windows ones included.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

#: Everything up to and including an installed-packages folder.
SITE_PACKAGES = re.compile(r".*[/\\](?:site-packages|dist-packages)[/\\]")
#: Everything up to and including the standard library's folder.
STDLIB = re.compile(r".*[/\\](?:lib[/\\]python3(?:\.\d+)?|Lib)[/\\]")
PACKAGE_DIRS = frozenset({"site-packages", "dist-packages"})
#: This tfdiag's own folder, wherever it is installed (an editable install is not in
#: site-packages): its hooks in a profile are tfdiag's, never the user's code.
OWN_ROOT = str(Path(__file__).resolve().parents[1]).replace("\\", "/") + "/"
#: tfdiag's folder in a path recorded by another checkout (a report captured from a source
#: tree elsewhere, read here): ``…/tfdiag/`` followed by one of its own stage packages.
_STAGES = "advise|analysis|capture|frontends|measure|records|render|results|script"
OWN_ELSEWHERE = re.compile(rf".*/tfdiag/(?=(?:{_STAGES})/|(?:keras|__init__|__main__)\.py$)")


def _own_tail(p: str) -> str | None:
    """``tfdiag/...`` for one of tfdiag's own files, here or in another checkout; else None."""
    if p.startswith(OWN_ROOT):
        return "tfdiag/" + p[len(OWN_ROOT) :]
    m = OWN_ELSEWHERE.match(p)
    return "tfdiag/" + p[m.end() :] if m else None


@lru_cache(maxsize=65536)
def normalize_path(file: str) -> str:
    """Module path relative to site-packages (``keras/src/...``), or the path as given."""
    if file == "~":
        return "~"
    p = file.replace("\\", "/")
    own = _own_tail(p)
    if own is not None:
        return own
    m = SITE_PACKAGES.match(p)
    return p[m.end() :] if m else p


#: The name AutoGraph gives the temporary file of a function it converted
#: (``tensorflow/python/autograph/pyct/loader.py``): code the user never wrote or saw, whose
#: lines are no place to anchor a finding or propose an edit.
AUTOGRAPH_PREFIX = "__autograph_generated_file"


@lru_cache(maxsize=65536)
def is_user_code(file: str) -> bool:
    """True for the user's own files: not a builtin, not stdlib, not an installed package."""
    if file == "~" or file.startswith("<"):
        return False
    p = file.replace("\\", "/")
    if p.rsplit("/", 1)[-1].startswith(AUTOGRAPH_PREFIX):
        return False  # AutoGraph's converted copy of a function, in a temporary file
    return not (_own_tail(p) is not None or SITE_PACKAGES.match(p) or STDLIB.match(p))


def library_prefix(file: str) -> str | None:
    """The site-packages or stdlib prefix of ``file`` (what pyinstrument hides), or None."""
    m = SITE_PACKAGES.match(file) or STDLIB.match(file)
    return m.group(0) if m else None
