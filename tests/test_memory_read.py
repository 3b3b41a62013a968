"""Reading a big recording takes memory in proportion to what it keeps: each message's rows are one
bytes object while the reader's items live, made into columns a message at a time and freed as they
go, and a turn's small-tuple figures are kept packed (``session/packed.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from inspector.session import load
from inspector.session.loader import STREAM_MIN_BYTES
from tests.traced import traced

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", params=["bench", "inline"])
def recording(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recording of 15,000 turns (~9 MB, read from its file) of each shape the bench's generator writes."""
    out = tmp_path_factory.mktemp("read") / f"{request.param}.jsonl"
    subprocess.run([sys.executable, str(REPO / "bench" / "make_big_session.py"), "--turns", "15000",
                    "--shape", request.param, "--out", str(out)], check=True, capture_output=True)
    assert out.stat().st_size > STREAM_MIN_BYTES
    return out


def test_reading_peaks_and_keeps_in_proportion_to_what_is_kept(recording: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """In one process (every allocation traced): the read's peak stays under 1.8x the file (each
    message's rows held as ~20 objects took over 2x) and what it keeps under 0.95x (a tuple a turn for
    each small-tuple figure, and the id text once a column, took over 1x)."""
    monkeypatch.setenv("SESSION_INSPECTOR_SERIAL", "1")
    size = recording.stat().st_size
    session, kept, peak = traced(lambda: load(recording))
    index = session.turn_index
    assert index is not None and len(index) >= 15_000
    assert peak < 1.8 * size, f"the read peaked at {peak / size:.2f}x the file"
    assert kept < 0.95 * size, f"the read kept {kept / size:.2f}x the file"
