"""The streaming zip writer: readable by zipfile and Info-ZIP, deterministic, flat memory."""

import hashlib
import io
import shutil
import subprocess
import zipfile

import pytest

from rationale_metrics import zip_stream
from rationale_metrics.eraser_writer import ZipSink
from rationale_metrics.zip_stream import StreamingZip
from tests.conftest import skip_or_fail

TEXT = "".join(f"line {n} {'x' * (n % 37)}\n" for n in range(20_000)).encode()


def archive(pieces: list[int]) -> bytes:
    """The same members, the big one written in pieces of the given sizes."""
    out = io.BytesIO()
    with StreamingZip(out) as zipped:
        with zipped.open("ds/train.jsonl") as member:
            at = 0
            for size in pieces:
                member.write(TEXT[at : at + size])
                at += size
            member.write(TEXT[at:])
        zipped.write("ds/docs/é 1", "naïve\n".encode())
        zipped.write("ds/empty", b"")
    return out.getvalue()


def test_zipfile_reads_every_member_back():
    with zipfile.ZipFile(io.BytesIO(archive([1000] * 50))) as read:
        assert read.testzip() is None
        assert read.namelist() == ["ds/train.jsonl", "ds/docs/é 1", "ds/empty"]
        assert read.read("ds/train.jsonl") == TEXT
        assert read.read("ds/docs/é 1").decode() == "naïve\n"
        assert read.getinfo("ds/empty").file_size == 0
        assert {i.date_time for i in read.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_the_same_content_gives_the_same_bytes_however_it_was_written():
    digests = {
        hashlib.sha256(archive(pieces)).hexdigest()
        for pieces in ([], [1] * 10 + [65536, 7] * 3, [len(TEXT)], [333] * 200)
    }
    assert len(digests) == 1


def test_info_zip_tests_it_clean(tmp_path):
    if shutil.which("unzip") is None:
        skip_or_fail("needs Info-ZIP's unzip (Debian package unzip)")
    path = tmp_path / "a.zip"
    path.write_bytes(archive([4096] * 3))

    done = subprocess.run(["unzip", "-t", str(path)], capture_output=True, text=True)

    assert done.returncode == 0, done.stdout + done.stderr


def test_more_members_than_a_plain_end_record_counts(tmp_path):
    """Over 65,535 members the end record is ZIP64's, as zipfile writes it."""
    path = tmp_path / "many.zip"
    with open(path, "wb") as out, StreamingZip(out) as zipped:
        for n in range(70_000):
            zipped.write(f"docs/d{n}", b"w\n")

    with zipfile.ZipFile(path) as read:
        assert len(read.infolist()) == 70_000
        assert read.read("docs/d69999") == b"w\n"


def test_sizes_and_offsets_past_the_limit_get_zip64_fields(monkeypatch, tmp_path):
    """The limit lowered to a few bytes stands in for 2 GiB."""
    monkeypatch.setattr(zip_stream, "ZIP64_LIMIT", 100)
    path = tmp_path / "big.zip"
    with open(path, "wb") as out, StreamingZip(out) as zipped:
        zipped.write("a", TEXT[:5000])
        zipped.write("b", b"after an offset past the limit")

    with zipfile.ZipFile(path) as read:
        assert read.testzip() is None
        assert read.read("a") == TEXT[:5000]
        assert read.getinfo("b").header_offset > 100


def test_one_member_at_a_time():
    zipped = StreamingZip(io.BytesIO())
    zipped.open("a")
    with pytest.raises(ValueError, match="still being written"):
        zipped.open("b")


def test_memory_does_not_grow_with_the_members(tmp_path):
    """zipfile kept about 350 bytes per member until the end; this writer keeps none."""
    import tracemalloc

    def peak(members: int) -> int:
        tracemalloc.start()
        with open(tmp_path / f"{members}.zip", "wb") as out, StreamingZip(out) as zipped:
            for n in range(members):
                zipped.write(f"ds/docs/d{n}", b"a few words\n")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak

    # Per extra member, far under zipfile's ~350 bytes: a few bytes of bookkeeping (the peak
    # moved by 66 KB over 38,000 members in one CI run, 1.7 bytes each), not a record each.
    extra_members = 40_000 - 2_000
    assert peak(40_000) - peak(2_000) < extra_members * 10


def test_the_sink_writes_text_and_streams_under_its_root(tmp_path):
    sink = ZipSink(tmp_path / "ds.zip", "ds")
    with sink.open_text("train.jsonl") as handle:
        handle.write('{"a": "ü"}\n')
    sink.write_text("docs/d0", "w0 w1\n")
    sink.close()

    with zipfile.ZipFile(tmp_path / "ds.zip") as read:
        assert read.read("ds/train.jsonl").decode() == '{"a": "ü"}\n'
        assert read.read("ds/docs/d0") == b"w0 w1\n"


def test_a_member_of_known_size_has_no_zip64_field_and_a_streamed_one_has():
    body = archive([])
    with zipfile.ZipFile(io.BytesIO(body)) as read:
        offsets = {i.filename: i.header_offset for i in read.infolist()}

    def local_extra_length(name: str) -> int:
        at = offsets[name]
        return int.from_bytes(body[at + 28 : at + 30], "little")

    assert local_extra_length("ds/docs/é 1") == 0  # written whole: its size was known
    assert local_extra_length("ds/train.jsonl") == 20  # streamed: room for any size
