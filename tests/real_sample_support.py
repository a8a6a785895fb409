"""Where the sample of real files from public repositories is (issue 26).

Those files are other people's work, fetched from public repositories, so they are not
committed here: the steering repository's `shared/claude_files` holds them (CI gets `shared/`
beside the checkout), or $AGENTICA_CLAUDE_SAMPLE names a copy. Each has MANIFEST.json naming
every file's repository, commit, path and licence; tests that need it skip, saying so, without it.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sample_folder() -> Path | None:
    given = os.environ.get("AGENTICA_CLAUDE_SAMPLE")
    candidates = [Path(given)] if given else []
    candidates.append(ROOT.parent / "shared" / "claude_files")
    return next((c for c in candidates if (c / "MANIFEST.json").is_file()), None)


NO_SAMPLE = ("no sample of real Claude Code files: set AGENTICA_CLAUDE_SAMPLE or put it in "
             "shared/claude_files (see tests/real_sample_support.py)")
