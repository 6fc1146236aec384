"""Both framings: round trips, and every way a frame can be broken."""

from __future__ import annotations

import asyncio
import io
import json
import os
import struct
import threading

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shotbridge.transport.framing import BUS, NATIVE, NATIVE_MAX_OUT, Codec, bus_codec
from shotbridge.wire.errors import FrameError

# ---- strategies -----------------------------------------------------------------------------

_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=12,
)
json_maps = st.dictionaries(st.text(), json_values, max_size=8)

_msgpack_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary()
)
msgpack_values = st.recursive(
    _msgpack_scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text() | st.binary(), inner, max_size=5)
    ),
    max_leaves=12,
)
msgpack_maps = st.dictionaries(st.text(), msgpack_values, max_size=8)


def _aread(codec: Codec, data: bytes, eof: bool = True) -> dict | None:
    """Feed ``data`` to an asyncio StreamReader and read one frame (1 s guard against hangs)."""

    async def run() -> dict | None:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        if eof:
            reader.feed_eof()
        return await asyncio.wait_for(codec.aread(reader), 1.0)

    return asyncio.run(run())


# ---- round trips ----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(json_maps)
def test_native_round_trip(msg: dict) -> None:
    frame = NATIVE.encode(msg)
    assert struct.unpack("=I", frame[:4])[0] == len(frame) - 4
    assert json.loads(frame[4:]) == msg
    assert NATIVE.read(io.BytesIO(frame)) == msg
    assert _aread(NATIVE, frame) == msg


@settings(max_examples=60, deadline=None)
@given(msgpack_maps)
def test_bus_round_trip(msg: dict) -> None:
    frame = BUS.encode(msg)
    assert struct.unpack(">I", frame[:4])[0] == len(frame) - 4
    assert BUS.read(io.BytesIO(frame)) == msg
    assert _aread(BUS, frame) == msg


def test_bus_keeps_bytes_and_str_apart() -> None:
    msg = {"id": "1", "image": b"\xff\xd8\xff", "text": "\xff"}
    out = BUS.read(io.BytesIO(BUS.encode(msg)))
    assert out == msg
    assert isinstance(out["image"], bytes) and isinstance(out["text"], str)


@given(st.lists(msgpack_maps, max_size=4))
@settings(max_examples=15, deadline=None)
def test_several_frames_then_clean_eof(msgs: list[dict]) -> None:
    stream = io.BytesIO(b"".join(BUS.encode(m) for m in msgs))
    assert [BUS.read(stream) for _ in msgs] == msgs
    assert BUS.read(stream) is None  # clean EOF between frames is not an error


def test_clean_eof_on_empty_stream() -> None:
    assert NATIVE.read(io.BytesIO(b"")) is None
    assert _aread(NATIVE, b"") is None
    assert _aread(BUS, b"") is None


def test_native_uses_native_byte_order_and_utf8() -> None:
    frame = NATIVE.encode({"t": "é"})
    body = '{"t":"é"}'.encode()
    assert frame == struct.pack("=I", len(body)) + body


# ---- broken frames --------------------------------------------------------------------------


@pytest.mark.parametrize("codec", [NATIVE, BUS], ids=["native", "bus"])
def test_truncated_header(codec: Codec) -> None:
    with pytest.raises(FrameError, match=r"truncated .* header"):
        codec.read(io.BytesIO(b"\x01\x00"))
    with pytest.raises(FrameError, match=r"truncated .* header"):
        _aread(codec, b"\x01\x00")


@pytest.mark.parametrize("codec", [NATIVE, BUS], ids=["native", "bus"])
def test_truncated_body(codec: Codec) -> None:
    frame = codec.encode({"id": "1", "cmd": "status"})
    with pytest.raises(FrameError, match="truncated"):
        codec.read(io.BytesIO(frame[:-3]))
    with pytest.raises(FrameError, match="truncated"):
        _aread(codec, frame[:-3])


@pytest.mark.parametrize("codec", [NATIVE, BUS], ids=["native", "bus"])
def test_oversized_header_fails_before_reading_the_body(codec: Codec) -> None:
    """A 2 GiB length with no body, on a pipe left open: the reader must refuse at once.

    If it tried to read the body it would block forever on the open pipe (the thread join
    below would time out), so this proves the limit is checked before the body is read.
    """
    header = codec.header.pack(2 * 1024**3)
    r, w = os.pipe()
    os.write(w, header)
    outcome: list[BaseException | object] = []

    def reader() -> None:
        with open(r, "rb", buffering=0) as stream:
            try:
                outcome.append(codec.read(stream))
            except BaseException as exc:
                outcome.append(exc)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    thread.join(2.0)
    try:
        assert not thread.is_alive(), "reader blocked waiting for the body"
        assert isinstance(outcome[0], FrameError)
        assert "over the" in str(outcome[0])
    finally:
        os.close(w)
        thread.join(2.0)
    # asyncio: header only, no EOF, so a body read would hang until wait_for's timeout.
    with pytest.raises(FrameError, match="limit"):
        _aread(codec, header, eof=False)


def test_bus_limit_is_configurable() -> None:
    small = bus_codec(max_size=64)
    with pytest.raises(FrameError, match="limit"):
        small.encode({"blob": b"x" * 100})
    with pytest.raises(FrameError, match="limit"):
        small.read(io.BytesIO(BUS.encode({"blob": b"x" * 100})))
    assert small.read(io.BytesIO(BUS.encode({"a": 1}))) == {"a": 1}


def test_native_host_to_browser_over_1mb_refused() -> None:
    overhead = len(NATIVE.encode({"d": ""})) - 4
    fits = {"d": "x" * (NATIVE_MAX_OUT - overhead)}
    assert len(NATIVE.encode(fits)) == NATIVE_MAX_OUT + 4  # exactly 1 MB is allowed
    with pytest.raises(FrameError, match="exceeds"):
        NATIVE.encode({"d": "x" * (NATIVE_MAX_OUT - overhead + 1)})


def test_native_browser_to_host_may_exceed_1mb() -> None:
    big = {"data_url": "x" * (3 * 1024 * 1024)}
    body = json.dumps(big).encode()
    assert NATIVE.read(io.BytesIO(struct.pack("=I", len(body)) + body)) == big


@pytest.mark.parametrize(
    "body",
    [b"{not json", b"\xff\xfe{}", b"", b'{"a": 1} trailing'],
    ids=["syntax", "bad-utf8", "empty", "trailing"],
)
def test_native_garbage_body(body: bytes) -> None:
    frame = struct.pack("=I", len(body)) + body
    with pytest.raises(FrameError, match="undecodable native"):
        NATIVE.read(io.BytesIO(frame))
    with pytest.raises(FrameError, match="undecodable native"):
        _aread(NATIVE, frame)


@pytest.mark.parametrize(
    "body",
    [b"\xc1", b"", msgpack.packb({"a": 1}) + b"\x01", b"\x81\xa1a", b"\x81\xa1\xff\x01"],
    ids=["reserved-byte", "empty", "trailing", "cut-map", "bad-utf8-key"],
)
def test_bus_garbage_body(body: bytes) -> None:
    frame = struct.pack(">I", len(body)) + body
    with pytest.raises(FrameError, match="bus"):
        BUS.read(io.BytesIO(frame))
    with pytest.raises(FrameError, match="bus"):
        _aread(BUS, frame)


@pytest.mark.parametrize("value", [[1, 2], 3, "s", None])
def test_non_map_bodies_refused(value: object) -> None:
    nbody = json.dumps(value).encode()
    with pytest.raises(FrameError, match="must be a map"):
        NATIVE.read(io.BytesIO(struct.pack("=I", len(nbody)) + nbody))
    bbody = msgpack.packb(value)
    with pytest.raises(FrameError, match="must be a map"):
        _aread(BUS, struct.pack(">I", len(bbody)) + bbody)
    with pytest.raises(FrameError, match="must be a map"):
        BUS.encode(value)  # type: ignore[arg-type]


def test_unencodable_messages() -> None:
    with pytest.raises(FrameError, match="cannot encode native"):
        NATIVE.encode({"raw": b"bytes are not JSON"})
    with pytest.raises(FrameError, match="cannot encode native"):
        NATIVE.encode({"x": float("nan")})
    with pytest.raises(FrameError, match="cannot encode bus"):
        BUS.encode({"x": object()})


# ---- shared budget and stalls ---------------------------------------------------


def _reader(*chunks: bytes, eof: bool = True) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    for chunk in chunks:
        reader.feed_data(chunk)
    if eof:
        reader.feed_eof()
    return reader


def test_budget_is_reserved_for_a_body_and_released_after() -> None:
    from shotbridge.transport.framing import ByteBudget

    async def scenario() -> None:
        budget = ByteBudget(1_000_000)
        big = BUS.encode({"blob": b"\x01" * 600_000})
        assert (await BUS.aread(_reader(big), budget=budget))["blob"] == b"\x01" * 600_000
        assert budget.used == 0
        budget.reserve(500_000)  # someone else holds half
        with pytest.raises(FrameError, match="refused"):
            await BUS.aread(_reader(big), budget=budget)
        assert budget.used == 500_000  # the refused frame took nothing

    asyncio.run(scenario())


def test_budget_is_released_when_the_sender_leaves_mid_frame() -> None:
    from shotbridge.transport.framing import ByteBudget

    async def scenario() -> None:
        budget = ByteBudget(10_000_000)
        half = struct.pack(">I", 5_000_000) + b"\x00" * 1_000_000
        with pytest.raises(FrameError, match="truncated"):
            await BUS.aread(_reader(half), budget=budget)
        assert budget.used == 0

    asyncio.run(scenario())


def test_a_body_that_stops_arriving_is_a_frame_error() -> None:
    from shotbridge.transport.framing import ByteBudget

    async def scenario() -> None:
        budget = ByteBudget(10_000_000)
        reader = _reader(struct.pack(">I", 1000) + b"\x81", eof=False)
        with pytest.raises(FrameError, match="stalled"):
            await BUS.aread(reader, budget=budget, stall_timeout=0.2)
        assert budget.used == 0

    asyncio.run(scenario())
