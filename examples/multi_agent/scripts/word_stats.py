"""The real handler of the `word-stats` tool: flags (or one JSON object on stdin) in, a JSON object out.

    python3 scripts/word_stats.py --text "to be or not to be" --top 2
"""

import re
from collections import Counter

from pydantic import BaseModel, Field

from open_agent_compiler.model.script_tool import ScriptTool


class WordStatsInput(BaseModel):
    text: str
    top: int = Field(default=3, ge=1, le=50)


class WordStatsOutput(BaseModel):
    words: int
    unique: int
    top: list[str]


class WordStats(ScriptTool[WordStatsInput, WordStatsOutput]):
    name = "word-stats"
    description = "Count the words of a text and name the most frequent ones."

    def execute(self, input: WordStatsInput) -> WordStatsOutput:  # noqa: A002 - ScriptTool's vocabulary
        words = re.findall(r"[\w']+", input.text.lower())
        counts = Counter(words)
        ranked = sorted(counts, key=lambda word: (-counts[word], word))
        return WordStatsOutput(words=len(words), unique=len(counts), top=ranked[: input.top])


if __name__ == "__main__":
    raise SystemExit(WordStats.run())
