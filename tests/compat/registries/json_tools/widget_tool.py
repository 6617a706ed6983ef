"""The `widget` tool's handler: a ScriptTool whose input model both packages turn into a JSON schema."""

from pydantic import BaseModel

from open_agent_compiler.runtime import ScriptTool


class WidgetIn(BaseModel):
    size: int


class WidgetOut(BaseModel):
    made: int


class Widget(ScriptTool[WidgetIn, WidgetOut]):
    name = "widget"
    description = "Makes a widget of the given size."

    def execute(self, input: WidgetIn) -> WidgetOut:
        return WidgetOut(made=input.size)


if __name__ == "__main__":
    Widget.run()
