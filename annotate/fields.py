"""A model field for (n, 2) integer arrays, stored as packed little-endian int32 pairs.

Token offsets are the bulk of a document row: as JSON they cost more to encode and for
PostgreSQL to parse than tokenizing the text did. Packed, they are written and read with
one numpy call and take 8 bytes per token.
"""

from __future__ import annotations

import numpy as np
from django.db import models

_DTYPE = np.dtype("<i4")


def pack_pairs(value) -> bytes:
    array = np.asarray(value, dtype=np.int64).reshape(-1, 2)
    if array.size and (array.min() < 0 or array.max() > np.iinfo(_DTYPE).max):
        raise ValueError("offsets must fit in a non-negative int32")
    return array.astype(_DTYPE).tobytes()


def unpack_pairs(raw: bytes | memoryview) -> np.ndarray:
    return np.frombuffer(bytes(raw), dtype=_DTYPE).reshape(-1, 2).astype(np.int64)


class Int32PairsField(models.BinaryField):
    description = "An (n, 2) array of non-negative integers"

    def from_db_value(self, value, expression, connection):
        return None if value is None else unpack_pairs(value)

    def to_python(self, value):
        if value is None or isinstance(value, np.ndarray):
            return value
        if isinstance(value, bytes | memoryview):
            return unpack_pairs(value)
        return np.asarray(value, dtype=np.int64).reshape(-1, 2)

    def get_db_prep_value(self, value, connection, prepared=False):
        if value is None:
            return None
        if not isinstance(value, bytes | memoryview):
            value = pack_pairs(value)
        return super().get_db_prep_value(value, connection, prepared)

    def value_to_string(self, obj):
        return self.value_from_object(obj).tolist()
