"""The command-line form of a tool's input, both ways: one place decides how an input becomes words after a
tool's command (what agent tests make a harness run and what the compiled prompt teaches) and how a handler
script reads them back (`ScriptTool.run`).

Words are `--name value` per input field, as the public package's argparse CLI takes them: strings as they are,
numbers as written, booleans as `--name` / `--no-name`, lists and objects as JSON text (`--tags '["a","b"]'`).
`--name=value` works too, and a hyphenated `--top-n` names the field `top_n`.
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

FLAG_FORM = ("each input field as `--name value` (text as is, numbers as written, true/false as `--name` / "
             "`--no-name`, lists and objects as JSON text)")


class ToolArgsError(ValueError):
    """Words that are not a tool's `--name value` input."""


def flag_words(args: Mapping[str, Any]) -> list[str]:
    """The words after a tool's command for `args` (not shell-quoted). A `None` value is left out."""
    words: list[str] = []
    for name, value in args.items():
        if value is None:
            continue
        if value is True or value is False:
            words.append(f"--{name}" if value else f"--no-{name}")
        elif isinstance(value, str):
            words += [f"--{name}={value}"] if value.startswith("--") else [f"--{name}", value]
        else:
            words += [f"--{name}", json.dumps(value, ensure_ascii=False)]
    return words


def _decoded(text: str) -> Any:
    """JSON text as its value when it is not a plain string; otherwise the text."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return text if isinstance(value, str) else value


def _typed(text: str, adapter: TypeAdapter[Any] | None) -> Any:
    """The field's own type decides: text it accepts stays text (`--id 007` for a string), else JSON."""
    if adapter is not None:
        try:
            adapter.validate_python(text)
            return text
        except ValidationError:
            pass
    return _decoded(text)


def _field_name(flag: str, fields: Sequence[str]) -> str:
    if flag in fields or not fields:
        return flag
    underscored = flag.replace("-", "_")
    return underscored if underscored in fields else flag


def parse_flag_words(words: Sequence[str], model: type[BaseModel] | None = None) -> dict[str, Any]:
    """`--name value` words as an input dict (the inverse of `flag_words`). With `model`, each value is read as
    its field's type; without, JSON text that is not a string is decoded. Raises `ToolArgsError`."""
    fields = list(model.model_fields) if model is not None else []
    adapters = {name: TypeAdapter(info.annotation) for name, info in model.model_fields.items()} if model else {}
    args: dict[str, Any] = {}
    index = 0
    while index < len(words):
        word = words[index]
        if not word.startswith("--") or word == "--":
            raise ToolArgsError(f"unexpected argument {word!r}: give the input as --name value")
        flag, has_value, inline = word[2:].partition("=")
        following = words[index + 1] if index + 1 < len(words) else None
        if has_value:
            value: Any = inline
            index += 1
        elif following is not None and not following.startswith("--"):
            value = following
            index += 2
        else:  # a lone flag is a boolean: --name is true, --no-name false
            index += 1
            if flag.startswith("no-") and _field_name(flag[3:], fields) in fields:
                args[_field_name(flag[3:], fields)] = False
            elif not fields or _field_name(flag, fields) in fields:
                args[_field_name(flag, fields)] = True
            else:
                raise ToolArgsError(f"unknown option --{flag}")
            continue
        name = _field_name(flag, fields)
        if fields and name not in fields:
            raise ToolArgsError(f"unknown option --{flag} (fields: {', '.join(fields)})")
        args[name] = _typed(value, adapters.get(name)) if isinstance(value, str) else value
    return args
