"""`kcheck render TRACE --html OUT`: draw a trace as an HTML page."""
from __future__ import annotations

from typing import Any

from checker.outputs import check_outputs
from checker.traces import itf
from checker.traces.replay import add_model_arguments, trace_config
from checker.view.document import document_page
from checker.view.page import write_page


def add_arguments(parser: Any) -> None:
    parser.add_argument("trace", metavar="TRACE", help="an ITF trace (JSON), as --trace-out writes it")
    parser.add_argument("--html", metavar="FILE", required=True, help="write the page to FILE")
    add_model_arguments(parser)
    parser.add_argument("--quiet", action="store_true", help="print nothing when the page is written")


def run(args: Any) -> int:
    """`kcheck render TRACE --html OUT`: 0 written, 2 bad input."""
    check_outputs(files=[("--html", args.html)], inputs=[("the trace", args.trace)])
    doc = itf.load(args.trace)
    rc = trace_config(doc, args.trace, args.model, args.variant, args.preset, args.overrides)
    write_page(args.html, document_page(doc, rc.build(), rc))
    if not args.quiet:
        print(f"kcheck: wrote {args.html} ({len(doc['states']) - 1} steps)")
    return 0
