"""Deferred imports for start-up time (issue 18): `lazy_module(name)` returns the module object
at once and runs its code on first attribute access (the standard library's
`importlib.util.LazyLoader`). For heavy libraries only some commands need (e.g. httpx for HTTP
embedding providers), so that a command which never touches them never pays their import.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module `name`, loaded on first attribute access; the already-imported module when
    there is one. Raises ModuleNotFoundError at once when `name` is not installed."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
