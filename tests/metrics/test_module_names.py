"""No module of ``metrics`` shares its name with a name its package exports: ``import
metrics.x.y as m`` gives the module, and importing the module never rebinds the package's
function of that name."""
from __future__ import annotations

import importlib
import pkgutil
import types

import metrics


def packages() -> list[types.ModuleType]:
    found = [metrics]
    for info in pkgutil.walk_packages(metrics.__path__, "metrics."):
        if info.ispkg:
            found.append(importlib.import_module(info.name))
    return found


def test_no_module_is_named_like_a_name_its_package_exports():
    clashes = []
    for package in packages():
        exported = set(getattr(package, "__all__", ())) | set(getattr(package, "LAZY", {}))
        for info in pkgutil.iter_modules(package.__path__):
            bound = package.__dict__.get(info.name)
            if info.name in exported or not (bound is None or isinstance(bound, types.ModuleType)):
                clashes.append(f"{package.__name__}.{info.name}")
    assert clashes == []
    assert len(packages()) > 10   # every package of metrics was walked
