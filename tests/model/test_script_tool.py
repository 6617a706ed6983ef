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


class LintIn(BaseModel):
    source: str
    max_line: int = 79
    strict: bool = False
    ignore: list[str] = []
    code: str = ""


class LintOut(BaseModel):
    got: dict


class Echo(ScriptTool[LintIn, LintOut]):
    name = "lint"
    description = "Echoes its input."

    def execute(self, input: LintIn) -> LintOut:
        return LintOut(got=input.model_dump())


def _cli(argv: list[str], stdin: str = "") -> tuple[int, dict | None]:
    out = io.StringIO()
    code = Echo.run(io.StringIO(stdin), out, argv=argv)
    return code, json.loads(out.getvalue()) if code == 0 else None


def test_the_flag_form_the_prompt_teaches_and_argparse_took() -> None:
    # what an agent runs: `python3 scripts/lint.py --source '...' --max_line 20 --strict --ignore '["E1"]'`
    code, out = _cli(["--source", "x = 1", "--max_line", "20", "--strict", "--ignore", '["E1"]', "--code", "007"])
    assert code == 0 and out == {"got": {"source": "x = 1", "max_line": 20, "strict": True, "ignore": ["E1"],
                                         "code": "007"}}  # a string field keeps "007" as text
    assert _cli(["--source=--x", "--no-strict", "--max-line", "3"])[1] == {
        "got": {"source": "--x", "max_line": 3, "strict": False, "ignore": [], "code": ""}}


def test_json_on_stdin_with_or_without_the_public_json_flag() -> None:
    assert _cli([], '{"source": "a", "strict": true}')[1]["got"]["strict"] is True
    assert _cli(["--json"], '{"source": "a"}')[1]["got"]["source"] == "a"
    assert _cli(["--json", "--max_line", "5"], '{"source": "a"}')[1]["got"]["max_line"] == 5


def test_bad_words_are_one_line_exit_2(capsys) -> None:
    for argv in (["stray"], ["--source", "a", "--nope", "1"], ["--max_line", "x", "--source", "a"], []):
        assert _cli(argv, "[]" if not argv else "")[0] == 2
        err = capsys.readouterr().err
        assert err.startswith("lint: invalid input:") and err.count("\n") == 1, err


def test_flag_words_round_trip_through_the_handler() -> None:
    from open_agent_compiler.model.tool_cli import flag_words

    args = {"source": "print('hi')\n# done", "max_line": 12, "strict": False, "ignore": ["E1", "W2"],
            "code": "12"}
    assert _cli(flag_words(args))[1] == {"got": args}
