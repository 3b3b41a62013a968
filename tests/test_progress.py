from __future__ import annotations

import pytest

from inspector.progress import SILENT, Cancelled, Progress, Reporter


def test_reports_reach_the_sink_in_order() -> None:
    seen: list[Progress] = []
    reporter = Reporter(on_progress=seen.append)
    reporter.report("draft", 1, 4)
    reporter.report("draft", 4, 4)
    assert [(p.stage, p.done, p.total) for p in seen] == [("draft", 1, 4), ("draft", 4, 4)]
    assert seen[0].fraction == 0.25 and Progress("x", 3, 0).fraction is None


def test_check_raises_only_once_cancelled() -> None:
    stop = [False]
    reporter = Reporter(is_cancelled=lambda: stop[0])
    reporter.check()
    stop[0] = True
    with pytest.raises(Cancelled):
        reporter.check()
    SILENT.check()
    SILENT.report("nothing", 1, 1)
