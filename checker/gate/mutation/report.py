"""The kill matrix and its summary: JSON (stable keys), text and Markdown."""
from __future__ import annotations

from typing import Any, Mapping

from checker.gate.mutation.analysis import Analysis, Fate
from checker.provenance import model_source
from checker.gate.mutation.judgements import EXCUSED, Judgement

# Fates, in the order the summary lists them.
FATES = ("killed", "availability", "survived", "budget", "same-states", "unchanged", "not-executed", "interrupted")


def _killer(f: Fate) -> dict[str, Any] | None:
    k = f.killer
    if k is None or f.status not in ("killed", "availability"):
        return None
    return {"row": k.row, "outcome": k.outcome, "kind": k.kind, "property": k.invariant, "steps": k.steps,
            "seconds": round(k.seconds, 2), "reason": k.reason}


def summary(a: Analysis, judged: Mapping[str, Judgement]) -> dict[str, Any]:
    """Counts per fate; the safety kill rate over the non-equivalent safety mutants: those some
    row tells apart from Kafka 4.1 (killed, survived or over budget), less the survivors judged
    equivalent, availability-only or safe, less the availability mutants the liveness pass kills."""
    counts = {k: 0 for k in FATES}
    for f in a.fates:
        counts[f.status] += 1
    excused = [f for f in a.fates if f.status in ("survived", "budget") and f.mutant.id in judged
               and judged[f.mutant.id].verdict in EXCUSED]
    unexplained = [f.mutant.id for f in a.fates if f.status in ("survived", "budget") and f.mutant.id not in judged]
    gaps = [f.mutant.id for f in a.fates if f.status in ("survived", "budget") and f.mutant.id in judged
            and judged[f.mutant.id].verdict == "gap"]
    denominator = counts["killed"] + counts["survived"] + counts["budget"] - len(excused)
    return {
        "mutants": len(a.fates),
        **{k.replace("-", "_"): v for k, v in counts.items()},
        "judged_equivalent": sum(1 for f in excused if judged[f.mutant.id].verdict == "equivalent"),
        "judged_availability": sum(1 for f in excused if judged[f.mutant.id].verdict == "availability"),
        "judged_safe": sum(1 for f in excused if judged[f.mutant.id].verdict == "safe"),
        "judged_gap": len(gaps),
        "unexplained": len(unexplained),
        "non_equivalent_safety": denominator,
        # an interrupted analysis judged only some mutants: no rate
        "safety_kill_rate": round(counts["killed"] / denominator, 4) if denominator and not a.interrupted else None,
    }


def to_json(a: Analysis, judged: Mapping[str, Judgement], stale: list[str], gate_file: str) -> dict[str, Any]:
    rows = []
    for r in a.rows:
        inf = a.infections.get(r.name)
        rows.append({"name": r.name, "preset": r.config_label or r.preset, "liveness": r.liveness,
                     "kafka_states": inf.states if inf else None, "explored": inf is not None and inf.complete,
                     "mutants_changed": sum(1 for f in a.fates if r.name in f.rows_changed),
                     "kafka_unreached": inf.unreached if inf else None,
                     "kafka_never_enabled": inf.never_enabled if inf else None,
                     "seconds": round(inf.seconds, 2) if inf else None})
    mutants = []
    for f in a.fates:
        m, j = f.mutant, judged.get(f.mutant.id)
        mutants.append({
            "id": m.id, "location": m.location, "line": m.line, "function": m.function, "operator": m.operator,
            "before": m.before, "after": m.after, "source_line": m.source_line, "status": f.status,
            "rows_changed": list(f.rows_changed), "killed_by": _killer(f), "seconds": round(f.seconds, 2),
            "judgement": {"verdict": j.verdict, "reason": j.reason} if j else None,
        })
    # the model source whose code was mutated, as every run names the one it checked
    return {"model": a.model, "model_source": model_source().as_json(), "gate_file": gate_file, "rows": rows,
            "mutants": mutants,
            "summary": summary(a, judged), "stale_judgements": stale, "seconds": round(a.seconds, 1),
            "interrupted": a.interrupted}


def _short(mid: str) -> str:
    """partition:_assign:compare:0 for model.replication.partition:_assign:compare:0."""
    module, rest = mid.split(":", 1)
    return module.rsplit(".", 1)[-1] + ":" + rest


def _row_label(row: str, rows: list[dict[str, Any]]) -> str:
    return next((r["preset"] for r in rows if r["name"] == row), row)


def _fate_cells(m: dict[str, Any], rows: list[dict[str, Any]]) -> tuple[str, str, str, str]:
    k = m["killed_by"]
    if k is None:
        return m["status"], "", "", f"{m['seconds']:.1f}" if m["status"] in ("survived", "budget") else ""
    what = k["property"] or k["outcome"]
    return m["status"], f"{_row_label(k['row'], rows)} / {what}", str(k["steps"]) if k["outcome"] == "violation" else "", \
        f"{m['seconds']:.1f}"


def summary_lines(report: dict[str, Any]) -> list[str]:
    s = report["summary"]
    rate = "n/a" if s["safety_kill_rate"] is None else f"{100 * s['safety_kill_rate']:.1f}%"
    if report["interrupted"]:
        return [f"INTERRUPTED, a partial result: of {s['mutants']} mutants, {s['killed']} killed and"
                f" {s['availability']} availability before the stop; {s['interrupted']} not judged (neither"
                " survivors nor equivalent); no kill rate"]
    lines = [
        f"{s['mutants']} mutants: {s['killed']} killed, {s['availability']} availability (only the liveness pass "
        f"kills them), {s['survived']} survived, {s['budget']} over budget; equivalent on these rows: "
        f"{s['same_states']} reach Kafka 4.1's states exactly, {s['unchanged']} never compute another value, "
        f"{s['not_executed']} are never executed",
        f"safety kill rate: {s['killed']} of {s['non_equivalent_safety']} non-equivalent safety mutants ({rate}); "
        f"survivors judged: {s['judged_equivalent']} equivalent, {s['judged_availability']} availability, "
        f"{s['judged_safe']} safe (argued), "
        f"{s['judged_gap']} known gap(s); {s['unexplained']} unexplained",
    ]
    return lines


def text(report: dict[str, Any], matrix: bool = True) -> str:
    rows = report["rows"]
    out = [f"kcheck mutate: model {report['model']}, {len(report['mutants'])} mutant(s), "
           f"{len(rows)} row(s) of {report['gate_file']}",
           f"model source: {report['model_source']['path']} (sha256 {report['model_source']['sha256'][:12]})", ""]
    out.append("rows (in the order they run: cheap rows first saves time):")
    for r in rows:
        states = "not run" if r["kafka_states"] is None else f"{r['kafka_states']:,} Kafka 4.1 states" + (
            "" if r["explored"] else " (not exhausted)")
        out.append(f"  {r['name']}: {states}, {r['mutants_changed']} mutant(s) change something there")
    if matrix:
        out += ["", "kill matrix:"]
        head = ("mutant", "location", "operator", "fate", "row / property", "steps", "seconds")
        cells = [head] + [(_short(m["id"]), m["location"], m["operator"], *_fate_cells(m, rows))
                          for m in report["mutants"]]
        widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
        for c in cells:
            out.append("  " + "  ".join(v.ljust(w) for v, w in zip(c, widths)).rstrip())
    survivors = [m for m in report["mutants"] if m["status"] in ("survived", "budget")]
    out += ["", f"survivors ({len(survivors)}):" if survivors else "survivors: none"]
    for m in survivors:
        j = m["judgement"]
        judged = f"judged {j['verdict']}: {j['reason']}" if j else "UNEXPLAINED"
        out.append(f"  {m['location']} in {m['function']} ({m['operator']}): `{m['before']}` -> `{m['after']}`"
                   + (" [over budget]" if m["status"] == "budget" else ""))
        out.append(f"      {m['source_line']}")
        out.append(f"      {judged}")
    for line in report["stale_judgements"]:
        out.append(f"warning: stale judgement: {line}")
    out += [""] + summary_lines(report)
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: dict[str, Any]) -> str:
    rows = report["rows"]
    source = report["model_source"]
    out = [f"# kcheck mutate: {report['model']}", "", f"Model source: `{source['path']}` (sha256 `{source['sha256']}`)",
           ""] + [f"- {line}" for line in summary_lines(report)] + [""]
    survivors = [m for m in report["mutants"] if m["status"] in ("survived", "budget")]
    out += ["## Survivors", ""]
    if survivors:
        out += ["| location | function | operator | change | judgement |", "|---|---|---|---|---|"]
        for m in survivors:
            j = m["judgement"]
            out.append(f"| {m['location']} | {_md(m['function'])} | {m['operator']} | "
                       f"`{_md(m['before'])}` → `{_md(m['after'])}` | "
                       + (_md(f"{j['verdict']}: {j['reason']}") if j else "**unexplained**") + " |")
    else:
        out.append("None.")
    out += ["", "## Kill matrix", "", "<details><summary>every mutant</summary>", "",
            "| mutant | location | operator | fate | row / property | steps | seconds |", "|---|---|---|---|---|---|---|"]
    for m in report["mutants"]:
        out.append("| " + " | ".join(_md(c) for c in (_short(m["id"]), m["location"], m["operator"],
                                                       *_fate_cells(m, rows))) + " |")
    out += ["", "</details>", ""]
    return "\n".join(out)
