"""A zip archive written entry by entry, with memory that does not grow with the entries.

`zipfile.ZipFile` keeps a `ZipInfo` object per member until it writes the central directory
at close: about 350 bytes each (measured: 100,000 members of a `docs/` folder took 35 MB,
20,000 took 7 MB), so an export's memory grew with its documents. This writer spools each
member's central-directory record to a temporary file instead, so a member costs nothing
once written.

The archive is deterministic: every member carries the same timestamp (1980-01-01 00:00,
the format's earliest) and permissions, members are stored in the order written, and they
are compressed with zlib at a fixed level, so the same content in the same order gives the
same bytes, however it was produced. Python's `zipfile` and Info-ZIP read what it writes;
the records follow PKWARE's APPNOTE (section 4.3), with ZIP64 records where sizes, offsets
or the member count pass the limits `zipfile` itself uses.
"""

from __future__ import annotations

import io
import shutil
import struct
import tempfile
import zlib
from typing import BinaryIO

# The limits beyond which `zipfile` writes ZIP64 records (it keeps sizes under 2 GiB).
ZIP64_LIMIT = (1 << 31) - 1
ZIP_FILECOUNT_LIMIT = (1 << 16) - 1

_LOCAL = struct.Struct("<4s2B4HL2L2H")
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")
_END = struct.Struct("<4s4H2LH")
_END64 = struct.Struct("<4sQ2H2L4Q")
_END64_LOCATOR = struct.Struct("<4sLQL")
_DEFLATED = 8
_UTF8_NAMES = 0x800
_VERSION = 20
_VERSION_ZIP64 = 45
_UNIX = 3
_DOS_TIME, _DOS_DATE = 0, (0 << 9) | (1 << 5) | 1  # 1980-01-01 00:00:00
_FILE_MODE = (0o100644 & 0xFFFF) << 16


class StreamingZip:
    """Write members to `out` (a seekable binary file) one at a time, then `close()`."""

    def __init__(self, out: BinaryIO, compresslevel: int = 1):
        self.out = out
        self.compresslevel = compresslevel
        self.central = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.count = 0
        self.open_member: _MemberWriter | None = None
        self.closed = False

    def write(self, name: str, data: bytes) -> None:
        with self.open(name, size=len(data)) as member:
            member.write(data)

    def open(self, name: str, size: int | None = None) -> _MemberWriter:
        """A writable binary stream for member `name`, of `size` bytes if known; close it
        before opening the next."""
        if self.closed:
            raise ValueError("the archive is closed")
        if self.open_member is not None:
            raise ValueError(f"member {self.open_member.name!r} is still being written")
        self.open_member = _MemberWriter(self, name, size)
        return self.open_member

    def _finish_member(self, member: _MemberWriter) -> None:
        self.open_member = None
        self.count += 1
        extra = b""
        fields = []
        size, compressed, offset = member.size, member.compressed, member.offset
        if size > ZIP64_LIMIT:
            fields.append(size)
            size = 0xFFFFFFFF
        if compressed > ZIP64_LIMIT:
            fields.append(compressed)
            compressed = 0xFFFFFFFF
        if offset > ZIP64_LIMIT:
            fields.append(offset)
            offset = 0xFFFFFFFF
        if fields:
            extra = struct.pack(f"<2H{len(fields)}Q", 1, 8 * len(fields), *fields)
        version = _VERSION_ZIP64 if fields or member.zip64 else _VERSION
        self.central.write(
            _CENTRAL.pack(
                b"PK\x01\x02",
                version,
                _UNIX,
                version,
                0,
                _UTF8_NAMES,
                _DEFLATED,
                _DOS_TIME,
                _DOS_DATE,
                member.crc,
                compressed,
                size,
                len(member.encoded_name),
                len(extra),
                0,
                0,
                0,
                _FILE_MODE,
                offset,
            )
        )
        self.central.write(member.encoded_name)
        self.central.write(extra)

    def close(self) -> None:
        if self.closed:
            return
        if self.open_member is not None:
            self.open_member.close()
        self.closed = True
        start = self.out.tell()
        self.central.seek(0)
        shutil.copyfileobj(self.central, self.out, 1 << 16)
        self.central.close()
        end = self.out.tell()
        size = end - start
        count, offset, size32 = self.count, start, size
        if self.count > ZIP_FILECOUNT_LIMIT or start > ZIP64_LIMIT or size > ZIP64_LIMIT:
            self.out.write(
                _END64.pack(
                    b"PK\x06\x06",
                    _END64.size - 12,
                    _VERSION_ZIP64,
                    _VERSION_ZIP64,
                    0,
                    0,
                    self.count,
                    self.count,
                    size,
                    start,
                )
            )
            self.out.write(_END64_LOCATOR.pack(b"PK\x06\x07", 0, end, 1))
            count = min(count, 0xFFFF)
            offset = min(offset, 0xFFFFFFFF)
            size32 = min(size, 0xFFFFFFFF)
        self.out.write(_END.pack(b"PK\x05\x06", 0, 0, count, count, size32, offset, 0))
        self.out.flush()

    def __enter__(self) -> StreamingZip:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _MemberWriter(io.RawIOBase):
    """One member: a local header whose sizes and checksum are filled in once the data is
    written (the archive's file is seekable), then the deflated data.

    When its size is not given in advance, the local header carries a ZIP64 field for the
    sizes, as `zipfile` writes it when asked to (`force_zip64`): then any size fits. A
    member of a known, small size (a document of a `docs/` folder) goes without it, 20
    bytes less each (2 MB of 100,000 documents)."""

    def __init__(self, archive: StreamingZip, name: str, size: int | None = None):
        super().__init__()
        self.archive = archive
        self.name = name
        self.encoded_name = name.encode("utf-8")
        self.offset = archive.out.tell()
        # Deflate adds at most 5 bytes per 16 KB block to data that does not compress.
        self.declared = size
        self.zip64 = size is None or size + size // 1000 + 64 > ZIP64_LIMIT
        self.size = self.compressed = self.crc = 0
        self.compressor = zlib.compressobj(archive.compresslevel, zlib.DEFLATED, -15)
        archive.out.write(self._local_header())

    def _local_header(self) -> bytes:
        if self.zip64:
            extra = struct.pack("<2H2Q", 1, 16, self.size, self.compressed)
            version, compressed, size = _VERSION_ZIP64, 0xFFFFFFFF, 0xFFFFFFFF
        else:
            extra, version, compressed, size = b"", _VERSION, self.compressed, self.size
        return (
            _LOCAL.pack(
                b"PK\x03\x04",
                version,
                0,
                _UTF8_NAMES,
                _DEFLATED,
                _DOS_TIME,
                _DOS_DATE,
                self.crc,
                compressed,
                size,
                len(self.encoded_name),
                len(extra),
            )
            + self.encoded_name
            + extra
        )

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        if self.closed:
            raise ValueError("the member is closed")
        data = bytes(data)
        self.size += len(data)
        if self.declared is not None and self.size > self.declared:
            raise ValueError(
                f"member {self.name!r} is longer than the {self.declared} bytes declared"
            )
        self.crc = zlib.crc32(data, self.crc)
        packed = self.compressor.compress(data)
        self.compressed += len(packed)
        self.archive.out.write(packed)
        return len(data)

    def close(self) -> None:
        if self.closed:
            return
        packed = self.compressor.flush()
        self.compressed += len(packed)
        out = self.archive.out
        out.write(packed)
        end = out.tell()
        out.seek(self.offset)
        out.write(self._local_header())
        out.seek(end)
        super().close()
        self.archive._finish_member(self)
