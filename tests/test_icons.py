"""No emoji anywhere in what the app or the library shows: icons are Material Symbols
(``:material/name:``), a font Streamlit ships. An emoji needs an emoji font, which many machines
lack; there it draws as an empty box. Text symbols that every text font has (the markers ▲ ▼ ◀,
✓, arrows, Greek letters) stay."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("ndcg_lab", "metrics")
SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".json", ".txt", ".html", ".css"}
EMOJI_RANGES = [
    (0x1F000, 0x1FAFF),   # pictographs, emoticons, transport, supplemental symbols (🔒 🧪 💡 👁 🗂 🚫 ...)
    (0x2600, 0x26FF),     # miscellaneous symbols (⚠ ☀ ⛔), drawn from an emoji font on many systems
    (0x2700, 0x2712), (0x2714, 0x27BF),   # dingbats (✅ ✔ ❌ ➡), but ✓ U+2713 is a text character
    (0xFE0F, 0xFE0F),     # variation selector 16: "draw the character before me as an emoji"
    (0x1F1E6, 0x1F1FF),   # regional indicators (flags)
]


def is_emoji(ch: str) -> bool:
    return any(low <= ord(ch) <= high for low, high in EMOJI_RANGES)


def emoji_in(text: str) -> list[tuple[int, str]]:
    """``(line, character)`` of every emoji code point in ``text``."""
    return [(n, ch) for n, line in enumerate(text.splitlines(), 1) for ch in line if is_emoji(ch)]


def test_the_scan_finds_the_emoji_that_were_used_and_spares_text_symbols():
    assert [ch for _, ch in emoji_in('icon="🔒"\nicon="👁️"\n⚠️ ✅')] == ["🔒", "👁", "\ufe0f", "⚠", "\ufe0f", "✅"]
    assert emoji_in("▲ ▼ ◀ ✓ → ≤ τ Δ — · ±") == []


@pytest.mark.parametrize("folder", SCANNED)
def test_no_emoji_in_the_source(folder):
    found = []
    for path in sorted((ROOT / folder).rglob("*")):
        if path.suffix in SUFFIXES and path.is_file():
            found += [f"{path.relative_to(ROOT)}:{line}: U+{ord(ch):04X} {ch!r}"
                      for line, ch in emoji_in(path.read_text(errors="replace"))]
    assert not found, "emoji (use a :material/name: icon instead):\n" + "\n".join(found)
