"""`ScriptTool`: the base class of a real tool handler written in Python.

A handler script defines a subclass with pydantic `Input`/`Output` models, a `name` and `description`, and
`execute(input) -> output`. `run()` makes the script a CLI that prints the output as one JSON object and
takes the input in any of the forms a compiled agent may use (see `model.tool_cli`):

    python3 scripts/x.py --text hi --top 2        # flags, as the compiled prompt teaches (and argparse did)
    python3 scripts/x.py --json < input.json      # the public package's JSON form
    python3 scripts/x.py < input.json             # no arguments: one JSON object on stdin
"""

import json
import sys
from typing import Any, ClassVar, Generic, TextIO, TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError

from open_agent_compiler.model.tool_cli import FLAG_FORM, ToolArgsError, parse_flag_words

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

    def call(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Validate `payload`, execute, and return the output as JSON-able data."""
        result = self.execute(self.input_model.model_validate(payload))  # type: ignore[arg-type]
        if isinstance(result, BaseModel):
            return result.model_dump(mode="json")
        return self.output_model.model_validate(result).model_dump(mode="json")

    @classmethod
    def run(cls, stdin: TextIO | None = None, stdout: TextIO | None = None, argv: list[str] | None = None) -> int:
        """CLI entry point. `argv` defaults to the process's arguments, or to none when `stdin` is given (a caller
        feeding its own input). Bad input: one line on stderr, exit code 2."""
        source, sink = stdin or sys.stdin, stdout or sys.stdout
        words = list(argv if argv is not None else [] if stdin is not None else sys.argv[1:])
        label = cls.name or cls.__name__
        if words and words[0] in ("-h", "--help"):
            fields = " ".join(f"[--{name} ...]" for name in cls.input_model.model_fields)
            sink.write(f"usage: {label} {fields}\n       {label} [--json] < input.json\n\n{cls.description}\n"
                       f"Input: {FLAG_FORM}, or one JSON object on stdin.\n")
            return 0
        try:
            from_stdin = not words or "--json" in words
            payload = json.loads(source.read() or "{}") if from_stdin else {}
            if not isinstance(payload, dict):
                raise ToolArgsError(f"the JSON input is a {type(payload).__name__}, not an object")
            payload.update(parse_flag_words([w for w in words if w != "--json"], cls.input_model))
            output = cls().call(payload)
        except (json.JSONDecodeError, ValidationError, ToolArgsError) as exc:
            print(f"{label}: invalid input: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
        json.dump(output, sink)
        sink.write("\n")
        sink.flush()
        return 0
