"""Figures as files: SVG, PDF and PNG written by kaleido in this machine's Chromium, from the library
(``metrics.report.figures.save``) and the command line (``eval``/``compare --figures DIR``); each file
opened by an independent reader (PNG decoded, PDF of one page, SVG parsed as XML)."""
from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest

import metrics
from metrics.cli import main
from metrics.errors import MetricsError
from metrics.report import figures
from metrics.report.figures.curves import leaderboard_bars
from metrics.report.figures.sets import comparison_figures, evaluation_figures, file_stem

ROOT = Path(__file__).resolve().parents[4]
LEGAL = next(p for p in (ROOT / "sample_data" / "legal", ROOT / "ndcg_lab" / "sample_data" / "legal") if p.exists())
QRELS, BM25, DENSE = (str(LEGAL / n) for n in ("qrels.txt", "bm25.run", "dense.run"))


def _browser() -> bool:
    try:
        figures.browser_path()
        return True
    except MetricsError:
        return False


needs_browser = pytest.mark.skipif(not _browser(), reason="no Chromium or Chrome on this machine")


def png_pixels(data: bytes) -> tuple[int, int]:
    """Decode a PNG with zlib and struct (every chunk's CRC checked, the pixel rows inflated): its size."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
        if kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
    assert depth == 8 and interlace == 0
    assert len(zlib.decompress(idat)) == height * (1 + width * channels)   # a filter byte + pixels per row
    return width, height


def pdf_pages(data: bytes) -> int:
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", data))


def svg_root(data: bytes) -> ET.Element:
    root = ET.fromstring(data)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root


def check(path: Path) -> None:
    data = path.read_bytes()
    kind = path.suffix
    if kind == ".png":
        width, height = png_pixels(data)
        assert width >= 300 and height >= 200
        try:
            from PIL import Image
        except ImportError:
            return
        with Image.open(path) as image:
            image.load()
            assert image.size == (width, height)
    elif kind == ".pdf":
        assert pdf_pages(data) == 1
    elif kind == ".svg":
        assert len(svg_root(data)) > 0
    else:
        raise AssertionError(kind)


def test_the_suffix_chooses_the_format_and_an_unknown_one_is_refused(tmp_path):
    assert [figures.files.format_of(f"a{s}") for s in (".svg", ".PDF", ".png")] == ["svg", "pdf", "png"]
    with pytest.raises(MetricsError, match="suffix '.gif'"):
        figures.save(leaderboard_bars(metrics.means(metrics.evaluate(QRELS, BM25, ["AP"])), "AP"), tmp_path / "a.gif")


def test_no_browser_is_a_clear_error_and_nothing_is_downloaded(tmp_path, monkeypatch):
    monkeypatch.delenv("BROWSER_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MetricsError, match="apt-get install chromium"):
        figures.browser_path()
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "nowhere"))
    with pytest.raises(MetricsError, match="BROWSER_PATH"):
        figures.browser_path()


def test_file_stems_are_plain_words():
    assert file_stem("means", "nDCG(dcg='exp-log2')@10") == "means_nDCG-dcg-exp-log2-10"
    assert file_stem("delta", "P(rel=2)@5", "bm25 ce") == "delta_P-rel-2-5_bm25-ce"


@needs_browser
def test_library_saves_each_kind_and_each_opens(tmp_path):
    frame = metrics.evaluate(QRELS, [BM25, DENSE], ["nDCG(dcg='exp-log2')@10", "AP"])
    built = {**evaluation_figures(metrics.means(frame)),
             **comparison_figures(frame, "bm25", ["dense"], ["AP"])}
    assert set(built) == {"means_nDCG-dcg-exp-log2-10", "means_AP", "delta_AP_dense", "scatter_AP_dense",
                          "hist_AP_dense"}
    kinds = (".svg", ".pdf", ".png")
    paths = figures.save_all([(fig, tmp_path / f"{stem}{kinds[i % 3]}") for i, (stem, fig) in enumerate(built.items())]
                             + [(built["means_AP"], tmp_path / "one" / f"means{k}") for k in kinds])
    assert len(paths) == 8
    for path in paths:
        check(path)
    assert "nDCG(dcg='exp-log2')@10" in (tmp_path / "means_nDCG-dcg-exp-log2-10.svg").read_text(encoding="utf-8")
    assert figures.save(built["means_AP"], tmp_path / "scaled.png", scale=2).is_file()
    assert png_pixels((tmp_path / "scaled.png").read_bytes()) == tuple(2 * v for v in png_pixels(
        (tmp_path / "one" / "means.png").read_bytes()))


@needs_browser
def test_eval_and_compare_write_their_figures(tmp_path, capsys):
    assert main(["eval", QRELS, BM25, DENSE, "-m", "nDCG@10", "--figures", str(tmp_path / "e"),
                 "--figure-formats", "pdf"]) == 0
    assert main(["compare", QRELS, BM25, DENSE, "-m", "AP", "--figures", str(tmp_path / "c"),
                 "--figure-formats", "svg,png"]) == 0
    err = capsys.readouterr().err
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.*"))
    assert written == ["c/delta_AP_dense.png", "c/delta_AP_dense.svg", "c/hist_AP_dense.png", "c/hist_AP_dense.svg",
                       "c/scatter_AP_dense.png", "c/scatter_AP_dense.svg", "e/means_nDCG-10.pdf"]
    assert err.count("figure: ") == 7
    for name in written:
        check(tmp_path / name)


def test_an_unknown_figure_format_is_refused_before_evaluating(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["eval", QRELS, BM25, "-m", "AP", "--figures", str(tmp_path), "--figure-formats", "svg,gif"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--figure-formats" in err and "'gif'" in err
    assert not list(tmp_path.iterdir())


def _kaleido_that_fails(times: int, calls: list):
    """A stand-in for kaleido.write_fig_from_object_sync whose first ``times`` calls draw nothing and
    return the error, as kaleido 1.5 does when it calls its script in the page before its own has
    loaded; later calls write each file."""
    def write(specs, kopts):
        calls.append([spec["path"].name for spec in specs])
        if len(calls) <= times:
            return (RuntimeError("ReferenceError: kaleido_scopes is not defined"),)
        for spec in specs:
            spec["path"].write_bytes(b"drawn")
        return ()
    return write


def test_a_figure_kaleido_did_not_draw_is_drawn_again_in_a_new_browser(tmp_path, monkeypatch):
    kaleido = pytest.importorskip("kaleido")
    monkeypatch.setattr(figures.files, "browser_path", lambda: "/usr/bin/chromium")
    (tmp_path / "a.png").write_bytes(b"an older drawing")            # not taken for this one's
    calls: list = []
    monkeypatch.setattr(kaleido, "write_fig_from_object_sync", _kaleido_that_fails(1, calls))
    assert figures.save_all([({}, tmp_path / "a.png"), ({}, tmp_path / "b.svg")]) == [tmp_path / "a.png",
                                                                                      tmp_path / "b.svg"]
    assert calls == [["a.png", "b.svg"], ["a.png", "b.svg"]]
    assert (tmp_path / "a.png").read_bytes() == b"drawn"
    calls.clear()
    monkeypatch.setattr(kaleido, "write_fig_from_object_sync", _kaleido_that_fails(2, calls))
    with pytest.raises(MetricsError, match=r"c\.png: drawing the figure failed in /usr/bin/chromium: "
                                           r"RuntimeError: ReferenceError: kaleido_scopes"):
        figures.save({}, tmp_path / "c.png")
    assert len(calls) == 2 and not (tmp_path / "c.png").exists()
