"""The exit codes of ``glyphbench run`` (and ``merge``, ``rescore``, ``read``, ``report``).

One table, printed by ``glyphbench run --help`` and in docs/running.md ("Exit codes"),
so that a job scheduler can tell a run that made its rows from one that did not:

>>> [line.split()[0] for line in EXIT_TABLE.splitlines()[1:]]
['0', '1', '2', '3', '130']
"""

from __future__ import annotations

#: Every model made rows; failed rows of a model that made others are named on stderr.
OK = 0
#: Nothing usable: every row failed (of the run, this shard, or the images read).
EVERY_ROW_FAILED = 1
#: A user error (a flag, the config, an input file): one line, nothing written.
USER_ERROR = 2
#: A model failed on every row while others made rows (run), or cannot run here (--dry-run).
MODEL_FAILED = 3
#: Ctrl-C (128 + SIGINT) and SIGTERM (128 + SIGTERM): run the same command again to resume.
INTERRUPTED, TERMINATED = 130, 143

#: The table ``--help`` prints (docs/running.md has the same rows).
EXIT_TABLE = "\n".join(
    [
        "Exit codes:",
        f"{OK} every model made rows (failed rows of a model that made others are named on "
        "stderr; the same command retries them)",
        f"{EVERY_ROW_FAILED} every row failed (nothing usable)",
        f"{USER_ERROR} user error (a flag, the config, an input file): nothing written",
        f"{MODEL_FAILED} a model failed on every row, after the other models finished; "
        "with --dry-run: a model cannot run here (weights neither local, cached nor on a "
        "reachable hub)",
        f"{INTERRUPTED} interrupted (Ctrl-C), {TERMINATED} terminated (SIGTERM): run the "
        "same command again to resume",
    ]
)
