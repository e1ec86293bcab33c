"""A model's run configuration: which model, which variant, and the value of every config key.

Precedence, lowest first:
  1. the defaults declared in the model's `ModelDefinition.config_keys`;
  2. the named preset (`--preset NAME`, else the file's `preset = "..."`, else "default");
  3. the keys of a TOML file (flat `key = value` lines; it may also name the
     `model = "..."`, `variant = "..."` and `preset = "..."`);
  4. `--set KEY=VALUE` overrides, in order.
`--model` and `--variant` on the command line win over the file's `model` and `variant`.

Every mistake raises `ConfigError` with one line naming the key, file or allowed values.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping

import model as model_registry
from checker.errors import ConfigError  # re-exported: the name callers import from here
from checker.limits import MAX_CONFIG_BYTES, check_toml_text
from model.interface import ConfigKey, Model, ModelDefinition

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_MODEL = "replication"
DEFAULT_PRESET = "default"
FILE_SELECTORS = ("model", "variant", "preset")  # the non-config keys a TOML file may hold


_DECIMAL = re.compile(r"[+-]?[0-9]+")


def parse_decimal(text: str) -> int:
    """An ASCII decimal integer; `int()` alone would also take `٣` (Unicode digits) and `1_000`."""
    if not _DECIMAL.fullmatch(text.strip()):
        raise ValueError(text)
    return int(text, 10)


@dataclass(frozen=True)
class RunConfig(Mapping[str, Any]):
    """A validated configuration: `config` holds every key of the model's definition.

    It is also a read-only mapping over `config`, so it can be handed to
    `definition.build(run_config, variant)` directly."""

    model: str
    definition: ModelDefinition
    variant: str
    preset: str
    config: Mapping[str, Any]
    file: str | None = None
    overrides: tuple[str, ...] = field(default_factory=tuple)

    def __getitem__(self, key: str) -> Any:
        return self.config[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.config)

    def __len__(self) -> int:
        return len(self.config)

    @property
    def clamped(self) -> dict[str, dict[str, Any]]:
        """Keys the model uses at another value than configured: key -> {"value": used, "why": ...}."""
        found = self.definition.clamps(self.config) if self.definition.clamps else {}
        return {k: {"value": used, "why": why} for k, (used, why) in found.items()}

    def build(self) -> Model:
        """The model, built for this configuration and variant."""
        try:
            return self.definition.build(dict(self.config), self.variant)
        except ValueError as e:  # a model may reject a combination of keys
            raise ConfigError(f"model {self.model} rejects this configuration: {e}") from e


def config_text(definition: ModelDefinition, config: Mapping[str, Any]) -> str:
    """The config echo: `key=value` pairs, a value that stands for something else followed by
    what it means (`replication_factor=0 (every broker)`)."""
    special = {k.name: dict(k.special) for k in definition.config_keys}

    def one(key: str, value: Any) -> str:
        meaning = special.get(key, {}).get(value) if not isinstance(value, bool) else None
        return f"{key}={json.dumps(value)}" + (f" ({meaning})" if meaning else "")

    return " ".join(one(k, v) for k, v in config.items())


def clamp_note(clamped: Mapping[str, Mapping[str, Any]]) -> str:
    """What a config echo adds for the clamped keys (`RunConfig.clamped`), or ""."""
    notes = [f"{k}={json.dumps(c['value'])} ({c['why']})" for k, c in clamped.items()]
    return f"; used: {', '.join(notes)}" if notes else ""


def model_names() -> list[str]:
    return sorted(model_registry.MODELS)


def load_definition(name: str) -> ModelDefinition:
    """The definition of model `name`, or a ConfigError naming the models there are."""
    if name not in model_registry.MODELS:
        raise ConfigError(f"unknown model {name!r} (models: {', '.join(model_names())})")
    module = model_registry.MODELS[name]
    try:
        return model_registry.definition(name)
    except ModuleNotFoundError as e:
        if e.name is not None and module.startswith(e.name):
            raise ConfigError(f"model {name!r} is not available: module {module} does not exist yet") from e
        raise ConfigError(f"model {name!r} failed to import: {type(e).__name__}: {e}") from e
    except Exception as e:  # a broken model module is reported, not dumped as a traceback
        raise ConfigError(f"model {name!r} failed to import: {type(e).__name__}: {e}") from e


def read_toml(path: str) -> dict[str, Any]:
    """The table of a TOML file, or a ConfigError naming the file."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
        check_toml_text(raw, f"config file {path}")  # before tomllib recurses
        return tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"config file {path}: is a directory, not a TOML file") from None
    except OSError as e:
        raise ConfigError(f"config file {path}: cannot read: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"config file {path}: malformed TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"config file {path}: not UTF-8 text: {e}") from None


def parse_override(text: str) -> tuple[str, str]:
    """Split a `--set KEY=VALUE` argument."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"--set {text}: expected KEY=VALUE, e.g. --set brokers=3")
    return key, value.strip()


def _type_name(t: type) -> str:
    return {int: "an integer", bool: "true or false", str: "a string"}.get(t, t.__name__)


def _allowed(definition: ModelDefinition) -> str:
    return ", ".join(k.name for k in definition.config_keys)


def coerce(key: ConfigKey, value: Any, where: str, parse: bool = False) -> Any:
    """`value` as `key.type`, range-checked; with `parse` (a --set value) a string is parsed."""
    if parse and isinstance(value, str) and key.type is not str:
        text = value.strip()
        if key.type is bool:
            if text.lower() not in ("true", "false"):
                raise ConfigError(f"{where}: key {key.name!r} must be true or false, got {value!r}")
            value = text.lower() == "true"
        elif key.type is int:
            try:
                value = parse_decimal(text)
            except ValueError:
                raise ConfigError(f"{where}: key {key.name!r} must be an integer, got {value!r}") from None
    if key.type is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{where}: key {key.name!r} must be an integer, got {value!r}")
    if key.type is bool and not isinstance(value, bool):
        raise ConfigError(f"{where}: key {key.name!r} must be true or false, got {value!r}")
    if key.type is str and not isinstance(value, str):
        raise ConfigError(f"{where}: key {key.name!r} must be a string, got {value!r}")
    if key.type is int:
        low = key.min if key.min is not None else "-inf"
        high = key.max if key.max is not None else "inf"
        if (key.min is not None and value < key.min) or (key.max is not None and value > key.max):
            raise ConfigError(f"{where}: key {key.name!r} = {value} is out of range (min {low}, max {high})")
    return value


def _apply(config: dict[str, Any], definition: ModelDefinition, values: Mapping[str, Any], where: str,
           parse: bool = False) -> None:
    keys = {k.name: k for k in definition.config_keys}
    for name, value in values.items():
        if isinstance(value, dict):
            raise ConfigError(f"{where}: key {name!r} is a table; the config format is flat `key = value`")
        if name not in keys:
            raise ConfigError(
                f"{where}: unknown key {name!r} for model {definition.name} (allowed: {_allowed(definition)})"
            )
        config[name] = coerce(keys[name], value, where, parse)


def _selector(table: Mapping[str, Any], name: str, path: str) -> str | None:
    value = table.get(name)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"config file {path}: {name!r} must be a string, got {value!r}")
    return value


def load_config(
    model: str | ModelDefinition | None = None,
    variant: str | None = None,
    preset: str | None = None,
    path: str | None = None,
    overrides: Iterable[str] | Mapping[str, Any] = (),
) -> RunConfig:
    """Resolve and validate a configuration (see the module docstring for the precedence).

    `model` is a model name (looked up in `model.MODELS`) or a `ModelDefinition`; `overrides`
    are `KEY=VALUE` strings as given to `--set`, or a mapping (string values are parsed the
    same way, others taken as they are)."""
    table: dict[str, Any] = read_toml(path) if path is not None else {}
    file_model, file_variant, file_preset = (_selector(table, key, str(path)) for key in FILE_SELECTORS)
    if isinstance(model, ModelDefinition):
        definition, model_name = model, model.name
    else:
        model_name = _first_given(model, file_model, DEFAULT_MODEL)
        definition = load_definition(model_name)

    variants = [v.name for v in definition.variants]
    variant_name = _first_given(variant, file_variant, variants[0] if variants else "")
    if variant_name not in variants:
        raise ConfigError(
            f"unknown variant {variant_name!r} for model {model_name} (variants: {', '.join(variants)})"
        )

    preset_name = _first_given(preset, file_preset, DEFAULT_PRESET)
    if preset_name not in definition.presets and preset_name != DEFAULT_PRESET:
        names = ", ".join(sorted(set(definition.presets) | {DEFAULT_PRESET}))
        raise ConfigError(f"unknown preset {preset_name!r} for model {model_name} (presets: {names})")

    config: dict[str, Any] = {k.name: k.default for k in definition.config_keys}
    _apply(config, definition, definition.presets.get(preset_name, {}), f"preset {preset_name}")
    file_values = {k: v for k, v in table.items() if k not in FILE_SELECTORS}
    _apply(config, definition, file_values, f"config file {path}")
    if isinstance(overrides, Mapping):
        override_list = tuple(f"{k}={v}" for k, v in overrides.items())
        for key, value in overrides.items():
            _apply(config, definition, {key: value}, f"override {key}={value}", parse=True)
    else:
        override_list = tuple(overrides)
        for text in override_list:
            key, value = parse_override(text)
            _apply(config, definition, {key: value}, f"--set {text}", parse=True)
    explicit = set(file_values) | {parse_override(text)[0] for text in override_list}
    _force_variant_settings(config, definition, variant_name, explicit)
    return RunConfig(model_name, definition, variant_name, preset_name, config, path, override_list)


def _first_given(*names: str | None) -> str:
    """The first name given; an empty one is given (and then unknown), not "use the default"."""
    return next(n for n in names if n is not None)


def _force_variant_settings(config: dict[str, Any], definition: ModelDefinition, variant: str,
                            explicit: set[str]) -> None:
    """A configuration variant (e.g. ELR off) fixes some keys over the preset; a file or --set
    giving another value for one of them is a contradiction, reported rather than overruled."""
    for key, value in next(v for v in definition.variants if v.name == variant).settings:
        if key in explicit and config[key] != value:
            raise ConfigError(f"variant {variant} sets {key} = {json.dumps(value)}; "
                              f"the configuration asks for {json.dumps(config[key])}")
        config[key] = value
