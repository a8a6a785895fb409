"""`agentica doctor`: what this folder's session would find, load and skip, and why.

It reads what a session reads at start (config files, instruction files and their imports,
commands, agents, skills, hooks, MCP servers, trust) and starts nothing: no model, no MCP
server, no hook. A project that is not trusted has its files listed as held back (they are
read to be shown, never run). Everything printed comes from files somebody else may have
written, so each line goes through safe_text, and lines are wrapped to 80 columns.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentica_cli.app import exitcodes

if TYPE_CHECKING:
    from agentica_cli.app.settings.config import Settings

WIDTH = 80


def _shown(path: Path | str | None, work_dir: Path) -> str:
    if path is None:
        return ""
    path = Path(path)
    try:
        return str(path.relative_to(work_dir))
    except ValueError:
        home = Path.home()
        return "~/" + str(path.relative_to(home)) if path.is_relative_to(home) else str(path)


def gather(work_dir: Path) -> dict[str, Any]:
    """The report as data (the --json output)."""
    from agentica_cli.app.extension_setup import listing_notices, load_extensions
    from agentica_cli.app.instructions import read_instructions
    from agentica_cli.app.settings.config import ConfigError, load_settings
    from agentica_cli.app.settings.trust import is_trusted, project_root

    trusted = is_trusted(work_dir)
    root = project_root(work_dir)
    report: dict[str, Any] = {"work_dir": str(work_dir), "project_root": str(root), "trusted": trusted}
    try:
        settings = load_settings(work_dir, {}, trusted=trusted)
    except ConfigError as err:
        report["config_error"] = str(err)
        return report
    report["config_files"] = _config_files(settings, work_dir)
    found = read_instructions(work_dir)
    report["instructions"] = {
        "loaded": [{"path": str(f.path), "bytes": f.size, "imported_by": str(f.imported_by) if f.imported_by else None,
                    "scope": "user" if f.personal else "project"} for f in found.files],
        "repeats": [{"path": str(path), "why": why} for path, why in found.repeats],
        "problems": list(found.problems),
    }
    extensions = load_extensions(settings, work_dir)
    report["commands"] = [{"name": c.name, "scope": c.scope, "path": str(c.path), "description": c.description}
                          for _, c in sorted(extensions.commands.items())]
    report["agents"] = [{"name": a.name, "scope": a.scope, "path": str(a.path) if a.path else None,
                         "description": a.description} for _, a in sorted(extensions.agents.items())]
    report["skills"] = [{"name": s.name, "scope": s.scope, "path": str(s.folder / "SKILL.md"),
                         "description": s.description} for _, s in sorted(extensions.skills.items())]
    report["hooks"] = [{"event": h.event, "matcher": h.matcher, "type": h.kind, "source": h.source,
                        "run": h.command or h.url or h.prompt} for h in extensions.hooks]
    report["skipped"] = list(extensions.problems)
    report["listing_notices"] = listing_notices(extensions, None)
    report["mcp_servers"] = _mcp_servers(settings)
    report["held_back"], held_problems = ([], []) if trusted else _held_back(root)
    report["skipped"] += held_problems
    report["warnings"] = list(settings.warnings)
    return report


def _config_files(settings: Settings, work_dir: Path) -> list[dict[str, Any]]:
    from agentica_cli.app.settings.config import agentica_home, project_config_path

    files = []
    user = settings.user_file or agentica_home() / "config.toml"
    files.append({"path": str(user), "scope": "user", "state": "read" if settings.user_file else "absent"})
    from agentica_cli.app.settings.trust import project_root

    project = settings.project_file or project_config_path(work_dir) or project_root(work_dir) / ".agentica/config.toml"
    if settings.project_file is not None:
        held = sorted(settings.held_back)
        state = f"read; held back until trusted: {', '.join(held)}" if held else "read"
    else:
        state = "absent"
    files.append({"path": str(project), "scope": "project", "state": state})
    if settings.mcp_json_file is not None:
        state = "held back until trusted" if settings.mcp_json_held_back else "read"
        files.append({"path": str(settings.mcp_json_file), "scope": "project", "state": state})
    from agentica_cli.app.settings.trust import is_trusted
    from agentica_cli.extensions.hook_config import SETTINGS_FILES

    hook_files = [(agentica_home() / "settings.json", "user", True)]
    hook_files += [(project_root(work_dir) / name, "project", is_trusted(work_dir)) for name in SETTINGS_FILES]
    for path, scope, used in hook_files:  # Claude Code's settings files: their hooks
        if path.is_file():
            files.append({"path": str(path), "scope": scope,
                          "state": "read (hooks)" if used else "held back until trusted (hooks)"})
    return files


def _mcp_servers(settings: Settings) -> list[dict[str, Any]]:
    from agentica_cli.cli.mcp_config_edit import describe_server

    servers = [{"name": name, "how": describe_server(table), "state": "configured",
                "source": settings.sources.get(f"mcp_servers.{name}", "config")}
               for name, table in settings.mcp_servers.items()]
    held = [(name, table, settings.project_file) for name, table in
            (settings.held_back.get("mcp_servers") or {}).items()]
    held += [(name, table, settings.mcp_json_file) for name, table in settings.mcp_json_held_back.items()]
    servers += [{"name": name, "how": describe_server(table), "source": str(path), "state": "held back until trusted"}
                for name, table, path in held]
    return servers


def _held_back(root: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """An untrusted project's own commands, agents, skills and hooks (read to be listed, not
    loaded), and the files among them that would be skipped once it is trusted."""
    from agentica_cli.extensions.agents import load_agents
    from agentica_cli.extensions.commands import load_commands
    from agentica_cli.extensions.hook_config import load_hook_specs
    from agentica_cli.extensions.places import Places
    from agentica_cli.extensions.skills import load_skills

    places = Places(project=root, claude_home=None)
    problems: list[str] = []
    held = [{"kind": "command", "name": c.name, "path": str(c.path)}
            for c in load_commands(places, problems).values() if c.scope == "project"]
    held += [{"kind": "agent", "name": a.name, "path": str(a.path)}
             for a in load_agents(places, problems).values() if a.scope == "project"]
    held += [{"kind": "skill", "name": s.name, "path": str(s.folder / "SKILL.md")}
             for s in load_skills(places, problems).values() if s.scope == "project"]
    held += [{"kind": "hook", "name": h.event, "path": h.source} for h in load_hook_specs(places, problems)
             if h.source.startswith(str(root))]
    return held, problems


class _Writer:
    def __init__(self, work_dir: Path):
        self.work_dir = work_dir
        self.lines: list[str] = []

    def line(self, text: str, indent: int = 0) -> None:
        from agentica_cli.app.safe_text import safe_text

        text = safe_text(text, keep_newlines=False)
        self.lines += textwrap.wrap(text, WIDTH, initial_indent=" " * indent, subsequent_indent=" " * (indent + 4),
                                    break_on_hyphens=False) or [""]

    def section(self, title: str, items: list[Any]) -> None:
        self.lines.append("")
        self.line(f"{title} ({len(items)}):")

    def path(self, path: Any) -> str:
        return _shown(path, self.work_dir)


def render(report: dict[str, Any]) -> str:
    work_dir = Path(report["work_dir"])
    out = _Writer(work_dir)
    out.line(f"agentica doctor: {report['work_dir']}")
    state = "trusted" if report["trusted"] else "not trusted (its commands, agents, skills, hooks and MCP servers " \
                                                "are off: agentica --trust)"
    out.line(f"project: {report['project_root']}, {state}")
    if "config_error" in report:
        out.line(f"config error: {report['config_error']}")
        return "\n".join(out.lines) + "\n"
    out.section("config files", report["config_files"])
    for item in report["config_files"]:
        out.line(f"{out.path(item['path'])}: {item['state']}", 2)
    for warning in report["warnings"]:
        out.line(f"warning: {warning}", 2)
    found = report["instructions"]
    out.section("instructions", found["loaded"])
    for item in found["loaded"]:
        via = f", imported by {out.path(item['imported_by'])}" if item["imported_by"] else ""
        out.line(f"{out.path(item['path'])}: {item['bytes']:,} bytes ({item['scope']}{via})", 2)
    for item in found["repeats"]:
        out.line(f"{out.path(item['path'])}: not repeated, {item['why']}", 2)
    for problem in found["problems"]:
        out.line(problem, 2)
    for key, title in (("commands", "commands"), ("agents", "sub-agents"), ("skills", "skills")):
        out.section(title, report[key])
        for item in report[key]:
            prefix = "/" if key == "commands" else ""
            out.line(f"{prefix}{item['name']} ({item['scope']}): {item['description'][:100]}", 2)
            out.line(out.path(item["path"]), 6)
    out.section("hooks", report["hooks"])
    for hook in report["hooks"]:
        matcher = f" [{hook['matcher']}]" if hook["matcher"] else ""
        out.line(f"{hook['event']}{matcher} {hook['type']}: {hook['run'][:100]}", 2)
        out.line(out.path(hook["source"]), 6)
    out.section("MCP servers (not started)", report["mcp_servers"])
    for server in report["mcp_servers"]:
        out.line(f"{server['name']}: {server['how']}", 2)
        out.line(f"{out.path(server['source'])}, {server['state']}", 6)
    if report["held_back"]:
        out.section("held back until the project is trusted", report["held_back"])
        for item in report["held_back"]:
            out.line(f"{item['kind']} {item['name']}: {out.path(item['path'])}", 2)
    out.section("skipped", report["skipped"])
    for problem in report["skipped"]:
        out.line(problem, 2)
    for notice in report["listing_notices"]:
        out.line(f"note: {notice}", 2)
    return "\n".join(out.lines) + "\n"


def run_doctor(work_dir: Path | None, as_json: bool) -> int:
    import os

    folder = (work_dir or Path.cwd()).expanduser()
    if not folder.is_dir():
        sys.stderr.write(f"agentica: --work-dir {folder}: no such folder\n")
        return exitcodes.USAGE_ERROR
    report = gather(Path(os.path.realpath(folder)))
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=True) + "\n")
    else:
        sys.stdout.write(render(report))
    return exitcodes.USAGE_ERROR if "config_error" in report else exitcodes.OK
