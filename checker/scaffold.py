"""`kcheck new-variant NAME --model M`: write a plugin file to start a change from
(docs/change.md): a variant that, as written, changes nothing yet, an empty list of properties,
and, in comments, the model's pure decisions a change may replace, each with its Kafka method."""
from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
from pathlib import Path

from checker.config import ConfigError, DEFAULT_MODEL, load_definition

_NAME = re.compile(r"[a-z][a-z0-9.]*(-[a-z0-9.]+)*")

TEMPLATE = '''"""{name}: TODO one line on the change (the KIP, the JIRA, the Kafka class it touches).

Check it with the installed kcheck (docs/change.md):
    kcheck check --plugin {file} --variant {name} --preset {preset}
"""
from model.extension import Change
from model.interface import Variant, always, sometimes

MODEL = "{model}"


def step(model, state, action, base):
    """The change, as a transition: `base(state, action)` is {model}'s own step (of variant
    {base}). As written it changes nothing; or delete it and replace a decision below."""
    return base(state, action)


VARIANTS = [
    Change(
        Variant("{name}", "TODO: what the change does, in one line",
                expect="holds",  # or the invariant it must break
                preset="{preset}"),  # the configuration the expectation is checked on
        next_state=step,
        # replace={{"MODULE:FUNCTION": my_function}},  # a decision of the model, same signature
    ),
]


def properties(model):
    """Invariants (always) and reachability witnesses (sometimes) the change must keep, on every
    variant of the model; `model.params` holds the configuration."""
    return []


# The model's pure decisions a change may replace (replace={{"module:function": ...}}):
{decisions}
'''


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help="the variant's name, e.g. hw-quorum (lower case, dashes)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"the model it changes (default: {DEFAULT_MODEL})")
    parser.add_argument("--out", metavar="FILE", help="the file to write (default: NAME with underscores, .py)")


def decisions(model: str) -> list[str]:
    """'module:function  first docstring line' for each public function of the model's whole-module
    mutation targets (its protocol code)."""
    definition = load_definition(model)
    lines = []
    for target in definition.mutation_targets:
        if ":" in target:
            continue
        module = importlib.import_module(target)
        for name, fn in vars(module).items():
            # a compiled model's functions are Cython's, not Python functions: any routine defined there
            if name.startswith("_") or not callable(fn) or inspect.isclass(fn) or \
                    getattr(fn, "__module__", None) != target:
                continue
            doc = (inspect.getdoc(fn) or "").split("\n", 1)[0]
            lines.append(f"#   {target}:{name}" + (f"  {doc}" if doc else ""))
    return lines


def run(args: argparse.Namespace) -> int:
    if not _NAME.fullmatch(args.name):
        raise ConfigError(f"new-variant {args.name!r}: a variant name is lower case letters, digits and dots in words "
                          "joined by dashes, e.g. hw-quorum")
    definition = load_definition(args.model)
    if args.name in {v.name for v in definition.variants}:
        raise ConfigError(f"new-variant {args.name}: a built-in variant of model {args.model} has that name")
    out = Path(args.out or args.name.replace("-", "_") + ".py")
    if out.exists():
        raise ConfigError(f"--out {out}: the file exists; kcheck new-variant does not overwrite it")
    preset = "smoke" if "smoke" in definition.presets else "default"
    text = TEMPLATE.format(name=args.name, model=args.model, file=out.name, preset=preset,
                           base=definition.variants[0].name, decisions="\n".join(decisions(args.model)))
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"--out {out}: cannot write: {e.strerror or e}") from None
    print(f"kcheck: wrote {out}: check it with kcheck check --plugin {out} --variant {args.name} --preset {preset}",
          file=sys.stderr)
    return 0
