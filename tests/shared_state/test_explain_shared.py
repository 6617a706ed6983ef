"""`--explain` against the last key recorded in the shared state (issue 32, item 13): each outcome is pushed with
its key's named parts, so a checkout that never ran a test (or holds only a pass adopted from the shared state)
says what changed since the last shared run, not 'never ran'; a row pushed without parts (an older oac) explains
as before."""

from pg_server import PASSWORD
from shared_project import clone, make


def explained(done) -> dict[str, str]:
    """test name → why it runs, from `--explain` lines (`  run 'name': why`)."""
    found = {}
    for line in done.stdout.splitlines():
        if line.startswith("  run '"):
            name, _, why = line[len("  run '"):].partition("': ")
            found[name] = why
    return found


def test_a_fresh_checkout_explains_against_the_shared_key(pg, tmp_path):
    env = pg.env(pg.database)
    first = make(tmp_path / "first")
    first.test(env=env)
    second = clone(first, tmp_path / "second")
    second.write("gamma.txt", "v2\n")  # a file gamma's mock read on the first machine
    done = second.test("--explain", env=env)
    why = explained(done)
    assert list(why) == ["gamma-ok"], done.stdout
    assert why["gamma-ok"].startswith("changed since the shared run of 20") and \
        why["gamma-ok"].endswith(": file gamma.txt"), why

    # the passes adopted from the shared state hold no parts of their own: the shared ones explain an edit
    second.write("helper.py", "OK = True  # edited\n")
    why = explained(second.test("--explain", env=env))
    assert set(why) == {"alpha-ok", "beta-ok", "gamma-ok"}, why
    assert all(why[name].startswith("changed since the shared run of ") and why[name].endswith(": file helper.py")
               for name in ("alpha-ok", "beta-ok")), why
    assert why["gamma-ok"] == "changed: file helper.py"  # its last run was here (local parts, as new as its push)


def test_a_shared_failure_under_the_current_key_is_said(pg, tmp_path):
    env = pg.env(pg.database)
    first = make(tmp_path / "first")
    first.test(env=env)
    second = clone(first, tmp_path / "second")
    second.test(env=env)  # adopts the first machine's passes (no parts of their own)
    first.test("--filter", "beta", "--force", env={**env, "BETA_FAIL": "1"}, code=1)  # fails under the same key
    why = explained(second.test("--explain", "--filter", "beta", env=env))
    assert why["beta-ok"].startswith("last run failed (shared, 20"), why


def test_a_shared_row_without_parts_explains_as_before(pg, tmp_path):
    import psycopg

    env = pg.env(pg.database)
    first = make(tmp_path / "first")
    first.test(env=env)
    with psycopg.connect(pg.url(pg.database), password=PASSWORD, autocommit=True) as conn:  # as an older oac left it
        conn.execute("update oac_outcomes set parts = null")
    second = clone(first, tmp_path / "second")
    second.write("gamma.txt", "v2\n")
    why = explained(second.test("--explain", env=env))
    assert why == {"gamma-ok": "never ran"}, why


def test_a_newer_shared_failure_is_said_over_an_older_local_pass(pg, tmp_path):
    env = pg.env(pg.database)
    first = make(tmp_path / "first")
    first.test(env=env)
    second = clone(first, tmp_path / "second")
    second.test("--force", env=env)  # passes of its own, with their parts
    first.test("--filter", "beta", "--force", env={**env, "BETA_FAIL": "1"}, code=1)  # later, under the same key
    why = explained(second.test("--explain", "--filter", "beta", env=env))
    assert why["beta-ok"].startswith("last run failed (shared, 20"), why  # not 'key changed' (its local pass)
