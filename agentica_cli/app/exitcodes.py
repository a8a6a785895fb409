"""Process exit codes of the `agentica` command (documented in --help and docs/cli.md)."""

from __future__ import annotations

OK = 0  # the task finished (a refused tool call still counts: the model was told)
MODEL_ERROR = 1  # the model/API failed for good (after retries), or the run ended with an error
USAGE_ERROR = 2  # a wrong flag, a bad config file, or no API key configured
INCOMPLETE = 3  # the run stopped at a limit (max turns), or the answer was cut, filtered or empty
BLOCKED = 4  # a UserPromptSubmit hook refused the prompt: it never reached the model
INTERRUPTED = 130  # Ctrl-C / SIGINT
OUTPUT_CLOSED = 141  # stdout's reader went away (`| head`): 128 + SIGPIPE, as shells report it

HELP_TEXT = """\
exit codes:
  0    done
  1    model or API failure (after retries)
  2    usage or config error (wrong flag, bad config, no API key)
  3    stopped at a limit (max turns), or the answer was cut off, filtered or empty
  4    the prompt was blocked by a hook (UserPromptSubmit)
  130  interrupted (Ctrl-C)
  141  stdout was closed by its reader (e.g. piped into head)"""
