"""The REPL's checkpoint commands: /diff, /undo, /redo, /rewind (slash.py hands them here).

Checkpoints (agentica_cli.checkpoints) do the work; this module shows what they did and
asks before overwriting a file that changed outside the agent. git runs in a worker thread
so the terminal stays responsive.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from agentica_cli.app.safe_text import safe_text
from agentica_cli.prompt_parts import typed_part
from agentica_cli.tui.terminal import plain

if TYPE_CHECKING:
    from agentica_cli.tui.repl_host import ReplHost

DIFF_LINES = 400  # a longer /diff is cut, with a note: /diff N shows one turn


def split_patch(patch: str) -> list[tuple[str, str]]:
    """A multi-file `git diff` -> (path, that file's diff from its `---` line on)."""
    files: list[tuple[str, str]] = []
    for chunk in patch.split("\ndiff --git "):
        chunk = chunk.removeprefix("diff --git ")
        if not chunk.strip():
            continue
        header, _, rest = chunk.partition("\n")
        path = header.split(" b/", 1)[-1] if " b/" in header else header
        start = rest.find("--- ")
        body = rest[start:] if start >= 0 else rest  # a mode change or a binary file: git's own words
        files.append((path, body))
    return files


class CheckpointCommands:
    def __init__(self, repl: ReplHost):
        self.repl = repl

    async def checkpoints(self) -> Any:
        """The session's Checkpoints (made with its agent); None, told why, when they are off."""
        try:
            await self.repl.ensure_agent()
        except Exception as exc:
            plain(f"error: could not start the agent: {type(exc).__name__}: {exc}", "31")
            return None
        found = self.repl.session().checkpoints
        if found is None:
            plain("Checkpoints are off ([checkpoints] enabled = false in config.toml).", "33")
        elif found.disabled:
            plain(safe_text(found.disabled), "33")
            return None
        return found

    async def diff(self, rest: str) -> None:
        checkpoints = await self.checkpoints()
        if checkpoints is None:
            return
        turn = int(rest) if rest.isdigit() else None
        if rest and turn is None:
            plain("Usage: /diff (the whole session) or /diff N (turn N; /rewind lists them).", "33")
            return
        try:
            patch = await asyncio.to_thread(checkpoints.diff, turn)
        except Exception as exc:
            plain(f"Could not diff: {safe_text(str(exc))}", "31")
            return
        if not patch.strip():
            plain("No changes" + (f" in turn {turn}." if turn else " in this session yet."), "2")
            return
        self.show_patch(patch)

    def show_patch(self, patch: str) -> None:
        from rich.text import Text

        from agentica_cli.tui.diff_preview import render_diff

        self.repl.ensure_renderer()
        console = self.repl.console
        room = DIFF_LINES
        files = split_patch(patch)
        for number, (path, body) in enumerate(files):
            if room <= 0:
                plain(f"… {len(files) - number} more file(s) not shown; /diff N shows one turn.", "2")
                break
            console.print(Text(safe_text(path, keep_newlines=False), style="bold"))
            lines = body.count("\n") + 1
            console.print(render_diff(body, max_lines=room))
            room -= lines

    async def _restore(self, what: str, action: Any) -> Any:
        """Run undo/redo/rewind; on conflicts list them and ask before overwriting."""
        result = await self._attempt(action, False)
        if result is None or result.done or not result.conflicts:
            return result
        during = set(getattr(result, "during", []))
        plain(f"Changed by someone other than the agent (since the agent's {what}, or while its turn ran):", "33")
        for path in result.conflicts:
            why = "changed while the turn ran" if path in during else "changed after the turn"
            plain(f"  {safe_text(path, keep_newlines=False)}  ({why})", "33")
        try:  # one key, as an approval
            overwrite = await self.repl.ask_yes_no("Overwrite them anyway? Your changes to them are lost. [y/N] ",
                                                   default=False)
        except (KeyboardInterrupt, EOFError):
            overwrite = False
        if not overwrite:
            plain("Nothing was changed.", "2")
            return None
        return await self._attempt(action, True)

    @staticmethod
    async def _attempt(action: Any, force: bool) -> Any:
        """`action(force)` in a worker thread; a git failure is told, not raised (None)."""
        try:
            return await asyncio.to_thread(action, force)
        except Exception as exc:
            plain(f"Could not restore: {safe_text(str(exc))}", "31")
            return None

    def _report(self, verb: str, result: Any, action: str, *, tell_model: bool = True) -> None:
        """Show what was restored; `tell_model`: and tell the model with the next message (not when
        the conversation goes back to before the same turn: then it never saw those edits)."""
        if result is None:
            return
        if not result.done:
            plain(result.reason.capitalize() + ".", "2")
            return
        if tell_model:
            from agentica_cli.restore_notes import restore_note

            # Otherwise the model goes on believing its edits are there.
            self.repl.pending_context.append(restore_note(action, result.turn.number, result.turn.prompt,
                                                          list(result.files)))
        prompt = safe_text(typed_part(result.turn.prompt), keep_newlines=False)
        plain(f"{verb} turn {result.turn.number} ({short_prompt(prompt)}): {len(result.files)} file(s)", "32")
        for path in result.files[:30]:
            plain(f"  {safe_text(path, keep_newlines=False)}", "2")
        if len(result.files) > 30:
            plain(f"  … {len(result.files) - 30} more", "2")
        left = getattr(result, "left_alone", [])
        if left:
            plain("Left alone (changed by someone else while the turn ran, not by the agent):", "2")
            for path in left[:30]:
                plain(f"  {safe_text(path, keep_newlines=False)}", "2")

    async def undo(self, rest: str) -> None:
        checkpoints = await self.checkpoints()
        if checkpoints is not None:
            self._report("Undid", await self._restore("last turn", lambda force: checkpoints.undo(force=force)),
                         "undo")

    async def redo(self, rest: str) -> None:
        checkpoints = await self.checkpoints()
        if checkpoints is not None:
            self._report("Redid", await self._restore("undo", lambda force: checkpoints.redo(force=force)), "redo")

    async def rewind(self, rest: str) -> None:
        """/rewind: list the turns; /rewind N [code|conversation|both]."""
        checkpoints = await self.checkpoints()
        if checkpoints is None:
            return
        turns = await asyncio.to_thread(checkpoints.turns)
        if not turns:
            plain("No turns in this session yet.", "2")
            return
        words = rest.split()
        if not words:
            for turn in turns:
                when = time.strftime("%H:%M", time.localtime(turn.started))
                mark = "  (undone)" if turn.undone else ""
                prompt = short_prompt(safe_text(typed_part(turn.prompt), keep_newlines=False))  # as typed
                plain(f"  {turn.number:>3}. {when}  {prompt}  · {len(turn.files)} file(s){mark}")
            try:
                words = (await self.repl.ask_line("Rewind to before which turn? (number; Enter: none) ")).split()
            except (KeyboardInterrupt, EOFError):
                words = []
            if not words:
                return
        number = int(words[0]) if words[0].isdigit() else -1
        turn = next((t for t in turns if t.number == number), None)
        if turn is None:
            plain(f"No turn {safe_text(words[0])}; /rewind lists them.", "33")
            return
        what = words[1] if len(words) > 1 else await self._ask_what()
        if what not in ("code", "conversation", "both"):
            if what:
                plain("Choose code, conversation or both.", "33")
            return
        if what in ("code", "both"):
            result = await self._restore("last turn", lambda force: checkpoints.rewind(number, force=force))
            if result is None:
                return
            self._report("Rewound code to before", result, "rewind", tell_model=what == "code")
        if what in ("conversation", "both"):
            self.rewind_conversation(turn)

    async def _ask_what(self) -> str:
        try:
            reply = (await self.repl.ask_line("Restore (c)ode, c(o)nversation or (b)oth? [b] ")).strip().lower()
        except (KeyboardInterrupt, EOFError):
            return ""
        return {"": "both", "b": "both", "c": "code", "o": "conversation"}.get(reply, reply)

    def rewind_conversation(self, turn: Any) -> None:
        """Cut the history just before the turn's prompt (the session file too), and put the
        prompt back at the input to edit and send again."""
        from agentica_cli.agent.context import is_summary, uncompacted_history
        from agentica_cli.checkpoints import conversation_cut

        repl = self.repl
        app = repl.session()
        messages = app.history
        cut = conversation_cut(messages, turn)
        away = list(getattr(app.agent, "compacted_away", None) or [])
        if (cut is None or (cut == 0 and messages and is_summary(messages[0]))) and away:
            # The turn's prompt was summarised: the summary tells of the very turns taken back, so
            # the conversation goes back to what the summary replaced, before that turn.
            messages = uncompacted_history(away, messages)
            cut = conversation_cut(messages, turn)
            away = []
        if cut is None:
            plain("The conversation no longer holds that prompt (it was compacted); the conversation is unchanged.",
                  "33")
            return
        kept = messages[:cut]
        app.replace_history(kept, away if kept and is_summary(kept[0]) else [])  # the session file too
        repl.next_default = typed_part(turn.prompt)  # as typed: its @mentions attach again when sent
        plain(f"Rewound the conversation to before turn {turn.number} ({len(kept)} messages kept); "
              "its prompt is back at the input.", "32")


def short_prompt(text: str, width: int = 60) -> str:
    """A prompt on one line, cut to `width` characters."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
