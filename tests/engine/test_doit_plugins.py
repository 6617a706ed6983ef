"""doit's plugin lookup during a run: one scan of the installed distributions answers every category, with the
entry points doit would have found itself (`tasks.doit_plugins`)."""

from importlib import metadata

import doit.plugin

from open_agent_compiler.tasks import doit_plugins


def test_one_scan_answers_every_category_as_a_scan_per_category_would(monkeypatch) -> None:
    groups = ("doit.COMMAND", "doit.LOADER", "doit.BACKEND", "doit.REPORTER", "console_scripts", "pytest11")
    expected = {group: [(p.name, p.value) for p in metadata.entry_points(group=group)] for group in groups}
    assert expected["doit.BACKEND"] and expected["console_scripts"]  # something to compare with
    scans = []
    real = metadata.entry_points
    monkeypatch.setattr(doit_plugins, "entry_points", lambda **params: scans.append(params) or real(**params))
    original = doit.plugin.entry_points_impl
    with doit_plugins.plugins_scanned_once():
        found = {group: [(p.name, p.value) for p in doit.plugin.entry_points_impl()(group=group)] for group in groups}
    assert found == expected
    assert scans == [{}]
    assert doit.plugin.entry_points_impl is original
