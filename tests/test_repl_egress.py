"""fetch_url in the REPL (issue 25, item 6): asked with where it goes, "always" grants the
domain, /permissions lists it, and another domain is asked again."""

from __future__ import annotations

from pathlib import Path

from cli_support import tool_results
from screen_support import spawn_screen

from agentica_cli.testing import ScriptedModelServer, turns


def test_a_fetch_is_asked_and_always_grants_its_domain(home: Path, project: Path) -> None:
    (home / "config.toml").write_text('[tools]\nfetch_allow_private = ["127.0.0.1/32"]\n')
    script = [
        turns.tool_calls(turns.call("fetch_url", {"url": "http://127.0.0.1:9/a"}, id="f1")),
        turns.tool_calls(turns.call("fetch_url", {"url": "http://127.0.0.1:9/b"}, id="f2")),
        turns.tool_calls(turns.call("fetch_url", {"url": "http://localhost:9/c"}, id="f3")),
        turns.text("Done."),
    ]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, columns=120, lines=50)
        screen.send("fetch it\r")
        shown = screen.wait_text("Allow?")
        assert "sends data off this machine: to 127.0.0.1" in shown
        assert "don't ask again for fetch_url to 127.0.0.1" in shown
        screen.send("a")
        # the second fetch to the same host runs unasked; the third, to another host, asks
        shown = screen.wait_for(lambda text: "to localhost" in text and text.rstrip().endswith("esc]"),
                                what="the question for localhost")
        assert shown.count("sends data off this machine") == 2  # 127.0.0.1's second fetch was not asked
        screen.send("n")
        screen.wait_text("Done.")
        screen.send("/permissions\r")
        shown = screen.wait_text("1. fetch_url: 127.0.0.1")
        assert "sending data off this machine" in shown
        screen.child.terminate(force=True)
    results = tool_results(server.requests[3])
    assert "was not run" not in results["f2"]  # it ran (and found nothing listening on port 9)
    assert "declined" in results["f3"]
