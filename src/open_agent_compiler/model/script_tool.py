"""`ScriptTool`: the base class of a real tool handler written in Python.

A handler script defines a subclass with pydantic `Input`/`Output` models, a `name` and `description`, and
`execute(input) -> output`. `run()` makes the script a CLI that prints the output as one JSON object and
takes the input in any of the forms a compiled agent may use (see `model.tool_cli`):

    python3 scripts/x.py --text hi --top 2        # flags, as the compiled prompt teaches (and argparse did)
    python3 scripts/x.py --json < input.json      # the public package's JSON form
    python3 scripts/x.py < input.json             # no arguments: one JSON object on stdin

As in 1.16.5, a test may answer for the handler (`--mock-callable`, `--mock`, `$OAC_MOCK_RESPONSE`, then the
class's own `mock_response()`; see `model.tool_mock`), and an `execute(self, input, resources)` receives the
resources bound in `$OAC_RESOURCES_JSON`. Run as a command, bad input exits the process with code 2.
"""

import json
import sys
import types
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, Literal, TextIO, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from open_agent_compiler.model.resource_handle import ResourceHandle
from open_agent_compiler.model.tool_cli import FLAG_FORM, ToolArgsError, parse_flag_words
from open_agent_compiler.model.tool_mock import given_mock, resources_from_env, split_mock_options, takes_resources

def _type_name(annotation: Any) -> str:
    """A field's type as 1.16.5's `get_input_schema()` names it: `Optional[X]` is X, `list[str]` is `list`."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        return _type_name(members[0]) if len(members) == 1 else "str"
    if origin is Literal:
        return "Literal"
    named = origin or annotation
    return getattr(named, "__name__", str(named))


def _as_data(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


InputT = TypeVar("InputT", bound=BaseModel)
OutputT = TypeVar("OutputT", bound=BaseModel)


class ScriptTool(Generic[InputT, OutputT]):
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    input_model: ClassVar[type[BaseModel]]
    output_model: ClassVar[type[BaseModel]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Learn Input/Output from `class X(ScriptTool[In, Out])` so subclasses need not repeat them.
        for base in getattr(cls, "__orig_bases__", ()):
            if get_origin(base) is ScriptTool:
                args = get_args(base)
                if len(args) == 2 and all(isinstance(a, type) and issubclass(a, BaseModel) for a in args):
                    cls.input_model, cls.output_model = args

    def execute(self, input: InputT) -> OutputT:  # noqa: A002 - the seed's vocabulary
        raise NotImplementedError

    def mock_response(self, input: InputT) -> OutputT | None:  # noqa: A002
        """An answer that replaces `execute()` when not `None` (1.16.5's hook; by default none)."""
        return None

    @classmethod
    def get_input_schema(cls) -> list[dict[str, Any]]:
        """One `{name, type, description, required}` per input field, in declaration order (1.16.5's form)."""
        return [{"name": name, "type": _type_name(info.annotation), "description": info.description or "",
                 "required": info.is_required()} for name, info in cls.input_model.model_fields.items()]

    def _execute(self, validated: BaseModel, resources: Mapping[str, ResourceHandle] | None) -> Any:
        if takes_resources(self.execute):
            bound = dict(resources_from_env() if resources is None else resources)
            return self.execute(validated, resources=bound)  # type: ignore[arg-type, call-arg]
        return self.execute(validated)  # type: ignore[arg-type]

    def call(self, payload: dict[str, Any], resources: Mapping[str, ResourceHandle] | None = None) -> dict[str, Any]:
        """Validate `payload`, execute, and return the output as JSON-able data. `resources` default to the ones
        bound in `$OAC_RESOURCES_JSON`, as when the script runs as a command."""
        validated = self.input_model.model_validate(payload)
        mocked = self.mock_response(validated)  # type: ignore[arg-type]
        result = mocked if mocked is not None else self._execute(validated, resources)
        if isinstance(result, BaseModel):
            return result.model_dump(mode="json")
        return self.output_model.model_validate(result).model_dump(mode="json")

    @classmethod
    def run(cls, stdin: TextIO | None = None, stdout: TextIO | None = None, argv: list[str] | None = None) -> int:
        """CLI entry point. `argv` defaults to the process's arguments, or to none when `stdin` is given (a caller
        feeding its own input). Bad input: one line on stderr and code 2, returned to a caller that passed
        `stdin` or `argv`, else the process exits with it (the script's `T.run()` is its last line)."""
        code = cls._run(stdin, stdout, argv)
        if code and stdin is None and argv is None:
            raise SystemExit(code)
        return code

    @classmethod
    def _run(cls, stdin: TextIO | None, stdout: TextIO | None, argv: list[str] | None) -> int:
        source, sink = stdin or sys.stdin, stdout or sys.stdout
        words = list(argv if argv is not None else [] if stdin is not None else sys.argv[1:])
        label = cls.name or cls.__name__
        if words and words[0] in ("-h", "--help"):
            fields = " ".join(f"[--{name} ...]" for name in cls.input_model.model_fields)
            sink.write(f"usage: {label} [--mock SPEC] [--mock-callable MODULE:CALLABLE] {fields}\n"
                       f"       {label} [--json] < input.json\n\n{cls.description}\n"
                       f"Input: {FLAG_FORM}, or one JSON object on stdin.\n")
            return 0
        try:
            words, mock_options = split_mock_options(words)
            from_stdin = not words or "--json" in words
            payload = json.loads(source.read() or "{}") if from_stdin else {}
            if not isinstance(payload, dict):
                raise ToolArgsError(f"the JSON input is a {type(payload).__name__}, not an object")
            payload.update(parse_flag_words([w for w in words if w != "--json"], cls.input_model))
            validated = cls.input_model.model_validate(payload)
            mocked, answer = given_mock(mock_options, validated)
            output = _as_data(answer) if mocked else cls().call(validated.model_dump())
        except (json.JSONDecodeError, ValidationError, ToolArgsError) as exc:
            print(f"{label}: invalid input: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
        json.dump(output, sink)
        sink.write("\n")
        sink.flush()
        return 0
