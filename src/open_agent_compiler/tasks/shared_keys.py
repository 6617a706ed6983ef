"""Which key a test is checked under when the shared state knows passes of it that the plan's key missed.

A test's key covers the project files its last pass loaded (discovered imports). The plan keys it over the files
its *local* state remembers, else those of the newest shared pass in the planning read. Both can be stale: the
local row of a checkout that last ran an older version of the code, or a read that started before another runner
pushed its pass (the plan reads again before the run, but the key was already computed). The test then ran again
as 'never ran' (or 'changed'), and recorded its pass under the very key the shared state already held.

So when the shared state holds no outcome under the planned key, the test is keyed again over the files each of
its shared passes loaded, newest first: a key equal to that pass's key means this checkout holds the bytes that
passed (the key covers every input, those files included), and the test is green. A planned key with an outcome
keeps it: a failure there is never traded for another key's pass."""

from typing import TYPE_CHECKING

from open_agent_compiler.keys.key import discovered_path
from open_agent_compiler.tasks.shared_session import SharedSession

if TYPE_CHECKING:
    from pathlib import Path

    from open_agent_compiler.tasks.planning import Keyer


def shared_pass_key(keyer: "Keyer", shared: SharedSession, root: "Path", test_id: str,
                    name: str) -> tuple[str, list[str]] | None:
    """(key, discovered files) of a shared pass of the test whose key this checkout computes too, or None."""
    passes = sorted(((known.recorded_at, key, known.imports or ()) for key, known in shared.known.get(name, {}).items()
                     if known.status == "pass"), reverse=True)
    tried = {tuple(sorted(keyer.discovered.get(test_id, ())))}
    for _, key, imports in passes:
        files = sorted(discovered_path(root, path) for path in imports)
        if tuple(files) in tried:
            continue
        tried.add(tuple(files))
        if keyer.key_over(test_id, files) == key:
            return key, files
    return None
