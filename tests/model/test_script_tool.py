"""ScriptTool: a typed handler that also works as a JSON-in/JSON-out CLI."""

import io
import json

from pydantic import BaseModel

from open_agent_compiler import ScriptTool


class AddIn(BaseModel):
    a: int
    b: int = 0


class AddOut(BaseModel):
    total: int


class Add(ScriptTool[AddIn, AddOut]):
    name = "add"
    description = "Adds two numbers."

    def execute(self, input: AddIn) -> AddOut:
        return AddOut(total=input.a + input.b)


def test_models_are_learned_from_the_generic_base() -> None:
    assert Add.input_model is AddIn and Add.output_model is AddOut
    assert Add().call({"a": 2, "b": 3}) == {"total": 5}


def test_run_reads_json_on_stdin_and_writes_json() -> None:
    out = io.StringIO()
    assert Add.run(io.StringIO('{"a": 40, "b": 2}'), out) == 0
    assert json.loads(out.getvalue()) == {"total": 42}


def test_run_rejects_bad_input_with_exit_2(capsys) -> None:
    for payload in ('{"b": 1}', "not json"):
        out = io.StringIO()
        assert Add.run(io.StringIO(payload), out) == 2
        assert out.getvalue() == ""
        err = capsys.readouterr().err
        assert err.startswith("add: invalid input:") and err.count("\n") == 1
