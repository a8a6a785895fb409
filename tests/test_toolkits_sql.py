"""SqlTool on a real SQLite file, and on a real PostgreSQL server when one can be started here."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import scripted_model

from agentica_cli import Agent, SqlTool
from agentica_cli.agent import Decision
from agentica_cli.testing import turns
from agentica_cli.toolkits.sql import read_only_problem

pytest.importorskip("sqlalchemy", reason="SQLAlchemy (the sql extra) is not installed")


@pytest.fixture
def app_db(tmp_path: Path) -> Path:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, team_id INTEGER REFERENCES teams(id));"
            "CREATE TABLE teams (id INTEGER PRIMARY KEY, title TEXT);"
            "CREATE INDEX users_name ON users(name);"
            "INSERT INTO teams VALUES (1, 'core');"
            + "".join(f"INSERT INTO users(name, team_id) VALUES ('user{i}', 1);" for i in range(30))
        )
    return path


def count(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT count(*) FROM users").fetchone()[0]


def test_tables_describe_and_query_with_a_row_cap(app_db: Path) -> None:
    tool = SqlTool(f"sqlite:///{app_db}", max_rows=5)
    assert tool.list_tables().splitlines() == ["teams", "users"]
    described = tool.describe_table("users")
    assert "  name TEXT NOT NULL" in described and "primary key (id)" in described
    assert "foreign key (team_id) -> teams(id)" in described and "index users_name (name)" in described
    rows = tool.run_query("SELECT id, name FROM users ORDER BY id").splitlines()
    assert rows[:3] == ["id\tname", "1\tuser0", "2\tuser1"]
    assert len(rows) == 1 + 5 + 1
    assert rows[-1] == "(5 row(s); more rows exist: only the first 5 are shown)"
    assert tool.run_query("SELECT name FROM users WHERE id < 3 ORDER BY id", limit=10).splitlines() == [
        "name", "user0", "user1", "(2 row(s))"]
    with pytest.raises(ValueError, match="no table 'nope'; tables: teams, users"):
        tool.describe_table("nope")


def test_read_only_mode_refuses_writes_and_the_database_enforces_it(app_db: Path) -> None:
    tool = SqlTool(f"sqlite:///{app_db}")
    assert tool.functions["run_query"].is_read_only and not tool.functions["run_query"].is_destructive
    for sql in ("DELETE FROM users", "SELECT 1; DROP TABLE users",
                "WITH doomed AS (SELECT id FROM users) DELETE FROM users WHERE id IN (SELECT id FROM doomed)"):
        with pytest.raises(PermissionError, match="read-only database"):
            tool.run_query(sql)
    # a write the statement check does not see is refused by SQLite itself (opened with mode=ro)
    from sqlalchemy import text

    with tool.engine.connect() as conn, pytest.raises(Exception, match="readonly database"):
        conn.execute(text("UPDATE users SET name = 'x'"))
    assert count(app_db) == 30
    with pytest.raises(FileNotFoundError, match="does not exist"):
        SqlTool(f"sqlite:///{app_db.parent / 'missing.db'}").list_tables()
    assert not (app_db.parent / "missing.db").exists()


def test_an_endless_recursive_query_is_stopped_at_the_time_limit(app_db: Path) -> None:
    import time

    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    for tool in (SqlTool(f"sqlite:///{app_db}", timeout=0.5), SqlTool(f"sqlite:///{app_db}", read_only=False,
                                                                        timeout=0.5)):
        started = time.monotonic()
        with pytest.raises(TimeoutError, match=r"longer than the 0.5 s time limit"):
            tool.run_query(endless)
        assert time.monotonic() - started < 10
        # the connection is usable afterwards, and a normal query is not cut short
        assert tool.run_query("SELECT count(*) FROM users").splitlines()[1] == "30"
        tool.close()
    with pytest.raises(ValueError, match="timeout"):
        SqlTool(f"sqlite:///{app_db}", timeout=-1)


def test_statement_check() -> None:
    assert read_only_problem("select * from t -- ; delete") is None
    assert read_only_problem("SELECT ';' AS semicolon;") is None
    assert read_only_problem("PRAGMA table_info(users)") is None
    assert read_only_problem("PRAGMA journal_mode = WAL") == "a PRAGMA that sets a value is not read-only"
    assert read_only_problem("  ") == "the statement is empty"
    assert read_only_problem("insert into t values (1)") == "INSERT is not a read-only statement"


def test_a_write_in_write_mode_is_approved_then_done(scripted, app_db: Path) -> None:
    server = scripted(
        turns.tool_calls(turns.call("run_query", {"sql": "DELETE FROM users WHERE id > 10"}, id="w1")),
        turns.text("Deleted 20 users."),
    )
    asked: list[str] = []

    def approve(call):  # type: ignore[no-untyped-def]
        asked.append(call.args["sql"])
        return Decision.allow()

    tool = SqlTool(f"sqlite:///{app_db}", read_only=False)
    assert tool.functions["run_query"].is_destructive
    agent = Agent(scripted_model(server), tools=[tool], approve=approve)
    assert agent.run_sync("trim the users").content == "Deleted 20 users."
    assert asked == ["DELETE FROM users WHERE id > 10"]
    result = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")["content"]
    assert result == "(done; 20 row(s) affected)"
    assert count(app_db) == 10


def test_a_denied_write_is_not_done(scripted, app_db: Path) -> None:
    server = scripted(turns.tool_calls(turns.call("run_query", {"sql": "DELETE FROM users"}, id="w1")),
                      turns.text("Not allowed."))
    agent = Agent(scripted_model(server), tools=[SqlTool(f"sqlite:///{app_db}", read_only=False)],
                  approve=lambda call: Decision.deny("no"))
    agent.run_sync("delete everyone")
    assert count(app_db) == 30


# -- PostgreSQL ----------------------------------------------------------------------------------


def _pg_binary(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL server on a free 127.0.0.1 port (trust auth), or a skip saying why."""
    pytest.importorskip("psycopg2", reason="psycopg2 is not installed")
    initdb, pg_ctl = _pg_binary("initdb"), _pg_binary("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    as_user: list[str] = []
    folder = tempfile.mkdtemp(prefix="agentica-pg-")
    if os.geteuid() == 0:  # initdb refuses to run as root: run the server as the postgres user
        runuser = shutil.which("runuser")
        try:
            import pwd

            user = pwd.getpwnam("postgres")
        except KeyError:
            user = None
        if runuser is None or user is None:
            shutil.rmtree(folder, ignore_errors=True)
            pytest.skip("running as root without a postgres user to start PostgreSQL as")
        os.chmod(folder, 0o755)
        os.chown(folder, user.pw_uid, user.pw_gid)
        as_user = [runuser, "-u", "postgres", "--"]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data = os.path.join(folder, "data")
    try:
        subprocess.run([*as_user, initdb, "-D", data, "-A", "trust", "-U", "agentica", "--no-sync"],
                       check=True, capture_output=True, timeout=120)
        subprocess.run([*as_user, pg_ctl, "-D", data, "-l", os.path.join(folder, "log"), "-w", "-t", "60", "-o",
                        f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                       check=True, capture_output=True, timeout=90)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as err:
        detail = getattr(err, "stderr", b"") or b""
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"could not start PostgreSQL: {err} {detail.decode(errors='replace')[-300:]}")
    try:
        yield f"postgresql+psycopg2://agentica@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, pg_ctl, "-D", data, "-m", "immediate", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


def test_postgresql_read_only_and_write_modes(postgres_url: str) -> None:
    writer = SqlTool(postgres_url, read_only=False)
    assert writer.run_query("CREATE TABLE items (id serial PRIMARY KEY, label text NOT NULL)") == "(done)"
    assert writer.run_query("INSERT INTO items(label) VALUES ('a'), ('b'), ('c')") == "(done; 3 row(s) affected)"
    reader = SqlTool(postgres_url, max_rows=2)
    try:
        assert "items" in reader.list_tables().splitlines()
        assert "  label TEXT NOT NULL" in reader.describe_table("items")
        assert reader.run_query("SELECT label FROM items ORDER BY id").splitlines() == [
            "label", "a", "b", "(2 row(s); more rows exist: only the first 2 are shown)"]
        with pytest.raises(PermissionError, match="read-only database"):
            reader.run_query("DELETE FROM items")
        # the session itself is read-only: a write the check cannot see fails in the server
        with pytest.raises(Exception, match="read-only transaction"):
            reader.run_query("SELECT setval('items_id_seq', 100)")
        assert writer.run_query("SELECT count(*) FROM items").splitlines()[1] == "3"
        quick = SqlTool(postgres_url, timeout=0.5)
        with pytest.raises(TimeoutError, match="time limit"):
            quick.run_query("SELECT pg_sleep(10)")
        quick.close()
    finally:
        reader.close()
        writer.close()


# -- the CLI -------------------------------------------------------------------------------------


def test_cli_tools_flag_adds_the_sql_toolkit_with_its_config(home: Path, tmp_path: Path) -> None:
    from cli_support import model_args, run_cli

    from agentica_cli.testing import ScriptedModelServer

    project = tmp_path / "project"
    project.mkdir()
    with sqlite3.connect(project / "shop.db") as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY)")
    (home / "config.toml").write_text('[toolkits.sql]\nurl = "sqlite:///shop.db"\nmax_rows = 3\n')
    script = [turns.tool_calls(turns.call("list_tables", {}, id="t1")), turns.text("One table: orders.")]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "what tables?", "--tools", "sql", *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "One table: orders.\n"
    assert "run_query" in [t["function"]["name"] for t in requests[0]["tools"]]
    assert "at most 3 rows" in requests[0]["messages"][0]["content"]
    result = next(m for m in requests[1]["messages"] if m["role"] == "tool")
    assert result["content"] == "orders"
