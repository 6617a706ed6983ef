"""Issue 33: no password reaches any output. Generated: a password in the URL's userinfo, in its query under any
spelling or percent-encoding of the key, next to malformed hosts, ports, IPv6 and stray `%`; in PGPASSWORD, a
service file (PGSERVICEFILE) and a .pgpass file when the driver's error echoes it. Every error path of parsing and
connecting, in process, and across `oac test`, `doit test`, the pytest plugin and `oac state status`."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_project import inner_pytest_env
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_project import make

from open_agent_compiler.tasks.shared_store import SharedStateError, SharedStore, check_url, redact

SAFE = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
passwords = st.text(SAFE + "!$&'()*+,;=-._~:/?#[]@%", min_size=4, max_size=16).map(lambda t: "Zq9" + t)
HOSTS = ["127.0.0.1:5432", "127.0.0.1:54x2", "[::1", "[::1]:5432", "db1:5432,db2:5432", "db1:5432,db2:x", "",
         "h:99999999"]


@st.composite
def key_spellings(draw) -> str:
    """`password` as a careless or hostile URL may spell it: any case, any character percent-encoded, once or
    twice."""
    out = []
    for char in "password":
        char = draw(st.sampled_from([char, char.upper()]))
        encoding = draw(st.sampled_from(["plain", "once", "twice"]))
        if encoding == "once":
            char = f"%{ord(char):02x}" if draw(st.booleans()) else f"%{ord(char):02X}"
        elif encoding == "twice":
            char = f"%25{ord(char):02x}"
        out.append(char)
    return "".join(out)


@st.composite
def urls_with_a_password(draw) -> tuple[str, str]:
    secret = draw(passwords)
    host = draw(st.sampled_from(HOSTS))
    quoted = draw(st.sampled_from([secret, secret.replace("%", "%25")]))
    extra = draw(st.sampled_from(["", "sslmode=require&", "a=%&", "b=%zz&", "application_name=x%&"]))
    where = draw(st.sampled_from(["userinfo", "query", "both"]))
    user = f"oac_ci:{quoted}@" if where in ("userinfo", "both") else "oac_ci@"
    query = f"?{extra}{draw(key_spellings())}={quoted}" if where in ("query", "both") else (f"?{extra}" if extra else "")
    return f"postgresql://{user}{host}/oac{query}", secret


def _never_shows(secret: str, text: str) -> None:
    assert secret not in text and secret.replace("%", "%25") not in text, text


@settings(max_examples=400, deadline=None)
@given(urls_with_a_password())
def test_parsing_refuses_every_url_with_a_password_and_never_shows_it(case):
    url, secret = case
    with pytest.raises(SharedStateError) as raised:
        check_url(url)
    _never_shows(secret, str(raised.value))
    _never_shows(secret, redact(url))
    with pytest.raises(SharedStateError) as raised:
        SharedStore(url, "p")
    _never_shows(secret, str(raised.value))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(HOSTS), st.sampled_from(["", "?sslmode=require", "?a=%", "?x=%zz"]))
def test_a_url_without_a_password_is_accepted_or_refused_in_one_line(host, query):
    url = f"postgresql://oac_ci@{host}/oac{query}"
    try:
        assert check_url(url) == url
    except SharedStateError as exc:
        assert "\n" not in str(exc) and url not in str(exc)
    assert "\n" not in redact(url)


@pytest.mark.parametrize("source", ["PGPASSWORD", "service", "pgpass"])
@settings(max_examples=30, deadline=None)
@given(secret=passwords.filter(lambda s: "\n" not in s and "\\" not in s))
def test_a_driver_message_that_echoes_a_known_password_is_scrubbed(source, secret, tmp_path_factory):
    """The driver does not echo passwords today; if one ever does, the scrubber is the only guard."""
    import psycopg

    home = tmp_path_factory.mktemp("home")
    env = {"HOME": str(home), "PGPASSWORD": "", "PGSERVICEFILE": str(home / "svc.conf"),
           "PGPASSFILE": str(home / "pgpass")}
    if source == "PGPASSWORD":
        env["PGPASSWORD"] = secret
    elif source == "service":
        (home / "svc.conf").write_text(f"[svc]\nhost=127.0.0.1\npassword={secret}\n")
    else:
        (home / "pgpass").write_text("127.0.0.1:*:*:oac_ci:" + secret.replace(":", "\\:") + "\n")
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    real = psycopg.connect
    try:
        def echoing(*args, **kwargs):
            raise psycopg.OperationalError(f'connection failed: password "{secret}"\nrejected')

        psycopg.connect = echoing
        with pytest.raises(SharedStateError) as raised:
            SharedStore("postgresql://oac_ci@127.0.0.1:1/oac?service=svc", "p").connect()
    finally:
        psycopg.connect = real
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    _never_shows(secret, str(raised.value))
    assert "***" in str(raised.value) and "\n" not in str(raised.value)


SECRET = "Zq9-sekrit/p@ss%w0rd"
QUOTED = SECRET.replace("%", "%25").replace("/", "%2F").replace("@", "%40")


def _cases(pg, home: Path) -> list[tuple[str, dict[str, str]]]:
    """(name, environment) of every way a password meets a command: in the URL, malformed around it, or given
    properly (PGPASSWORD, service file, .pgpass) to a server that then refuses the connection."""
    port = pg.port
    (home / "svc.conf").write_text(f"[svc]\nhost=127.0.0.1\nport={port}\nuser=oac_ci\npassword={SECRET}-wrong\n"
                                   "dbname=oac\n")
    (home / "pgpass").write_text(f"127.0.0.1:{port}:*:oac_ci:{SECRET}-wrong\n".replace("%", "%"))
    (home / "pgpass").chmod(0o600)
    base = {"HOME": str(home), "PGPASSWORD": "", "PGCONNECT_TIMEOUT": "5"}
    urls = [f"postgresql://oac_ci:{QUOTED}@127.0.0.1:{port}/oac", f"postgresql://oac_ci:{SECRET}@127.0.0.1:54x2/oac",
            f"postgresql://oac_ci:{QUOTED}@[::1/oac", f"postgresql://oac_ci@127.0.0.1:{port}/oac?pass%77ord={QUOTED}",
            f"postgresql://oac_ci@127.0.0.1:{port}/oac?sslmode=disable%&pass%2577ord={SECRET}",
            f"postgresql://oac_ci@127.0.0.1:{port}/oac?PassWord={SECRET}"]
    cases = [(f"url-{index}", {**base, "OAC_STATE_URL": url}) for index, url in enumerate(urls)]
    cases.append(("pgpassword", {**base, "OAC_STATE_URL": pg.url(pg.database), "PGPASSWORD": SECRET + "-wrong"}))
    cases.append(("service-file", {**base, "OAC_STATE_URL": "postgresql:///?service=svc",
                                   "PGSERVICEFILE": str(home / "svc.conf")}))
    cases.append(("pgpass", {**base, "OAC_STATE_URL": pg.url(pg.database), "PGPASSFILE": str(home / "pgpass")}))
    return cases


def _commands(root: Path) -> dict[str, list[str]]:
    bindir = Path(sys.executable).parent
    return {"oac test": [str(bindir / "oac"), "test"], "doit test": [str(bindir / "doit"), "test"],
            "pytest": [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "--oac", "-q"],
            "oac state status": [str(bindir / "oac"), "state", "status"]}


def test_no_command_ever_shows_a_password(pg, tmp_path):
    proj = make(tmp_path / "proj")
    home = tmp_path / "home"
    home.mkdir()
    seen = []
    for name, env in _cases(pg, home):
        for command, argv in _commands(proj.root).items():
            full = {**inner_pytest_env(), **env} if command == "pytest" else {**os.environ, **env}
            full.pop("OAC_HERMETIC", None)
            done = subprocess.run(argv, cwd=proj.root, capture_output=True, text=True, timeout=180, env=full)
            output = done.stdout + done.stderr
            for secret in (SECRET, QUOTED, "sekrit"):
                assert secret not in output, f"{command} with {name} showed the password:\n{output}"
            assert "Traceback" not in output, f"{command} with {name}:\n{output}"
            seen.append((name, command, done.returncode))
    for path in proj.root.rglob("*"):
        if path.is_file():
            assert b"sekrit" not in path.read_bytes(), path
    assert len(seen) == 9 * 4
