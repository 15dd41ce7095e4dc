"""``lend``: a reader returns only once Arrow's threads hold nothing of the caller's memory.

A ``bytearray`` cannot change size while a buffer of it is exported, so growing it right after a
read shows whether any Arrow thread still holds it. pyarrow's threaded CSV reader often still
does at that moment when handed ``pa.py_buffer`` directly (its reader object is freed by the
callback that completed it, on an Arrow thread); that late release is what aborted
``metrics eval`` at interpreter exit.
"""
from __future__ import annotations

import threading
import time

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pytest

from metrics.io.lending import lend
from metrics.io.trec import read_trec
from metrics.io.validate import RUN

LINES = b"".join(b"q%d Q0 d%d %d %d.5 sys\n" % (i // 50, i, i % 50 + 1, -i) for i in range(5000))


def csv_options() -> dict:
    return dict(read_options=pacsv.ReadOptions(autogenerate_column_names=True, block_size=1 << 12),
                parse_options=pacsv.ParseOptions(delimiter=" "))


def test_a_threaded_csv_read_holds_nothing_once_lend_returns():
    data = bytearray(LINES)
    for _ in range(200):
        table = lend(pacsv.read_csv, data, **csv_options())
        data.extend(b"x")    # BufferError while an Arrow thread still holds a view of data
        del data[-1:]
    assert table.num_rows == 5000 and table.column(2)[4999].as_py() == "d4999"


def test_a_threaded_json_read_through_lend_returns_its_table_and_holds_nothing():
    # pyarrow 26's JSON reader lets go before it returns (2,000 reads); topics are lent all the same
    data = bytearray(b"".join(b'{"qid": "%d", "query": "q %d"}\n' % (i, i) for i in range(3000)))
    for _ in range(20):
        table = lend(pajson.read_json, data, read_options=pajson.ReadOptions(block_size=1 << 12))
        data.extend(b"x")
        del data[-1:]
    assert table.column("query")[2999].as_py() == "q 2999"


def test_lend_waits_for_a_reader_that_lets_go_later_on_another_thread():
    let_go = threading.Event()

    def read(buffer: pa.Buffer) -> int:
        def hold(held: list) -> None:
            time.sleep(0.2)
            let_go.set()      # before the buffer goes: lend may return the moment it has gone
            held.clear()

        threading.Thread(target=hold, args=([buffer],)).start()
        return buffer.size

    assert lend(read, b"abc") == 3
    assert let_go.is_set()


def test_lend_passes_on_a_readers_error_after_taking_the_memory_back():
    data = bytearray(b"a b\nc\n" * 1000)
    with pytest.raises(pa.ArrowInvalid):
        lend(pacsv.read_csv, data, read_options=pacsv.ReadOptions(autogenerate_column_names=True, block_size=1 << 10),
             parse_options=pacsv.ParseOptions(delimiter=" "))
    data.extend(b"x")


@pytest.mark.parametrize("text", [LINES, LINES.replace(b" ", b"\t"), b"\n" + LINES],
                         ids=["clean", "tabs", "normalised"])
def test_read_trec_holds_nothing_of_its_text_once_it_returns(text):
    data = bytearray(text)
    for _ in range(20):
        table, _origin = read_trec(data, RUN, "run.txt")
        data.extend(b"x")
        del data[-1:]
    assert table.num_rows == 5000
