"""Canonical UUID keys as integers: a lowercase UUID string (36 characters, dashes at 8,
13, 18, 23, hex digits 0-9a-f) holds 128 bits whose order as two uint64 words is the
strings' byte order, so numpy can sort and group integers instead of strings. The write
sorts its bucket files this way (write.sort = "uuid128") and the read groups a window's
keys this way; any other key (NULL, upper case, other lengths, compound keys) gets None
and the caller's string path.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

UUID_LEN = 36
# The columns a write stores a key's two words in (write.key_words), as int64 bit
# patterns, next to the key; the read groups by them instead of parsing the strings.
WORD_COLUMNS = ("__contest_key_hi", "__contest_key_lo")
_DASHES = (8, 13, 18, 23)
# Rows parsed at a time: the parse's scratch (~100 bytes a row) stays a few tens of MB.
PARSE_ROWS = 1 << 18
_NIBBLE = np.full(256, 255, dtype=np.uint8)  # a hex digit's value; 255: not one
_NIBBLE[ord("0") : ord("9") + 1] = np.arange(10)
_NIBBLE[ord("a") : ord("f") + 1] = np.arange(10, 16)


def uuid_words(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray] | None:
    """(high, low) uint64 words of canonical lowercase UUID strings, whose order is
    the strings' order; None when any value is NULL or not such a UUID."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.null_count or not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    n = len(arr)
    if n == 0:
        return np.empty(0, np.uint64), np.empty(0, np.uint64)
    _, offsets_buf, data_buf = arr.buffers()
    width = np.dtype(np.int64 if pa.types.is_large_string(arr.type) else np.int32)
    offsets = np.frombuffer(
        offsets_buf, dtype=width, count=n + 1, offset=arr.offset * width.itemsize
    )
    first = int(offsets[0])
    if int(offsets[-1]) - first != n * UUID_LEN or (np.diff(offsets) != UUID_LEN).any():
        return None
    chars = np.frombuffer(data_buf, dtype=np.uint8, count=n * UUID_LEN, offset=first)
    chars = chars.reshape(n, UUID_LEN)
    high, low = np.empty(n, np.uint64), np.empty(n, np.uint64)
    for start in range(0, n, PARSE_ROWS):
        words = _parse(chars[start : start + PARSE_ROWS])
        if words is None:
            return None
        high[start : start + PARSE_ROWS], low[start : start + PARSE_ROWS] = words
    return high, low


def _parse(chars: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    if not (chars[:, list(_DASHES)] == ord("-")).all():
        return None
    hexes = np.concatenate(
        [chars[:, a:b] for a, b in ((0, 8), (9, 13), (14, 18), (19, 23), (24, 36))], axis=1
    )
    nibbles = _NIBBLE[hexes]
    if nibbles.max() > 15:
        return None
    packed = np.ascontiguousarray((nibbles[:, 0::2] << 4) | nibbles[:, 1::2])
    words = packed.view(">u8")
    return words[:, 0], words[:, 1]


def uuid_order(
    bucket_ids: np.ndarray, high: np.ndarray, low: np.ndarray, pos: np.ndarray | None
) -> np.ndarray:
    """Stable order by (bucket, high, low, pos): one integer sort on the bucket in the
    top bits and as much of `high` as fits below it (random UUIDs rarely tie there),
    then only the runs of equal sort words sorted again on every word."""
    if len(high) == 0:
        return np.empty(0, dtype=np.int64)
    bits = max(1, int(bucket_ids.max()).bit_length())
    word = (bucket_ids.astype(np.uint64) << np.uint64(64 - bits)) | (high >> np.uint64(bits))
    order = np.argsort(word, kind="stable")
    sorted_word = word[order]
    same = sorted_word[1:] == sorted_word[:-1]
    if not same.any():
        return order
    in_run = np.zeros(len(order), dtype=bool)
    in_run[1:] |= same
    in_run[:-1] |= same
    at = np.flatnonzero(in_run)
    sub = order[at]  # runs of equal words, ascending; a run's rows in arrival order
    columns = [low[sub], high[sub], word[sub]]  # lexsort: the last is the first key
    if pos is not None:
        columns.insert(0, pos[sub])
    order[at] = sub[np.lexsort(columns)]  # lexsort is stable
    return order
