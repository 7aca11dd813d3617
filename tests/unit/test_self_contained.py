"""A bare clone passes its tests with nothing beside the checkout.

Every text file in tests/, scripts/, .ci/ and bench/ (and pyproject.toml) is scanned for a path that leaves the
repository: the old evaluation pack beside it (a "shared" folder next to the checkout), the test file's own path
climbed above the repository root (``parents[N]``, ``.parent`` or ".." steps counted against the file's depth), the
repository root constant climbed, a shell script's own folder climbed past the root, and absolute paths into a work
or home folder. A path given explicitly to a command-line option in a usage example (``--eval <somewhere>``) is
allowed: the benchmarks may read larger data from where the user says. The data the tests need is vendored under
``tests/data/eval`` (see its README); its layout is checked here too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath

import pytest

from tests.paths import EVAL, REPO

SCANNED = ("tests", "scripts", ".ci", "bench", "pyproject.toml")
SKIP_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"}
PACKS = ("chinook", "sakila", "northwind")

# Absolute paths into a work or home folder (not preceded by a word character, "~" or ".", so URLs and
# "~/.cache" are not hits).
_ABSOLUTE = re.compile(r"(?<![\w.~$}-])/(?:work|home/\w+|root|Users/\w+)/")
# The evaluation pack beside the repository, however it is spelt.
# (A mention in prose, such as "the format of `shared/eval/...`", is not a read and is not a hit.)
_SHARED = re.compile(r"\.\.[/\\]+shared\b|/\s*[\"']shared[\"']|[\"']shared[/\\]")
# Path(__file__) climbed: parent(s) before/after parents[N] and "/ '..'" steps; counted against the file's depth.
_FILE_CLIMB = re.compile(
    r"__file__\)?(?:\.resolve\(\))?((?:\.parent\b)*)(?:\.parents\[(\d+)\])?((?:\.parent\b)*)"
    r"((?:\s*/\s*[\"']\.\.[\"'])*)"
)
# The repository root constant climbed.
_ROOT_CLIMB = re.compile(r"\b(?:REPO|REPO_ROOT|ROOT)\b(?:\.parent\b|\.parents\[|\s*/\s*[\"']\.\.[\"'])")
# A shell script's own folder climbed: $(dirname "$0")/../.. or ${BASH_SOURCE[0]}.
_SH_CLIMB = re.compile(r"dirname\s+\"?\$(?:0|\{0\}|\{BASH_SOURCE(?:\[0\])?\})\"?\)\"?((?:/\.\.)+)")
# A path handed to a command-line option on purpose (usage examples of the benchmarks).
_OPTION_ARG = re.compile(r"--[\w-]+(?:\s+|=)\S*$")


def violations(rel: PurePosixPath, text: str) -> list[tuple[int, str, str]]:
    """(line number, why, line) for every reference in ``text`` (the file at ``rel`` in the repo) that leaves it."""
    depth = len(rel.parts)  # climbing more than this many levels from the file leaves the repository
    found: list[tuple[int, str, str]] = []
    for no, line in enumerate(text.splitlines(), 1):
        reasons: list[str] = []
        for rx, why in (
            (_ABSOLUTE, "absolute path to a work/home folder"),
            (_SHARED, "the eval pack beside the repo"),
        ):
            for m in rx.finditer(line):
                if not _OPTION_ARG.search(line[: m.start()]):
                    reasons.append(why)
                    break
        for m in _FILE_CLIMB.finditer(line):
            before, n, after, dots = m.groups()
            up = before.count(".parent") + (int(n) + 1 if n is not None else 0) + after.count(".parent")
            up += dots.count("..")
            if (before or n is not None or after or dots) and up > depth:
                reasons.append(f"__file__ climbed {up} levels from a file {depth} deep")
        if _ROOT_CLIMB.search(line):
            reasons.append("the repository root climbed")
        for m in _SH_CLIMB.finditer(line):
            if 1 + m.group(1).count("..") > depth:
                reasons.append("the script's folder climbed past the repository root")
        found.extend((no, why, line.strip()) for why in reasons)
    return found


def _files() -> list[Path]:
    out: list[Path] = []
    for name in SCANNED:
        top = REPO / name
        if top.is_file():
            out.append(top)
            continue
        for path in sorted(top.rglob("*")):
            if path.is_file() and not SKIP_DIRS.intersection(path.relative_to(REPO).parts):
                out.append(path)
    return out


def _text(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def test_the_detector_flags_paths_that_leave_the_repository() -> None:
    # Built from fragments so that this file does not flag itself.
    f, r, up, sh, wk = "__fi" + "le__", "REP" + "O", "..", "shared", "/wo" + "rk/"
    bad = {
        "tests/unit/query/conftest.py": [
            f'EVAL = Path({f}).resolve().parents[4] / "{sh}" / "eval" / "relational"',
            f'EVAL = Path({f}).resolve().parents[3] / "{up}" / "{sh}" / "eval"',
            f'EVAL = Path({f}).resolve().parents[3] / "{up}" / "data"',
            f'CHINOOK = Path("{wk}{sh}/eval/relational/chinook")',
            f'EVAL = Path("{up}/{sh}/eval")',
            f'EVAL = Path("{sh}/eval")',
            f"ROOT = Path({f}).resolve().parents[4]",
        ],
        "tests/integration/test_pipeline.py": [f'EVAL = Path({f}).resolve().parents[2].parent / "data"'],
        "bench/qa.py": [
            f'EVAL = Path({f}).parent.parent.parent / "data"',
            f'EVAL = {r}.parent / "eval"',
            'DATA = Path("/ho' + 'me/alice/data")',
        ],
        "scripts/test": [f'cd "$(dirname "$0")/{up}/{up}"'],
    }
    for rel, lines in bad.items():
        for line in lines:
            assert violations(PurePosixPath(rel), line), f"not flagged in {rel}: {line}"
    good = {
        "tests/paths.py": [f"REPO = Path({f}).resolve().parents[1]"],
        "tests/unit/query/conftest.py": [
            f"sys.path.insert(0, str(Path({f}).resolve().parents[3]))",
            f'SCHEMA = Path({f}).resolve().parents[2] / "{up}" / "contract"',
            "the shared graph is not polluted; see https://example.org/work/x and ~/.cache/esc",
            f"`questions.jsonl` has the format of `{sh}/eval/relational/*/paraphrases.jsonl`",
        ],
        "bench/qa.py": [
            f"    .venv/bin/python bench/qa.py --eval {up}/{sh}/eval    # packs from another eval root",
            f"HERE = Path({f}).resolve().parent",
        ],
        "scripts/test": [f'cd "$(dirname "$0")/{up}"'],
    }
    for rel, lines in good.items():
        for line in lines:
            assert not violations(PurePosixPath(rel), line), f"flagged in {rel}: {line}"


def test_no_test_script_or_benchmark_reads_outside_the_repository() -> None:
    files = _files()
    assert any(p.name == "test_self_contained.py" for p in files)  # the scan covers tests/ (and this file)
    hits = []
    for path in files:
        text = _text(path)
        if text is None:
            continue
        rel = PurePosixPath(path.relative_to(REPO).as_posix())
        hits.extend(f"{rel}:{no}: {why}: {line}" for no, why, line in violations(rel, text))
    assert not hits, "paths leaving the repository (vendor the data under tests/data):\n" + "\n".join(hits)


@pytest.mark.parametrize("db", PACKS)
def test_the_relational_packs_are_vendored(db: str) -> None:
    root = EVAL / "relational" / db
    for name in ("truth.json", "questions.jsonl", "paraphrases.jsonl", "LICENSE"):
        assert (root / name).is_file(), f"missing {root / name}"
    truth = json.loads((root / "truth.json").read_text("utf-8"))
    files = {s["file"] for s in truth["sources"].values()}
    assert files == {p.name for p in (root / "drop").iterdir()}


def test_the_tatqa_subset_and_the_readme_are_vendored() -> None:
    tatqa = EVAL / "tatqa"
    contexts = [json.loads(line) for line in (tatqa / "contexts.jsonl").read_text("utf-8").splitlines()]
    for ctx in contexts:
        assert (tatqa / ctx["table"]).is_file() and (tatqa / ctx["doc"]).is_file(), ctx["uid"]
    assert (tatqa / "LICENSE").is_file()
    readme = (EVAL / "README.md").read_text("utf-8")
    for needle in ("Chinook", "Sakila", "Northwind", "TAT-QA", "MIT", "BSD-2-Clause", "CC BY 4.0"):
        assert needle in readme
