"""Checkpoints: snapshots of the project's work tree in a shadow git repository, with
diff, undo / redo and rewind. No UI here: the REPL, `-p` and editor integrations use it."""

from agentica_cli.checkpoints.shadow import CheckpointError, ShadowRepo, git_available, shadow_dir_for
from agentica_cli.checkpoints.store import (
    Checkpoints,
    RestoreResult,
    SnapshotInfo,
    Turn,
    conversation_cut,
)

__all__ = [
    "CheckpointError",
    "Checkpoints",
    "RestoreResult",
    "ShadowRepo",
    "SnapshotInfo",
    "Turn",
    "conversation_cut",
    "git_available",
    "shadow_dir_for",
]
