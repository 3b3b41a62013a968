"""``session-inspector analyze FILE``: where every token goes."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from inspector.breakdown import Dimension
from inspector.commands.common import add_compaction_point, add_session_arguments, hold_until_exit, print_json
from inspector.commands.output import say, say_warnings

if TYPE_CHECKING:
    from inspector.analysis import Analysis
    from inspector.session import Session


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_session_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a report")
    parser.add_argument("--all", action="store_true", help="list every turn, even in a long session")
    parser.add_argument("--cost", action=argparse.BooleanOptionalAction, default=None,
                        help="price each turn from the recorded usage (--no-cost: a subscription pays nothing "
                             "per token; default: SESSION_INSPECTOR_COST, else off when signed in with Google)")
    add_compaction_point(parser)
    parser.add_argument("--by", choices=[d.value for d in Dimension], default=None,
                        help="where the estimate goes, as bars: by kind of part, by tool, by file read or "
                             "changed, or by model (and what the split summarises and keeps of each)")


def json_report(session: Session, result: Analysis, *, lazy: bool = False, cost: bool | None = None) -> dict[str, Any]:
    """The ``analyze --json`` object: the analysis, what masking does next turn, and cost."""
    from inspector.breakdown import session_breakdown
    from inspector.compaction.masking import masking_of
    from inspector.pricing.cost import cost_of, prompt_saving, resolve_cost

    data = result.to_json(session.path, session.format, session.session_id, lazy=lazy)
    masking = masking_of(session, result.turns)
    data["masking"] = masking.to_json()
    data["breakdown"] = session_breakdown(session, result).to_json()
    switch = resolve_cost(cost)
    data["cost"] = cost_of(session, result, switch).to_json(lazy=lazy)
    if switch.enabled:
        # estimates on both sides, as a compaction's saving (masking's figures are estimates: taken from
        # the recorded prompt they could come to less than nothing, 1,041,570 off a 525,821-token prompt)
        before = result.context.estimated_tokens
        saving = prompt_saving(result.model, before, before - masking.tokens_saved) if masking.parts else None
        data["cost"]["masking_saving"] = saving.to_json() if saving else None
    return data


def run(args: argparse.Namespace) -> int:
    from inspector.configured import analyse_configured
    from inspector.progress import load_showing_progress

    session = load_showing_progress(args.file)
    if session.transcript is not None:  # an Antigravity transcript: its steps and checkpoints
        from inspector.antigravity.compaction_point import resolve_compaction_point
        from inspector.antigravity.report import print_report, report_of

        print_report(report_of(session.transcript, resolve_compaction_point(args.compaction_point)),
                     as_json=args.json, show_all=args.all)
        return 0
    configured = analyse_configured(session, args.model, args.threshold)
    result, threshold = configured.analysis, configured.threshold
    hold_until_exit(session, result)  # nothing to write but stdout: the process may end without freeing them
    if args.json:
        from inspector.session.loader import paused_gc

        with paused_gc():  # the masking plan, breakdown and cost make many objects that form no cycle
            report = json_report(session, result, lazy=True, cost=args.cost)
            hold_until_exit(report)
            print_json(report)
    elif args.by is not None:
        from inspector.breakdown import session_breakdown
        from inspector.breakdown_text import breakdown_lines, report_width

        for line in breakdown_lines(session_breakdown(session, result), Dimension(args.by), report_width()):
            say(line)
    else:
        from inspector.compaction.masking import masking_of
        from inspector.pricing.cost import cost_of, resolve_cost
        from inspector.report import print_analysis

        cost = cost_of(session, result, resolve_cost(args.cost))
        print_analysis(session, result, threshold, configured.model, show_all=args.all, cost=cost,
                       masking=masking_of(session, result.turns))
    if not args.json:
        say_warnings(session.path, session.warnings)
    return 0
