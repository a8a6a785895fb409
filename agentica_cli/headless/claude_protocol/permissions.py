"""Permission modes and `can_use_tool`: the SDK program answers what agentica would ask.

agentica's policy (cli/approvals.py) decides every call as in any run: deny rules, plan mode,
the sandbox's escalations, the mode. A call it would ask a person about is asked of the SDK's
`can_use_tool` callback (with --permission-prompt-tool stdio, which the SDK passes when the
program sets one) in a `can_use_tool` control request carrying Claude's tool name and input;
`allow` runs the call, with `updatedInput` when the program changed it, and applies its
`updatedPermissions` for the session (`addRules`, `replaceRules`, `setMode`); `deny` refuses it
with the program's message for the model, and `interrupt: true` also stops the turn. Without a
callback (or in dontAsk mode) such a call is refused, as in `agentica -p`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from agentica_cli.app.permissions.approvals import Answer, call_args
from agentica_cli.headless.claude_protocol.channel import ControlChannel, ControlError
from agentica_cli.headless.claude_protocol.flags import PERMISSION_MODES
from agentica_cli.headless.claude_protocol.tool_names import claude, claude_input, our_input

OUR_TO_CLAUDE_MODE = {"default": "default", "accept-edits": "acceptEdits", "auto": "bypassPermissions",
                      "plan": "plan"}


class SdkPermissions:
    """The policy's `ask`: a `can_use_tool` request to the SDK."""

    def __init__(self, channel: ControlChannel, *, enabled: bool, dont_ask: bool):
        self.channel = channel
        self.enabled = enabled  # the program has a can_use_tool callback
        self.dont_ask = dont_ask
        self.policy: Any = None  # the PermissionPolicy whose questions these are (set when the agent is built)
        self.on_interrupt: Callable[[], None] | None = None  # a deny with `interrupt: true` stops the turn
        self.on_mode: Callable[[str], None] | None = None  # an update that sets the mode (Claude's name)

    async def __call__(self, call: Any, verdict: Any) -> Answer:
        if self.dont_ask or not self.enabled:
            return Answer("no", "this session cannot ask (permission mode dontAsk, or no can_use_tool callback)")
        name = str(getattr(call, "name", ""))
        sent = claude_input(name, call_args(call))
        request: dict[str, Any] = {"subtype": "can_use_tool", "tool_name": claude(name), "input": sent,
                                   "permission_suggestions": [], "tool_use_id": getattr(call, "call_id", None)}
        reason = getattr(verdict, "note", "")
        if reason:
            request["decision_reason"] = reason
        try:
            answer = await self.channel.request(request)
        except ControlError as err:
            return Answer("no", f"the permission check failed: {err}")
        if answer.get("behavior") != "allow":
            if answer.get("interrupt") and self.on_interrupt is not None:
                self.on_interrupt()
            return Answer("no", str(answer.get("message") or ""))
        for update in answer.get("updatedPermissions") or []:
            self.apply_update(update)
        updated = answer.get("updatedInput")
        if isinstance(updated, dict) and updated != sent and not call.replace_arguments(our_input(name, updated)):
            return Answer("no", f"the program changed the input of {claude(name)} to something it does not "
                                    f"take: {call.result}")
        return Answer("once")


    def apply_update(self, update: Any) -> None:
        """One of the SDK's PermissionUpdates, for this session (a destination such as
        `projectSettings` is not written: agentica's config files are the user's)."""
        from agentica_cli.app.permissions.permission_rules import PermissionRule, RuleError

        kind = update.get("type") if isinstance(update, dict) else None
        if kind == "setMode" and isinstance(update.get("mode"), str) and self.on_mode is not None:
            self.on_mode(update["mode"])
            return
        if kind in ("addRules", "replaceRules") and self.policy is not None:
            behavior = update.get("behavior")
            texts = []
            for rule in update.get("rules") or []:
                if isinstance(rule, dict) and isinstance(rule.get("toolName"), str):
                    content = rule.get("ruleContent")
                    texts.append(f"{rule['toolName']}({content})" if content else rule["toolName"])
            try:
                rules = [PermissionRule.parse(str(behavior), text, "the SDK (can_use_tool)") for text in texts]
            except RuleError as err:
                sys.stderr.write(f"agentica: a permission update from the SDK was not applied: {err}\n")
                return
            if behavior not in ("allow", "deny", "ask"):
                sys.stderr.write(f"agentica: a permission update from the SDK was not applied: behavior {behavior!r}\n")
                return
            if kind == "replaceRules":
                self.policy.rules = [r for r in self.policy.rules if r.kind != behavior]
            self.policy.rules.extend(rules)
            return
        sys.stderr.write(f"agentica: a permission update from the SDK was not applied: {kind!r} is not supported "
                         "(addRules, replaceRules and setMode are)\n")


def set_claude_mode(policy: Any, prompt: Any, permissions: SdkPermissions, mode: str) -> None:
    """`set_permission_mode`: Claude's mode name, applied to the policy and the plan-mode note."""
    if mode not in PERMISSION_MODES:
        raise ValueError(f"permission mode {mode!r} is not supported (agentica has: {', '.join(PERMISSION_MODES)})")
    ours = PERMISSION_MODES[mode]
    policy.set_mode(ours, explicit=mode == "bypassPermissions")
    permissions.dont_ask = mode == "dontAsk"
    prompt.apply(ours)
