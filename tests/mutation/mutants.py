"""Hand mutants of the code that decides green, permissions and writes, and a runner that applies each one,
runs the targeted tests of its area and restores the file (see docs/mutation-audit.md).

    python tests/mutation/mutants.py [--only AREA[,AREA]] [--id ID[,ID]] [--timeout S] [--log FILE] [--list]

Each mutant is (id, area, file, old text, new text): `old` must occur exactly once in the file. A mutant is
CAUGHT when its area's tests fail (pytest exit 1) and SURVIVED when they pass; a timeout or a collection error is
reported as such. The file is restored in a `finally` (SIGTERM/SIGHUP are turned into an exception so that runs
too), and a backup left by a killed runner (.audit/mutation-backup/) is put back when the runner starts.
Not a pytest module (name without `test_`; tests/mutation/conftest.py also ignores it).
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = "src/open_agent_compiler/"
BACKUP = ROOT / ".audit" / "mutation-backup"

# the tests of each area, most specific first (pytest runs the arguments in order; -x stops at the first failure)
TESTS: dict[str, list[str]] = {
    "keys": ["tests/guard/test_key_survivors.py", "tests/engine/test_read_tracker_own_io.py",
             "tests/testing/test_keys.py", "tests/engine/test_key_cache.py",
             "tests/guard/test_key_completeness.py", "tests/guard/test_one_loader.py",
             "tests/engine/test_key_hardening.py", "tests/testing/test_handler_resources.py",
             "tests/engine/test_stale_green_fuzz.py", "tests/engine/test_factory_part.py",
             "tests/engine/test_held_reads.py"],
    "tasks": ["tests/guard/test_key_survivors.py", "tests/testing/test_prefetch.py", "tests/engine/test_planning.py",
              "tests/engine/test_repeats.py", "tests/engine/test_compile_tasks.py", "tests/engine/test_semantics.py",
              "tests/engine/test_doit_commands.py", "tests/engine/test_prefetch_runs.py",
              "tests/engine/test_compile_up_to_date.py", "tests/engine/test_reliability.py", "tests/engine/test_cache.py",
              "tests/engine/test_selection_cli.py", "tests/engine/test_state_truth_local.py"],
    "agents": ["tests/agents/test_agent_runner.py", "tests/agents/test_scripted_cli.py",
               "tests/agents/test_session_turn.py", "tests/guard/test_blocking.py", "tests/agents/test_judges.py"],
    "permissions": ["tests/compiler/test_capabilities_readback.py", "tests/hardening/test_permissions_capability.py",
                    "tests/hardening/test_permissions_multi_agent.py", "tests/hardening/test_permissions_order.py",
                    "tests/testing/test_evaluators_permissions.py", "tests/compat/test_permission_meaning.py",
                    "tests/compat/test_dialect_meaning.py", "tests/compiler/test_opencode_rules_index.py",
                    "tests/compiler/test_roundtrip_property.py", "tests/compiler/test_dialect_outputs.py",
                    "tests/compiler/test_own_yaml.py"],
    "writer": ["tests/compiler/test_writer.py", "tests/compiler/test_writer_batch.py",
               "tests/compiler/test_writer_ownership.py", "tests/hardening/test_writes_compile.py",
               "tests/hardening/test_writes_fs.py", "tests/hardening/test_writes_oac_test.py"],
    "evaluators": ["tests/testing", "tests/engine/test_junit_counts.py", "tests/hardening/test_output_and_results.py",
                   "tests/compat/test_evaluator_behaviour.py", "tests/compat/test_evaluator_results.py"],
    "shared": ["tests/shared_state"],
    "cassettes": ["tests/agents/test_stream_text.py", "tests/agents/test_cassettes.py"],
    "history": ["tests/report/test_merge_report_truth.py", "tests/report/test_history_index.py",
                "tests/engine/test_state_truth_local.py"],
}


@dataclass(frozen=True)
class Mutant:
    id: str
    area: str
    file: str  # relative to src/open_agent_compiler/
    old: str
    new: str
    what: str


M = Mutant
MUTANTS: list[Mutant] = [
    # keys ----------------------------------------------------------------------------------------------------------
    M("K01", "keys", "keys/key.py", 'found = {files.label(p): files(p) for p in discovered}',
      'found = {files.label(p): files(p) for p in discovered if not str(p).endswith("/")}',
      "discovered folder listings dropped from the key"),
    M("K02", "keys", "keys/key.py",
      'return [spec for item in response.sequence if isinstance(item, MockResponse) for spec in callable_specs(item)]',
      'return []', "callable specs not searched inside `sequence` mocks"),
    M("K03", "keys", "keys/key.py", '                file_parts[f"module {module}"] = "missing"\n',
      '                pass\n', "a missing callable-mock module no longer keyed as missing"),
    M("K04", "keys", "keys/key.py",
      'evaluator_files([*case.test.evaluators, *(e for turn in turns for e in turn.evaluators)], files)',
      'evaluator_files([*case.test.evaluators], files)', "per-turn project evaluators' source not in the key"),
    M("K05", "keys", "keys/key.py", '        parts.update((label, files(path)) for label, path in zip(labels, matches))\n',
      '', "`inputs=` globs keyed by the list of matches only, not their bytes"),
    M("K06", "keys", "keys/key.py", '        found.update(declared_inputs(case.tool.inputs, files))\n', '',
      "a tool test's key ignoring the tool's `inputs=`"),
    M("K07", "keys", "keys/key.py", 'files={**found, **file_parts}, hermetic=hermetic if real else None,',
      'files={**found, **file_parts}, hermetic=None,', "a tool test's key ignoring --hermetic"),
    M("K08", "keys", "keys/key.py",
      'return KeyParts(definition=definition, target=target, model=model, dialect=dialect, files=found,',
      'return KeyParts(definition=definition, target=target, dialect=dialect, files=found,',
      "a capability test's key dropping the model parameters"),
    M("K09", "keys", "keys/key.py", '{"mock": entries, "tool": tool_digest(reachable.tool)}',
      '{"mock": entries}', "an agent test's key dropping its reachable tools' definitions"),
    M("K10", "keys", "keys/key.py", 'dialect=dialect, hermetic=hermetic if any_real else None, invoker=invoker,',
      'dialect=dialect, hermetic=hermetic if any_real else None,', "an agent test's key dropping the invoker"),
    M("K11", "keys", "keys/key.py", 'how = " (no longer read)" if path not in value else ""',
      'how = " (no longer read)" if path not in old else ""', "--explain mislabelling a file that left the key"),
    M("K12", "keys", "keys/cache.py",
      'key = known.get(test_id) if test_id not in pinned else None', 'key = known.get(test_id)',
      "key cache serving a cached key to a test with discovered files"),
    M("K13", "keys", "keys/cache.py", 'sorted((n, profiles[n]) for n in names),\n                            dialect, variant,',
      'sorted((n, profiles[n]) for n in names),\n                            variant,',
      "key-cache scope not covering the dialect"),
    M("K14", "keys", "keys/key.py",
      'JUDGING_CODE = ("model", "compiler", "execution", "history", "testing", "keys", "usercode")',
      'JUDGING_CODE = ("model", "compiler", "execution", "history", "testing", "keys")',
      "engine fingerprint not covering usercode/"),
    M("K15", "keys", "usercode/project_imports.py", '        pending.extend(_module_reads.get(name, ()))\n', '',
      "files a module read at import time not followed"),
    M("K16", "keys", "usercode/project_imports.py", '        if parent:\n            pending.append(parent)\n', '',
      "a submodule's package __init__ not in its files"),
    M("K17", "keys", "usercode/loader.py",
      '    if read:\n        loaded.files = tuple(sorted({*loaded.files, *project_imports.files_of(read)}))\n', '',
      "what user code reads when called (not imported) not in its files"),
    M("K18", "keys", "usercode/loader.py", 'hasher.update(named.encode("utf-8", "surrogateescape") + b"\\0" + xxhash.xxh3_128_digest(data))',
      'hasher.update(named.encode("utf-8", "surrogateescape") + b"\\0")', "user-code digest over names, not bytes"),
    M("K19", "keys", "usercode/reads.py", 'if ("w" in mode or "a" in mode or "x" in mode) and "+" not in mode:',
      'if "w" in mode or "a" in mode or "x" in mode or "+" in mode:', "a file opened r+ not recorded as read"),
    M("K20", "keys", "tasks/planning.py",
      'key = digest([(path, digest_bytes(contents[path])) for path in sorted(contents)])',
      'key = digest(sorted(contents))', "the compile key covering compiled file names, not bytes"),
    M("K21", "keys", "tasks/planning.py", '(options.variant, options.hermetic), keyer.parts_of, pinned=set(keyer.discovered),',
      '(options.variant, options.hermetic), keyer.parts_of,', "tests with discovered files not pinned in the key cache"),
    M("K22", "keys", "usercode/loader.py",
      '        except BaseException as exc:  # noqa: BLE001 - SystemExit, GeneratorExit, custom BaseException subclasses',
      '        except Exception as exc:  # noqa: BLE001 - SystemExit, GeneratorExit, custom BaseException subclasses',
      "sys.exit() in called user code escaping the loader"),
    M("K23", "keys", "fsio.py", "    _OWN.active = True\n    try:", "    _OWN.active = False\n    try:",
      "oac's own fsio opens (another thread, during a test) recorded as the test's reads"),
    M("K24", "keys", "keys/key.py", '        file_parts[RESOURCES_PART] = digest(os.environ.get(RESOURCES_ENV))', '',
      "the resources a real handler reads ($OAC_RESOURCES_JSON) not in its test's key"),
    M("K25", "keys", "execution/handler_child.py", '        bind_resources(request)\n', '',
      "a forked handler reading the zygote's $OAC_RESOURCES_JSON, not the run's"),
    M("K26", "keys", "keys/key.py", 'in_engine = bool(evaluated) or bool(common["judge"]) or',
      'in_engine = bool(evaluated) or', "a judged tool test without files losing the factory part"),
    M("K27", "keys", "keys/cache.py", 'if parts.files or parts.factory:', 'if parts.files:',
      "the key cache keeping the key of a test with a factory part (a judged test without files)"),
    M("K28", "keys", "keys/key.py", '(bool(file_parts) if not real else not zygote.running())',
      '(bool(file_parts) if not real else True)',
      "a real handler's test keyed on what the factory read (every prompt edit re-runs every handler test)"),
    M("K29", "keys", "usercode/private_reads.py", '            return None  # an instance (a dict, a logger, a session): state',
      '            pass', "a module with a mutable global (a dict, an lru_cache) judged to keep nothing: its reads held"),
    M("K30", "keys", "usercode/private_reads.py", 'not _immutable(defaults + kwdefaults) or ',
      '', "a mutable default argument not seen as state"),
    M("K31", "keys", "usercode/private_reads.py", '    cells = tuple(cell.cell_contents for cell in function.__closure__ or () if _filled(cell))',
      '    cells = ()', "a closure's cells not looked at (a dict captured by a module-level function)"),
    M("K32", "keys", "usercode/private_reads.py", '                return None  # a class of its own: class attributes are state',
      '                pass', "a module defining a class judged to keep nothing"),
    M("K33", "keys", "usercode/private_reads.py", '_changed(shape, _shape(name))',
      'False', "no look after the test: a function given an attribute keeps the read unseen"),
    M("K34", "keys", "usercode/private_reads.py", '        known = not _MUTATING_NAMES.intersection(code.co_names) \\',
      '        known = True or not _MUTATING_NAMES.intersection(code.co_names) \\', "no code scan: a store into os.environ (or any item or attribute) passes"),
    M("K35", "keys", "usercode/private_reads.py", '            if kind == "oac" or not _reads_files_only(frame):\n                judged = None',
      '            if False:\n                judged = None', "a read made inside a library (linecache keeps it) held for the test"),
    M("K36", "keys", "usercode/private_reads.py", '        pending.extend(shape[0])',
      '        pass', "the project modules a module refers to not judged (the store it hands its read to)"),
    M("K37", "keys", "usercode/private_reads.py", '    refers = {edge for edge in _edges(name) or () if _is_project_name(edge)}',
      '    refers = set()', "import edges left out of a module's judgement (a store imported inside a function)"),
    M("K38", "keys", "usercode/private_reads.py", '    return not _judge_module_set(now[0] - before[0])',
      '    return False', "a project module imported after the read not judged at the test's end"),
    M("K39", "keys", "usercode/private_reads.py", '_plain_function(frame, name) and ',
      '', "a closure or method on the stack (state no global holds) judged by its module only"),
    M("K40", "keys", "usercode/private_reads.py", '        elif kind == "" and callee_is_project:  # a library calling project code: a decorator, a callback, a thread\n            return module, None',
      '        elif kind == "" and callee_is_project:\n            pass', "a library calling project code (a memoizer, a thread) not in the way of a held read"),
    M("K42", "keys", "usercode/private_reads.py", '        and not code.co_flags & _SUSPENDABLE',
      '        and True', "a generator's frame on the stack (it keeps its locals between tests) judged plain"),
    M("K43", "keys", "usercode/private_reads.py", '"setitem", "delitem", ', '',
      "operator.setitem into an argument (a partial's dict kept on builtins) passing the code scan"),
    M("K44", "keys", "usercode/private_reads.py", '(op == _BINARY_OP and arg in _IN_PLACE)', 'False',
      "an in-place operator (`box |= {...}` on a kept dict) passing the code scan"),
    M("K41", "keys", "usercode/reads.py", "    if held is not None:\n        private_reads.hold(entry, module, held)",
      "    if False:\n        private_reads.hold(entry, module, held)",
      "no read held: one helper reading a fixture per call keys every test reaching it on every fixture"),
    # tasks ---------------------------------------------------------------------------------------------------------
    M("T01", "tasks", "tasks/graph.py", '''    return safe if safe == raw else f"{safe}~{xxhash.xxh32_hexdigest(raw.encode('utf-8', 'surrogatepass'))}"''',
      '    return safe', "task_name without its digest suffix (`a b` and `a_b` collide)"),
    M("T02", "tasks", "tasks/graph.py", 'task.task_dep = after_compile if agent_test else none',
      'task.task_dep = none', "an agent test without files losing its task_dep on the compile task"),
    M("T03", "tasks", "tasks/graph.py", 'if not self.options.force and self.green_at(name, case.test_id) is not None:',
      'if self.options.force and self.green_at(name, case.test_id) is not None:',
      "the prefetcher starting real handlers of green tests"),
    M("T04", "tasks", "tasks/graph.py",
      '''    if outcome.status == "fail":
        return TaskFailed(outcome.first_failure())
    if repeat is not None:  # a repeat proves nothing green on its own: the next run runs the test again
        return None''',
      '''    if repeat is not None:  # a repeat proves nothing green on its own: the next run runs the test again
        return None
    if outcome.status == "fail":
        return TaskFailed(outcome.first_failure())''', "a failing repeat returned as success (swapped checks)"),
    M("T05", "tasks", "tasks/graph.py",
      'if found != "missing" and not label.startswith(("module ", "inputs ")) and not label.endswith("/")\n',
      'if not label.startswith(("module ", "inputs ")) and not label.endswith("/")\n',
      "missing files given to doit as file_dep"),
    M("T06", "tasks", "tasks/graph.py",
      'return values.get("compiled") == self.key and build_intact(self.build_dir, values.get("files", {}))',
      'return values.get("compiled") == self.key', "the compile task up to date while the build dir was edited"),
    M("T07", "tasks", "tasks/graph.py", '            self.keys[test_id] = self.parts_of(test_id).key()\n', '',
      "a test's key not recomputed after it discovered new imports"),
    M("T08", "tasks", "tasks/backend.py", 'imports = values.get("imports") if passed else None', 'imports = None',
      "the state DB losing a pass's discovered imports"),
    M("T09", "tasks", "tasks/reporter.py", 'if self.stoppable and tally.maxfail and tally.failed >= tally.maxfail:',
      'if self.stoppable and tally.maxfail and tally.failed > tally.maxfail:', "--maxfail off by one"),
    M("T10", "tasks", "tasks/compile_tasks.py", 'and all(_stamp(self.where / rel) == stamp for rel, stamp in stamps.items())\n', '',
      "`oac compile` up to date after an output was edited"),
    # agents --------------------------------------------------------------------------------------------------------
    M("A01", "agents", "testing/agent_runner.py", 'text = "\\n".join(result.text for result in turns)',
      'text = "\\n".join(result.text for result in turns[-1:])', "test-level evaluators seeing only the last turn"),
    M("A02", "agents", "testing/agent_runner.py", '    if matched == len(expected):',
      '    if matched >= len(expected) - 1:', "expected_tool_calls passing with the last call missing"),
    M("A03", "agents", "testing/agent_runner.py", 'hermetic=settings.hermetic, timeout=settings.timeout)',
      'hermetic=False, timeout=settings.timeout)', "agent tests ignoring --hermetic (real handlers run)"),
    M("A04", "agents", "testing/invokers/protocol.py",
      '("script", self.script_digest),\n', '',
      "the invoker key dropping the model script's digest"),
    M("A05", "agents", "testing/invokers/scripted.py",
      'self.conversation += [Message(role="user", text=prompt), Message(role="assistant", text=text)]',
      'self.conversation += [Message(role="assistant", text=text), Message(role="user", text=prompt)]',
      "the conversation history in the wrong order"),
    M("A06", "agents", "execution/deadline.py", '        if not done.wait(self.remaining()) and not done.is_set():\n            self.expire()\n',
      '        if not done.wait(self.remaining()) and not done.is_set():\n', "the deadline not running its stoppers"),
    M("A07", "agents", "execution/deadline.py", 'outer = tuple(getattr(_current, "stack", ()))', 'outer = ()',
      "a nested deadline's worker not bound by the outer deadlines"),
    M("A08", "agents", "execution/deadline.py", '        if expired:\n            _quietly(stopper)\n', '',
      "a stopper registered after the deadline never run"),
    M("A09", "agents", "testing/invokers/scripted.py",
      '            check_tools(step, self.agent.tool_names, self.agent.compiled_name)\n', '',
      "a script calling tools the agent does not have"),
    # permissions ---------------------------------------------------------------------------------------------------
    M("P01", "permissions", "compiler/bash_match.py", 'return lambda text: text == bare or text.startswith(head)',
      'return lambda text: text.startswith(head)', "OpenCode `git *` not matching bare `git`"),
    M("P02", "permissions", "compiler/bash_match.py",
      'indices = sorted((key for key in keys if _ARRAY_INDEX.fullmatch(key) and int(key) < 2**32 - 1), key=int)',
      'indices = sorted(key for key in keys if _ARRAY_INDEX.fullmatch(key) and int(key) < 2**32 - 1)',
      "JS key order sorting array indices as text"),
    M("P03", "permissions", "compiler/bash_match.py", 'return command == prefix or command.startswith(prefix + " ")',
      'return command == prefix or command.startswith(prefix)', "Claude `git:*` matching `gitx`"),
    M("P04", "permissions", "compiler/bash_match.py", '        if ch == "*" and backslashes % 2 == 0:',
      '        if ch == "*" and backslashes == 0:', "Claude: `\\\\*` (escaped backslash, then star) not a wildcard"),
    M("P05", "permissions", "compiler/bash_match.py", '            found = (pattern, action)\n',
      '            return (pattern, action)\n', "first matching rule wins instead of the last"),
    M("P06", "permissions", "compiler/grants.py", 'return max(actions, key=ACTIONS.index, default=None)',
      'return min(actions, key=ACTIONS.index, default=None)', "the most permissive action of a pattern wins"),
    M("P07", "permissions", "compiler/grants.py", '_CONTROL = re.compile(r"[\\x00-\\x1f\\x7f]")',
      '_CONTROL = re.compile(r"[\\x00-\\x1f]")', "a DEL character accepted in a bash pattern"),
    M("P08", "permissions", "compiler/grants.py", 'return dict(sorted(rules, key=lambda rule: ACTIONS.index(rule[1])))',
      'return dict(rules)', "rules not ordered allow → ask → deny"),
    M("P09", "permissions", "compiler/bash_match.py",
      'escaped = escaped.replace("*", ".*").replace("?", ".")', 'escaped = escaped.replace("*", ".*")',
      "OpenCode `?` matched literally"),
    M("P10", "permissions", "testing/permissions.py", 'action = next((a for a in ("allow", "ask") if a in actions), "deny")',
      'action = next((a for a in ("allow",) if a in actions), "deny")', "`bash` overall ignoring ask rules"),
    M("P11", "permissions", "testing/permissions.py",
      '    fallback = capabilities.permissions.get("*")\n    if fallback is not None:',
      '    fallback = capabilities.permissions.get("*")\n    if False:',
      "a permission key's `*` catch-all ignored"),
    M("P12", "permissions", "testing/capability.py", 'found = name in caps.subagents or name + postfix in caps.subagents',
      'found = any(s.startswith(name) for s in caps.subagents)', "must_have_subagents matching by prefix"),
    M("P13", "permissions", "compiler/grants.py",
      'bash[pattern] = action if known is None or known == action else strictest((action, known)) or action',
      'bash[pattern] = action', "the last tool's action for a shared pattern wins, not the strictest"),
    # the frontmatter reader (compiler/own_yaml.py): what the read-back sees must be what PyYAML sees
    M("Y01", "permissions", "compiler/own_yaml.py",
      '_SPECIAL = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "none", "nan", "inf"}',
      '_SPECIAL = {"true", "false", "no", "off", "y", "n", "null", "none", "nan", "inf"}',
      "plain yes/on read as strings (PyYAML: True)"),
    M("Y02", "permissions", "compiler/own_yaml.py", r'(?:\.[0-9]+(?:e[-+][0-9]+)?)?"', r'(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?"',
      "1e3 read as a number (PyYAML 1.1: a string)"),
    M("Y03", "permissions", "compiler/own_yaml.py", '-?(?:0|[1-9][0-9]{0,999})', '-?[0-9]{1,999}',
      "017 read as decimal 17 (PyYAML: octal 15), 08 as 8 (PyYAML: a string)"),
    M("Y04", "permissions", "compiler/own_yaml.py", r'|\\[\\"])*"', r'|\\[\\"n])*"',
      "a quoted \\n escape read as the letter n"),
    M("Y05", "permissions", "compiler/own_yaml.py", '            if len(line) - len(line.lstrip(" ")) != depth + 2 or',
      '            if', "a nested mapping at any indentation"),
    M("Y06", "permissions", "compiler/own_yaml.py", 'items.append(_scalar(item.group(2)))',
      'items.append(_scalar(item.group(2)).__class__)', "list items read wrongly"),
    # writer / fsio ---------------------------------------------------------------------------------------------------
    M("W01", "writer", "compiler/writer.py",
      '            if rel in self.old.files:  # still ours: taken back only if its bytes return to what we wrote\n'
      '                self.new.files[rel] = self.old.files[rel]\n', '',
      "a user-edited file of ours disowned from the manifest"),
    M("W02", "writer", "compiler/writer.py", '        if entry.data is None or rel in self.others:',
      '        if entry.data is None:', "a stale file removed although another dialect owns it"),
    M("W03", "writer", "compiler/writer.py",
      '            self.write(rel, compiled.content, compiled.executable, compiled.private)\n'
      '            self.new.files[rel] = digest_bytes(compiled.content)',
      '            self.write(rel, compiled.content, compiled.executable, compiled.private)\n'
      '            self.new.files[rel] = digest_bytes(current or compiled.content)',
      "the manifest recording the replaced bytes' digest"),
    M("W04", "writer", "fsio.py", '        if found is None or not stat.S_ISREG(found.st_mode):\n            return False\n        os.unlink',
      '        if found is None or stat.S_ISDIR(found.st_mode):\n            return False\n        os.unlink',
      "remove_file unlinking a symlink planted at one of our paths"),
    M("W05", "writer", "fsio.py", '            if part in ("", ".", "..") or "/" in part or "\\x00" in part:',
      '            if part in ("", ".") or "/" in part or "\\x00" in part:', "`..` accepted as a path segment"),
    M("W06", "writer", "fsio.py", '    if found is not None and not stat.S_ISREG(found.st_mode):\n        raise UnsafePathError',
      '    if found is not None and stat.S_ISDIR(found.st_mode):\n        raise UnsafePathError',
      "a write replacing a symlink/fifo in the way"),
    M("W07", "writer", "compiler/manifest.py", '    if manifest.version != VERSION:', '    if manifest.version > VERSION:',
      "a manifest of an older version read as current"),
    # evaluators / reporting ----------------------------------------------------------------------------------------
    M("E01", "evaluators", "testing/evaluators/tool_not_called.py", '        if context.trajectory is None:',
      '        if not context.trajectory:', "tool_not_called skipping on an empty trajectory"),
    M("E02", "evaluators", "testing/evaluators/fact_recall.py",
      'strict = self.forbidden_case_sensitive or self.case_sensitive', 'strict = self.forbidden_case_sensitive',
      "fact_recall forbidden matching ignoring case_sensitive"),
    M("E03", "evaluators", "testing/evaluators/substring.py", '        if position < 0:', '        if position <= 0:',
      "substring failing a needle at position 0"),
    M("E04", "evaluators", "testing/evaluators/path_order.py",
      'for start in range(len(names) - width + 1):', 'for start in range(len(names) - width):',
      "path_order contiguous run at the end not found"),
    M("E05", "evaluators", "testing/evaluators/tool_called.py", 'passed = len(matching) >= self.min_count',
      'passed = len(matching) > self.min_count', "tool_called min_count off by one"),
    M("E06", "evaluators", "tasks/junit.py", 'skipped=str(tally.skipped + tally.not_runnable)', 'skipped=str(tally.skipped)',
      "JUnit suite-level skipped omitting not_runnable"),
    M("E07", "evaluators", "tasks/junit.py", 'failures=str(tally.failed + flaky_fails)', 'failures=str(tally.failed)',
      "JUnit failures omitting flaky tests counted as failures"),
    M("E08", "evaluators", "tasks/records.py", 'passed=outcome.status == "pass"', 'passed=outcome.status != "fail"',
      "a skipped test's record saying passed"),
    # shared state --------------------------------------------------------------------------------------------------
    M("S01", "shared", "tasks/graph.py",
      'if self.shared is not None and (known := self.shared.last(name, key)) is not None:',
      'if self.shared is not None and (known := self.shared.last(name, key)) is not None and known.status == "pass":',
      "a failure on another machine not cancelling a local pass"),
    M("S02", "shared", "tasks/shared_store.py", 'if "password" in _decoded(query).lower():', 'if False:',
      "a password in the URL's query accepted"),
    M("S03", "shared", "tasks/shared_session.py",
      'return list(max(passes, key=lambda known: known.recorded_at).imports or ())',
      'return list(min(passes, key=lambda known: known.recorded_at).imports or ())',
      "the oldest pass's imports taken instead of the newest"),
    M("S04", "shared", "tasks/shared_store.py",
      'where project = %s and recorded_at < now() - make_interval(secs => %s)',
      'where project = %s and recorded_at > now() - make_interval(secs => %s)', "prune deleting the recent outcomes"),
    M("S05", "shared", "tasks/graph.py",
      "if plan.scopes is not None and not parts[\"files\"] and test_id in plan.scopes:",
      "if plan.scopes is not None and test_id in plan.scopes:",
      "a key over files found in the run pushed with its scope"),
    # issue 33: what no test guarded before -------------------------------------------------------------------------
    M("S06", "shared", "tasks/shared_store.py", 'found = [os.environ.get("PGPASSWORD") or ""]', 'found = [""]',
      "the scrubber no longer hiding PGPASSWORD"),
    M("S07", "shared", "tasks/shared_store.py", '_UNIT_SECONDS = {"": 86_400,', '_UNIT_SECONDS = {"": 1,',
      "prune --older-than 30 meaning seconds"),
    M("S08", "shared", "tasks/shared_session.py", "delete from shared_outbox where seq <= ?",
      "delete from shared_outbox where seq < ?", "the last pushed outcome left in the outbox"),
    M("S09", "shared", "tasks/shared_store.py", '"where %s::float8 is null or oac_outcomes.finished_at is null "',
      '"where true or %s::float8 is null or oac_outcomes.finished_at is null "', "the last pushed outcome wins"),
    M("S10", "shared", "tasks/shared_store.py", "        timer.start()\n", "\n", "a silent server hangs the run"),
    M("S11", "shared", "tasks/graph.py", "shared.refresh()  # what other", "pass  # what other",
      "a pass pushed during planning missed"),
    M("S12", "shared", "tasks/graph.py", "if known is None and (found := shared_pass_key(",
      "if False and (found := shared_pass_key(", "a shared pass re-run when the plan keyed the test over stale files"),
    M("S13", "shared", "tasks/graph.py", "    if plan.keys[test_id] != planned:  # keyed again",
      "    if False:  # keyed again", "the planned key's files kept as file_dep after a re-key (one more run)"),
    M("S14", "shared", "tasks/backend.py", 'value.get("scope"), value.get("parts")))', 'value.get("scope"), None))',
      "shared passes pushed without their key parts (--explain elsewhere says 'never ran')"),
    M("S15", "shared", "tasks/reporter.py", "if shared is not None and (not saved_parts or _later(",
      "if shared is not None and (_later(", "a pass adopted from the shared state explained without parts"),
    M("S16", "shared", "cli/state_cmd.py", "        store.push(outcomes)\n", "        store.push([])\n",
      "oac state import pushing nothing (the workflow's next pipeline re-runs every test)"),
    M("T10", "tasks", "tasks/reporter.py", 'if backend is not None and (flaky or outcome.status == "fail"):',
      "if False:", "failing repeats keeping the old green"),
    M("T11", "history", "tasks/repeats.py", 'ran = [o for o in outcomes if o.status in ("pass", "fail")]',
      "ran = list(outcomes)", "skipped repeats counted as runs"),
    M("T12", "history", "tasks/backend.py", "and flusher.ident is not None:", ":",
      "a never-started flusher joined after Ctrl-C"),
    M("T13", "shared", "tasks/reporter.py", "                self.add_success(started)  # while doit saved it",
      "                pass  # while doit saved it", "a test that passed as Ctrl-C landed in its save left uncounted"),
    M("H01", "history", "history/merge.py", 'status = "fail" if where in conflicted else record["status"]',
      'status = record["status"]', "a merge conflict counted as its latest status"),
    M("H02", "history", "history/merge.py", '        if record.get("repeat"):\n            continue',
      '        if False:\n            continue', "merge not skipping --repeat records"),
    M("H03", "history", "history/report_html.py", "test.points[-MAX_POINTS:]", "test.points[:MAX_POINTS]",
      "the status strip showing the oldest runs"),
    M("H04", "history", "history/index.py", 'whole = tail.rfind(b"\\n") + 1', "whole = len(tail)",
      "the index covering a half-written last line"),
    M("C01", "cassettes", "testing/invokers/stream_text.py", "                if start < cut < end:",
      "                if False:", "a key or the scratch folder cut by a stream's deltas left as it was sent"),
    M("C02", "cassettes", "testing/invokers/cassette.py",
      "answer = self._unlabelled(exchange.response) if self.labelled else exchange.response",
      "answer = exchange.response", "a replay answering with the labels, not this run's scratch folder"),
    M("C03", "cassettes", "testing/invokers/cassette.py",
      "[(secret, REDACTED) for secret in self.secrets()] + self._memo.put_back",
      "[(secret, REDACTED) for secret in self.secrets()]",
      "answers stored with the recording run's scratch folder (a replay elsewhere gets a folder that is gone)"),
]


def restore_leftovers() -> list[str]:
    """Put back every file a killed runner left mutated (its backup is the original)."""
    restored = []
    if BACKUP.is_dir():
        for saved in sorted(p for p in BACKUP.rglob("*") if p.is_file()):
            rel = saved.relative_to(BACKUP)
            shutil.copy2(saved, ROOT / rel)
            saved.unlink()
            restored.append(str(rel))
        shutil.rmtree(BACKUP, ignore_errors=True)
    return restored


class Interrupted(Exception):
    pass


def _on_signal(signum: int, _frame: object) -> None:
    raise Interrupted(f"signal {signum}")


def first_failure(output: str) -> str:
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" - ")[0]
    return ""


BROKEN: list[str] = []  # tests found failing on the unmutated code this run: deselected from then on


def _pytest(python: str, args: list[str], timeout: float) -> tuple[int, str]:
    command = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-rfE",
               *(f"--deselect={test}" for test in BROKEN), *args]
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                              start_new_session=True)
        return done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or ""
        return -1, out.decode() if isinstance(out, bytes) else out


def run_one(mutant: Mutant, timeout: float, python: str) -> dict:
    """Apply, test, restore; a catching test that also fails on the unmutated code is deselected and the mutant
    tested again (so a broken or flaky test never counts as a catch)."""
    while True:
        outcome = _run_once(mutant, timeout, python)
        by = outcome.get("by", "")
        if outcome["result"] != "caught" or not by.startswith("FAILED "):
            return outcome
        test = by.split(" ", 1)[1]
        rc, _ = _pytest(python, [test], timeout)
        if rc == 0:
            return outcome
        print(f"   {test} fails without the mutant too: deselected", flush=True)
        BROKEN.append(test)


def _run_once(mutant: Mutant, timeout: float, python: str) -> dict:
    path = ROOT / SRC / mutant.file
    original = path.read_text()
    count = original.count(mutant.old)
    if count != 1:
        return {"id": mutant.id, "result": "bad-mutant", "detail": f"old text found {count} times"}
    backup = BACKUP / SRC / mutant.file
    backup.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, backup)
    started = time.monotonic()
    try:
        path.write_text(original.replace(mutant.old, mutant.new))
        rc, output = _pytest(python, TESTS[mutant.area], timeout)
    finally:
        shutil.copy2(backup, path)
        backup.unlink()
    result = {1: "caught", 0: "survived", -1: "timeout"}.get(rc, f"error rc={rc}")
    tail = [line for line in output.splitlines() if line.strip()][-1:] or [""]
    return {"id": mutant.id, "area": mutant.area, "result": result, "by": first_failure(output),
            "summary": tail[0], "seconds": round(time.monotonic() - started, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="areas, comma-separated: " + ", ".join(TESTS))
    parser.add_argument("--id", help="mutant ids, comma-separated")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per mutant's test run")
    parser.add_argument("--log", help="append one JSON line per mutant to this file")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--tests", help="run these test paths instead of the area's (comma-separated)")
    args = parser.parse_args()
    for rel in restore_leftovers():
        print(f"restored {rel} from a killed run's backup")
    chosen = MUTANTS
    if args.only:
        areas = args.only.split(",")
        chosen = sorted((m for m in chosen if m.area in areas), key=lambda m: areas.index(m.area))
    if args.id:
        chosen = [m for m in chosen if m.id in args.id.split(",")]
    if args.list:
        for m in chosen:
            print(f"{m.id} {m.area:<11} {m.file:<38} {m.what}")
        return 0
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _on_signal)
    if args.tests:
        for area in TESTS:
            TESTS[area] = args.tests.split(",")
    python = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv").is_dir() else sys.executable
    survivors = 0
    try:
        for mutant in chosen:
            outcome = run_one(mutant, args.timeout, python)
            survivors += outcome["result"] != "caught"
            print(f"{outcome['id']} {outcome['result']:<9} {outcome.get('seconds', '')}s {outcome.get('by', '')}"
                  f"  # {mutant.what}", flush=True)
            if args.log:
                with open(args.log, "a") as log:
                    log.write(json.dumps(outcome) + "\n")
    except (KeyboardInterrupt, Interrupted) as exc:
        print(f"interrupted ({exc or 'Ctrl-C'}); every file restored", file=sys.stderr)
        return 130
    finally:
        restore_leftovers()
    print(f"{len(chosen) - survivors}/{len(chosen)} caught" + (f"; failing without mutants: {BROKEN}" if BROKEN else ""))
    return 0 if survivors == 0 else 1


if __name__ == "__main__":
    os.environ.setdefault("HARNESS_DIR", str(Path.home() / ".cache" / "oac" / "harnesses"))
    sys.exit(main())
