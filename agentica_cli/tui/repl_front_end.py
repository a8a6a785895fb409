"""ReplFrontEnd: how the REPL's AppSession asks and tells its user.

The policy's questions are read at one key (Repl.ask_approval), an MCP server's forms and
sampling requests in mcp_client_ui, an "always" answer is confirmed under the question, and a
notice (a hook's message, a failed MCP server, what start-up found) is printed above the
prompt the user may be typing at.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentica_cli.app.permissions.approvals import Answer, Question, Reason
    from agentica_cli.tools.mcp.client_features import ElicitAnswer, ElicitRequest, SamplingRequest
    from agentica_cli.tui.repl_host import ReplHost


class ReplFrontEnd:
    can_ask = True

    def __init__(self, repl: ReplHost) -> None:
        self.repl = repl

    async def ask_permission(self, call: Any, question: Question) -> Answer:
        return await self.repl.ask_approval(call, question)

    async def elicit(self, request: ElicitRequest) -> ElicitAnswer:
        from agentica_cli.tui.mcp_client_ui import ask_form

        return await ask_form(self.repl, request)

    async def sample(self, request: SamplingRequest) -> str | None:
        from agentica_cli.tui.mcp_client_ui import approve_sampling

        return await approve_sampling(self.repl, request)

    def report(self, text: str) -> None:
        self._show(text, "33")

    def mcp_failed(self, message: str) -> None:
        self._show(f"{message} (see /mcp)", "31")  # /mcp shows its log and restarts it

    def _show(self, text: str, color: str) -> None:
        from agentica_cli.tui.terminal import plain

        def show() -> None:
            plain(text, color)  # plain() passes it through safe_text

        from prompt_toolkit.application import get_app_or_none, run_in_terminal

        app = get_app_or_none()
        if app is not None and app.is_running:
            run_in_terminal(show)  # above the prompt the user may be typing at, which is drawn again
        else:
            show()  # in order with what the REPL prints (a turn, a command, start-up)

    def refused(self, name: str, mode: str, why: Reason) -> None:
        return None  # the tool's result says why, and the transcript shows it

    async def granted(self, granted: str, mode_changed: bool) -> None:
        self.repl.show_grant(granted, mode_changed)
