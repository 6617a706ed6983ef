"""`ScriptTool`: the base class of a real tool handler written in Python.

A handler script defines a subclass with pydantic `Input`/`Output` models, a `name` and `description`, and
`execute(input) -> output`. `run()` makes the script a CLI: JSON object in on stdin, JSON out on stdout.
"""

import json
import sys
from typing import Any, ClassVar, Generic, TextIO, TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError

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
    def run(cls, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
        """CLI entry point: read one JSON object, write the JSON result. Bad input → message on stderr, 2."""
        source, sink = stdin or sys.stdin, stdout or sys.stdout
        try:
            payload = json.loads(source.read() or "{}")
            output = cls().call(payload)
        except (json.JSONDecodeError, ValidationError) as exc:
            print(f"{cls.name or cls.__name__}: invalid input: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
        json.dump(output, sink)
        sink.write("\n")
        sink.flush()
        return 0
