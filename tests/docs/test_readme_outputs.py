"""What a new user's README commands write stays out of ``git status``: every output path
of the README's shell blocks (``--out``, ``--hf-dataset``, ``--summary``, ``> FILE``,
``mkdir``, the demo's VAE command) is git-ignored, above all ``admins.txt``, which holds a
password in plain text."""

from __future__ import annotations

import itertools
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.paths import REPO_ROOT

ROOT = REPO_ROOT
README = ROOT / "README.md"
#: Flags whose value is a file or folder the command writes.
OUTPUT_FLAGS = ("--out", "-o", "--hf-dataset", "--summary")


def written_paths(text: str) -> set[str]:
    """The paths the README's ```bash blocks write, relative to the clone.

    >>> sorted(written_paths("```bash\\nglyphbench run --out runs/x\\nprintf a > a.txt\\n```"))
    ['a.txt', 'runs/x']
    """
    paths: set[str] = set()
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()
            if not command or command.startswith("#"):
                continue
            for part in re.split(r"&&|;", command):
                words = shlex.split(part)
                for flag, value in itertools.pairwise(words):
                    if flag in OUTPUT_FLAGS or flag in (">", ">>"):
                        paths.add(value)
                if words[:2] == ["mkdir", "-p"]:
                    paths.update(words[2:])
    # outside the clone, or a placeholder for the user's own name (OUT.csv, SUMMARY.json)
    return {p for p in paths if not p.startswith(("/", "..", "$")) and not Path(p).stem.isupper()}


def test_every_path_the_readme_writes_is_git_ignored() -> None:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    from glyphbench.cli.demo import VAE_COMMAND

    demo_prints = written_paths(f"```bash\n{VAE_COMMAND}\n```")  # the demo's last hint
    paths = written_paths(README.read_text(encoding="utf-8")) | demo_prints | {"admins.txt"}
    assert {"admins.txt", "study", "my-prompts.csv", "out", "runs/x", "vae-out"} <= paths
    ignored = subprocess.run(
        [git, "check-ignore", "--no-index", *sorted(paths)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    assert set(ignored) == paths, sorted(paths - set(ignored))
