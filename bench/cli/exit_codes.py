"""The exit codes of ``glyphbench run`` (and ``merge``, ``rescore``, ``read``, ``report``),
so that a job scheduler can tell a run that made its rows from one that did not.

docs/running.md ("Exit codes") has the table, and ``glyphbench run --help`` lists them;
``tests/bench/cli/test_run_answer.py`` checks 3 on a real run and a real dry run.
"""

from __future__ import annotations

#: Every model made rows; failed rows of a model that made others are named on stderr.
OK = 0
#: Nothing usable: every row failed (of the run, this shard, or the images read).
EVERY_ROW_FAILED = 1
#: A user error (a flag, the config, an input file): one line, nothing written.
USER_ERROR = 2
#: A model failed on every row while others made rows (run), or cannot run here (--dry-run;
#: without it the run refuses such a model before writing: USER_ERROR).
MODEL_FAILED = 3
#: The disk (or the quota) filled part-way: what was written is kept and whole; free
#: space and run the same command again to resume.
NO_SPACE = 4
#: Ctrl-C (128 + SIGINT) and SIGTERM (128 + SIGTERM): run the same command again to resume.
INTERRUPTED, TERMINATED = 130, 143
