"""Exit 0 when every requirement in the given requirements files is installed.

Used by scripts/setup.sh to skip `pip install` on a machine that already has
everything; any doubt (unparsable line, missing metadata) counts as unsatisfied,
so a fresh machine always goes through pip.

    python scripts/check_requirements.py requirements-dev.txt
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

try:
    from packaging.requirements import Requirement
except ImportError:  # pip always vendors packaging
    from pip._vendor.packaging.requirements import Requirement


def requirement_lines(path: Path) -> list[str]:
    """Requirement strings of a requirements file, following `-r other.txt`."""
    lines: list[str] = []
    for raw in path.read_text().splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ")):
            lines += requirement_lines(path.parent / line.split(None, 1)[1].strip())
        elif line.startswith("-"):
            raise ValueError(f"{path}: option line not understood: {line!r}")
        else:
            lines.append(line)
    return lines


def unsatisfied(requirement: Requirement, seen: set[str]) -> list[str]:
    """Problems with one requirement, including the dependencies its extras add."""
    if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
        return []
    key = f"{requirement.name.lower()}[{','.join(sorted(requirement.extras))}]"
    if key in seen:
        return []
    seen.add(key)
    try:
        version = metadata.version(requirement.name)
    except metadata.PackageNotFoundError:
        return [f"{requirement.name}: not installed"]
    if not requirement.specifier.contains(version, prereleases=True):
        return [f"{requirement.name}: {version} installed, {requirement.specifier} wanted"]
    problems: list[str] = []
    for extra in requirement.extras:
        for dependency in metadata.requires(requirement.name) or []:
            sub = Requirement(dependency)
            if sub.marker is not None and sub.marker.evaluate({"extra": extra}) and \
                    not sub.marker.evaluate({"extra": ""}):
                sub.marker = None
                problems += unsatisfied(sub, seen)
    return problems


def main(paths: list[str]) -> int:
    problems: list[str] = []
    seen: set[str] = set()
    try:
        for path in paths:
            for line in requirement_lines(Path(path)):
                problems += unsatisfied(Requirement(line), seen)
    except Exception as error:  # anything odd: let pip decide
        print(f"check_requirements: {error}", file=sys.stderr)
        return 1
    for problem in problems:
        print(f"check_requirements: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
