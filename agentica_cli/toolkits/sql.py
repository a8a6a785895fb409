"""SqlTool: list tables, describe one, run a query with a row cap, on SQLAlchemy.

Read-only by default, enforced by the database where it can be, not only by looking at the
statement: SQLite is opened with `mode=ro`, PostgreSQL and MySQL sessions are set to
read-only transactions, and every read-only query is rolled back. The statement check
(one statement, starting with SELECT, WITH, EXPLAIN, SHOW, DESCRIBE, PRAGMA or VALUES)
comes first and gives the model a clear error. Writes need `read_only=False`; then
`run_query` is destructive, so an approve hook (the CLI) asks before each one.

Every statement has a time limit (`timeout`, seconds): an endless recursive CTE must not run
on for ever in a worker thread nobody can stop. SQLite is interrupted from its progress
handler, PostgreSQL sessions get `statement_timeout`, MySQL `max_execution_time` (SELECTs)
and MariaDB `max_statement_time`; the model reads a clear error.
"""

from __future__ import annotations

import re
import time
from typing import Any

from agentica_cli.tools.base import Tool

READ_STARTS = ("select", "with", "explain", "show", "describe", "desc", "pragma", "values", "table")
# A WITH that ends in a write (WITH x AS (...) DELETE ...) is caught by the database's
# read-only mode; these words in a WITH are refused by the check too.
_WRITE_WORDS = re.compile(r"\b(insert|update|delete|merge|drop|alter|create|truncate|replace|grant|revoke|attach)\b",
                          re.I)
_COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)
_STRINGS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"")


def _code_only(sql: str) -> str:
    return _STRINGS.sub("''", _COMMENTS.sub(" ", sql)).strip()


def read_only_problem(sql: str) -> str | None:
    """Why `sql` is not a single read-only statement, or None."""
    code = _code_only(sql).rstrip(";").strip()
    if not code:
        return "the statement is empty"
    if ";" in code:
        return "only one statement per call"
    first = code.split(None, 1)[0].lower()
    if first not in READ_STARTS:
        return f"{first.upper()} is not a read-only statement"
    if first == "with" and _WRITE_WORDS.search(code):
        return "a WITH statement that writes is not read-only"
    if first == "pragma" and "=" in code:
        return "a PRAGMA that sets a value is not read-only"
    return None


class SqlTool(Tool):
    """A database by SQLAlchemy URL: `SqlTool("sqlite:///app.db")`, `"postgresql://..."`, `"mysql+pymysql://..."`.

    read_only: refuse writes (default). max_rows: the most rows a query returns. timeout:
    seconds a statement may run before it is stopped (0: no limit). A relative SQLite path is
    relative to the current folder; a missing SQLite file is an error in read-only mode (it
    would be created empty otherwise).
    """

    extra = "sql"  # for the CLI's /tools state (toolkits.catalog)
    extra_modules = ("sqlalchemy",)

    def __init__(self, url: str = "sqlite:///app.db", *, read_only: bool = True, max_rows: int = 100,
                 engine_options: dict[str, Any] | None = None, timeout: float = 30.0):
        super().__init__(name="sql")
        if max_rows < 1:
            raise ValueError(f"max_rows must be at least 1, got {max_rows}")
        if not timeout >= 0:
            raise ValueError(f"timeout must be >= 0 seconds (0: no limit), got {timeout}")
        self.timeout = float(timeout)
        self.url = url
        self.read_only = read_only
        self.max_rows = max_rows
        self.engine_options = dict(engine_options or {})
        self._engine: Any = None
        self.register(self.list_tables, is_read_only=True, concurrency_safe=True)
        self.register(self.describe_table, is_read_only=True, concurrency_safe=True)
        if read_only:
            self.register(self.run_query, is_read_only=True, concurrency_safe=True)
        else:
            self.register(self.run_query, is_destructive=True)

    def get_system_prompt(self) -> str:
        mode = ("read-only: only single SELECT/WITH/EXPLAIN statements run" if self.read_only
                else "writes are allowed and each one is approved by the user")
        return (f"The sql tools query a {self.dialect} database ({mode}). Look at list_tables and describe_table "
                f"before writing a query; run_query returns at most {self.max_rows} rows.")

    @property
    def dialect(self) -> str:
        return self.url.split(":", 1)[0].split("+", 1)[0]

    # -- connection ---------------------------------------------------------------------

    @property
    def engine(self) -> Any:
        if self._engine is None:
            self._engine = self._create_engine()
        return self._engine

    def _create_engine(self) -> Any:
        from agentica_cli.toolkits._http import require_module

        sqlalchemy = require_module("sqlalchemy", extra="sql", package="SQLAlchemy", toolkit="SqlTool")
        url = sqlalchemy.engine.make_url(self.url)
        options = dict(self.engine_options)
        backend = url.get_backend_name()
        if backend == "postgresql" and url.get_driver_name() == "psycopg2":  # the default driver: name its extra
            require_module("psycopg2", extra="postgres", package="psycopg2-binary", toolkit="SqlTool")
        if backend == "sqlite" and self.read_only and url.database not in (None, "", ":memory:"):
            import os
            import sqlite3

            path = os.path.abspath(os.path.expanduser(url.database))
            if not os.path.isfile(path):
                raise FileNotFoundError(f"SQLite database {path} does not exist (read-only mode does not create it)")
            # The database itself refuses writes: a statement the check missed still fails.
            options["creator"] = lambda: sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        engine = sqlalchemy.create_engine(url, **options)
        if self.read_only and backend in ("postgresql", "mysql", "mariadb"):
            statement = ("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY" if backend == "postgresql"
                         else "SET SESSION TRANSACTION READ ONLY")

            @sqlalchemy.event.listens_for(engine, "connect")
            def _read_only_session(dbapi_connection: Any, _record: Any) -> None:
                cursor = dbapi_connection.cursor()
                cursor.execute(statement)
                cursor.close()
                if backend == "postgresql":
                    dbapi_connection.commit()

        limit_ms = int(self.timeout * 1000)
        if limit_ms and backend in ("postgresql", "mysql", "mariadb"):
            # The server stops the statement itself (SQLite: see _sqlite_deadline).
            limits = {"postgresql": f"SET statement_timeout = {limit_ms}",
                      "mysql": f"SET SESSION max_execution_time = {limit_ms}",
                      "mariadb": f"SET SESSION max_statement_time = {self.timeout:g}"}

            @sqlalchemy.event.listens_for(engine, "connect")
            def _statement_timeout(dbapi_connection: Any, _record: Any) -> None:
                cursor = dbapi_connection.cursor()
                cursor.execute(limits[backend])
                cursor.close()
                if backend == "postgresql":
                    dbapi_connection.commit()

        return engine

    def _sqlite_deadline(self, conn: Any) -> Any:
        """Stop a SQLite statement once it runs past the time limit: the progress handler is
        called every few thousand virtual-machine steps and interrupts it by returning 1.
        Returns the raw connection (to clear the handler after), or None."""
        if not self.timeout or self.dialect != "sqlite":
            return None
        raw = conn.connection.dbapi_connection
        deadline = time.monotonic() + self.timeout
        raw.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
        return raw

    def _timed_out(self, err: Exception) -> bool:
        text = str(err).lower()
        return bool(self.timeout) and ("interrupted" in text or "statement timeout" in text
                                       or "maximum statement execution time" in text
                                       or "max_statement_time" in text)

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    # -- functions ----------------------------------------------------------------------

    def list_tables(self) -> str:
        """List the tables and views of the database."""
        from sqlalchemy import inspect

        inspector = inspect(self.engine)
        tables = inspector.get_table_names()
        views = inspector.get_view_names()
        lines = [*tables, *(f"{name} (view)" for name in views)]
        return "\n".join(lines) if lines else "(no tables)"

    def describe_table(self, table: str) -> str:
        """Columns (name, type, nullable, default), primary key, foreign keys and indexes of a table.

        Args:
            table: Table name (schema.table for another schema).
        """
        from sqlalchemy import inspect

        schema, _, name = table.rpartition(".")
        inspector = inspect(self.engine)
        if not inspector.has_table(name, schema=schema or None):
            known = ", ".join(inspector.get_table_names()) or "none"
            raise ValueError(f"no table {table!r}; tables: {known}")
        lines = [f"table {table}"]
        for col in inspector.get_columns(name, schema=schema or None):
            extra = "" if col.get("nullable", True) else " NOT NULL"
            if col.get("default") is not None:
                extra += f" DEFAULT {col['default']}"
            lines.append(f"  {col['name']} {col['type']}{extra}")
        pk = (inspector.get_pk_constraint(name, schema=schema or None) or {}).get("constrained_columns") or []
        if pk:
            lines.append(f"primary key ({', '.join(pk)})")
        for fk in inspector.get_foreign_keys(name, schema=schema or None):
            lines.append(f"foreign key ({', '.join(fk['constrained_columns'])}) -> "
                         f"{fk['referred_table']}({', '.join(fk['referred_columns'])})")
        for index in inspector.get_indexes(name, schema=schema or None):
            unique = "unique " if index.get("unique") else ""
            lines.append(f"{unique}index {index['name']} ({', '.join(c for c in index['column_names'] if c)})")
        return "\n".join(lines)

    def run_query(self, sql: str, limit: int = 0) -> str:
        """Run one SQL statement. Rows come back as a tab-separated table with a header.

        Args:
            sql: One SQL statement.
            limit: Most rows to return (default and max: the tool's row cap).
        """
        from sqlalchemy import text

        cap = self.max_rows if limit <= 0 else min(limit, self.max_rows)
        if self.read_only:
            problem = read_only_problem(sql)
            if problem:
                raise PermissionError(f"read-only database: {problem}. Writes need SqlTool(url, read_only=False).")
        try:
            columns, rows, done = self._execute(text(sql), cap)
        except Exception as err:
            if self._timed_out(err):
                raise TimeoutError(f"the query ran longer than the {self.timeout:g} s time limit and was stopped "
                                   "(SqlTool timeout). Make it cheaper: add a LIMIT or a WHERE, or bound a "
                                   "recursive CTE.") from None
            raise
        if done is not None:
            return done
        more = len(rows) > cap
        rows = rows[:cap]
        lines = ["\t".join(columns), *("\t".join(_cell(v) for v in row) for row in rows)]
        footer = f"({len(rows)} row(s)" + (f"; more rows exist: only the first {cap} are shown)" if more else ")")
        return "\n".join([*lines, footer])


    def _execute(self, statement: Any, cap: int) -> tuple[list[str], list[Any], str | None]:
        """(columns, up to cap + 1 rows, None), or ([], [], what was done) for a statement
        that returns no rows; under the time limit (rows are computed while fetched, so the
        limit covers the fetch too)."""
        with self.engine.connect() as conn:
            raw = self._sqlite_deadline(conn)
            try:
                result = conn.execute(statement)
                if not result.returns_rows:
                    count = result.rowcount
                    if self.read_only:
                        conn.rollback()
                        return [], [], "(done; nothing returned; rolled back: read-only)"
                    conn.commit()
                    return [], [], f"(done; {count} row(s) affected)" if count is not None and count >= 0 else "(done)"
                columns = list(result.keys())
                rows = result.fetchmany(cap + 1)
            finally:
                if raw is not None:
                    raw.set_progress_handler(None, 0)
            if self.read_only:
                conn.rollback()
            else:
                conn.commit()
        return columns, rows, None


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    text = str(value)
    text = text.replace("\t", " ").replace("\n", "\\n")
    return text if len(text) <= 500 else text[:500] + "…"
