"""metrics.engines.parts: errors in a piece or byte range name the original line."""
from __future__ import annotations

import pytest

import metrics
from metrics import engines as scale
from metrics.errors import MetricsError


@pytest.mark.parametrize("bad", ["q7 0 d-bad 3", "q7 Q0 d-bad 3 abc tag", "q7 Q0 d-bad 3 nan tag"])
def test_errors_name_the_original_line_at_any_piece_or_range_boundary(tmp_path, bad):
    rows = [f"q{i % 7}  Q0\td{i} {i + 1} {i / 4} tag" for i in range(40)]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    for at in range(0, 40, 3):
        path = tmp_path / "run.txt"
        path.write_text("\n".join(["# header comment"] + rows[:at] + [bad] + rows[at:]) + "\n")
        with pytest.raises(MetricsError) as local:
            metrics.read_run(path)
        with pytest.raises(MetricsError) as streamed:
            scale.partition(str(path), str(qrels), tmp_path / "out", n_buckets=2, piece_bytes=90, range_bytes=250)
        assert str(streamed.value) == str(local.value)
        assert streamed.value.line == at + 2
