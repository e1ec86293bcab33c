"""`kcheck list`: models, variants, properties, config keys and presets."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from checker.config import ConfigError, load_config, load_definition
from model.interface import TEMPORAL
from checker.cli.options import EXIT_OK, _config_text, activate_plugins, add_plugin_argument

# ---------------------------------------------------------------------------------------------
# kcheck list


def _list_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    add_plugin_argument(parser)


def describe_model(name: str) -> dict[str, Any]:
    """Everything `kcheck list` shows about one model (raises ConfigError if it cannot load)."""
    definition = load_definition(name)
    plugins = _variant_plugins()
    properties: list[dict[str, str]]
    try:
        built = load_config(model=name).build()
        properties = [{"name": p.name, "kind": p.kind, "description": p.description} for p in built.properties]
    except Exception:  # fall back on what the definition declares
        properties = [{"name": n, "kind": k, "description": d} for n, k, d in definition.invariants]
    properties += _preset_only_properties(name, definition, {p["name"] for p in properties})
    return {
        "name": definition.name,
        "description": definition.description,
        "variants": [
            {"name": v.name, "bug_id": v.bug_id, "description": v.description, "expect": v.expect,
             "preset": v.preset, "reference": v.reference, "switches_off": list(v.switches_off),
             **({"plugin": plugins[v.name]} if v.name in plugins else {})}  # a plugin's variant: its file
            for v in definition.variants
        ],
        "properties": properties,
        "config_keys": [
            {"name": k.name, "type": k.type.__name__, "default": k.default, "min": k.min, "max": k.max, "doc": k.doc}
            for k in definition.config_keys
        ],
        "presets": {preset: dict(values) for preset, values in definition.presets.items()},
    }


def _variant_plugins() -> dict[str, str]:
    """Variant name -> the plugin file that defines it, for the plugins in force."""
    from checker import plugin

    return {c.variant.name: p.path for p in plugin.active() for c in p.extension.changes}


def _preset_only_properties(name: str, definition: Any, known: set[str]) -> list[dict[str, Any]]:
    """Properties a model declares only on some presets (e.g. one per voter of a larger
    cluster), each with `only_on`: the presets that declare it."""
    extra: dict[str, dict[str, Any]] = {}
    for preset in definition.presets:
        try:
            built = load_config(model=name, preset=preset).build()
        except Exception:  # a preset that does not build is reported by `check`, not here
            continue
        for p in built.properties:
            if p.name not in known:
                entry = extra.setdefault(p.name, {"name": p.name, "kind": p.kind, "description": p.description,
                                                  "only_on": []})
                entry["only_on"].append(preset)
    return list(extra.values())


def _list_text(m: dict[str, Any]) -> str:
    lines = [f"{m['name']}: {m['description']}", "  variants:"]
    for v in m["variants"]:
        bug = f" [{v['bug_id']}]" if v["bug_id"] else ""
        expect = "holds" if v["expect"] == "holds" else f"breaks {v['expect']}"
        origin = f" (plugin {v['plugin']})" if v.get("plugin") else ""
        lines.append(f"    {v['name']}{bug}: expected {expect} on preset {v['preset']}{origin}")
        lines.append(f"      {v['description']}" + (f" [ref: {v['reference']}]" if v["reference"] else ""))
    for kinds, title in ((("always",), "invariants (always)"), (("sometimes",), "sometimes-properties"),
                         (TEMPORAL, "temporal properties (liveness)")):
        listed = [p for p in m["properties"] if p["kind"] in kinds]
        if not listed and kinds[0] not in ("always", "sometimes"):
            continue
        lines.append(f"  {title}:")
        for p in listed:
            kind = f" [{p['kind']}]" if len(kinds) > 1 else ""
            presets = p.get("only_on")
            only = f" (only on preset{'s' if len(presets) > 1 else ''} {', '.join(presets)})" if presets else ""
            lines.append(f"    {p['name']}{kind}{only}" + (f": {p['description']}" if p["description"] else ""))
    lines.append("  config keys:")
    for k in m["config_keys"]:
        bounds = ""
        if k["min"] is not None or k["max"] is not None:
            bounds = f", range {k['min'] if k['min'] is not None else ''}..{k['max'] if k['max'] is not None else ''}"
        lines.append(f"    {k['name']} ({k['type']}, default {json.dumps(k['default'])}{bounds}): {k['doc']}")
    lines.append("  presets:")
    for preset, values in m["presets"].items():
        lines.append(f"    {preset}: {_config_text(values) if values else '(the defaults)'}")
    return "\n".join(lines)


def _run_list(args: argparse.Namespace) -> int:
    import model as registry

    activate_plugins(args)

    models: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for name in registry.MODELS:
        try:
            models.append(describe_model(name))
        except ConfigError as e:
            skipped.append({"name": name, "error": str(e)})
            print(f"kcheck: warning: skipping model {name}: {e}", file=sys.stderr)
    if args.json:
        print(json.dumps({"models": models, "skipped": skipped}))
    else:
        print("\n\n".join(_list_text(m) for m in models))
    return EXIT_OK


run = _run_list
add_arguments = _list_arguments
