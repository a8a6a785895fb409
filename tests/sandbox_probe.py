"""Runs one command the way the execute tool does (Sandbox.prepare + process_group.run_in_group:
stdin from /dev/null, output on pipes, a session of its own, the group watcher) and prints
{"code", "output"} as JSON. A script, not a fixture, so the sandbox tests can run it as root and
as an unprivileged user (setpriv) with the system Python, which has only the standard library:
it imports no more of agentica than the sandbox and process_group.

    python3 sandbox_probe.py SPEC_JSON
    SPEC: {"backend", "work", "home", "command", "env": {...}, "timeout", "reap": bool,
           "network": bool, "unix_sockets": bool, "hide": [...]}
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
# agentica_cli/__init__ and tools/__init__ import lazily: only the sandbox and process_group load
# (not builtin_tools/__init__, which imports the whole tool set: pydantic ...).

from agentica_cli.sandbox import Sandbox, SandboxPolicy  # noqa: E402
from agentica_cli.tools.local.process_group import run_in_group  # noqa: E402


def main() -> None:
    spec = json.loads(sys.argv[1])
    if spec.get("reap"):  # what the agentica CLI does once its sandbox is built
        from agentica_cli.sandbox.descendants import end_descendants_at_exit

        end_descendants_at_exit()
    os.environ["HOME"] = spec["home"]
    os.environ.update(spec.get("env", {}))  # agentica's own environment (SSH_AUTH_SOCK ...) shapes the policy
    policy = SandboxPolicy.build("workspace-write", spec["work"], home=spec["home"],
                                 hide=spec.get("hide", ()),
                                 **({"unix_sockets": True} if spec.get("unix_sockets") else {}))
    sandbox = Sandbox(policy, spec["backend"])
    env = sandbox.environment({"PATH": "/usr/bin:/bin", "HOME": spec["home"], **spec.get("env", {})})
    launch = sandbox.prepare(["/bin/bash", "-c", spec["command"]], spec["work"], network=spec.get("network", False))
    outcome = asyncio.run(run_in_group(launch.argv, cwd=spec["work"], env=env, timeout=spec.get("timeout", 30),
                                       start=launch.spawn))
    text = outcome.stdout.render(100_000) + outcome.stderr.render(100_000)
    print(json.dumps({"code": outcome.returncode, "output": text}), flush=True)


if __name__ == "__main__":
    main()
