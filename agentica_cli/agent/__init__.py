"""The agent loop: Agent, ToolConfig, RunResult and the events a run yields.

DeepAgent (the loop plus the builtin coding tools) sits above this package and the builtin tools, in
`agentica_cli.deep`; nothing here imports it (no import circle).

    agent = Agent(model, tools=[...])
    async for event in agent.run_stream("prompt"): ...   # typed events (events.py)
    result = await agent.run("prompt")                   # RunResult(content, messages, usage, stop_reason)
    result = agent.run_sync("prompt")
"""

from agentica_cli.agent import events
from agentica_cli.agent.agent import Agent
from agentica_cli.agent.approval import ApproveHook, Decision
from agentica_cli.agent.config import RunResult, ToolConfig
from agentica_cli.agent.hooks import ToolHooks

__all__ = ["Agent", "ApproveHook", "Decision", "RunResult", "ToolConfig", "ToolHooks", "events"]
