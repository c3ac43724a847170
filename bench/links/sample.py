#!/usr/bin/env python3
"""Which memories of each store are labelled, and an aid for the person labelling them.

Why: issue 12 asks for link recall and precision measured on real stores,
labelled by reading. Labelling a whole 300-memory store is days of work, so a
seeded sample of each store is labelled instead, plus every index memory
(INDEX.md, README.md, memory_index ...), where most links live.

`python sample.py list` prints the sampled files; `python sample.py aid STORE`
prints, per sampled file, the numbered lines and every *candidate* a careful
reader should judge (list-item leads, code spans, bold spans, [[..]], ](..),
mem:, and any word equal to a memory name). The aid is deliberately broad and
shares no code with src/: it must not decide anything, only point.
Standard library + PyYAML only.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
MIRROR = Path("/work/.mirror")
STORE = ".serena/memories/"
INDEX_NAMES = re.compile(r"(^|/)(index|readme|memory_index|memories_index|_index)\.md$", re.I)


def stores() -> list[dict]:
    return yaml.safe_load((HERE / "stores.yaml").read_text())["stores"]


def git_dir(repo: str) -> Path:
    return MIRROR / repo.replace("/", "+") / "repo"


def git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir(repo)}", *args], check=True, capture_output=True, text=True
    ).stdout


def memory_files(entry: dict) -> list[str]:
    out = git(entry["repo"], "ls-tree", "-r", "--name-only", entry["commit"], "--", STORE)
    return sorted(p for p in out.splitlines() if p.endswith(".md"))


def repo_files(entry: dict) -> list[str]:
    return git(entry["repo"], "ls-tree", "-r", "--name-only", entry["commit"]).splitlines()


def sampled(entry: dict) -> list[str]:
    files = memory_files(entry)
    index = [f for f in files if INDEX_NAMES.search(f)]
    rest = [f for f in files if f not in index]
    rng = random.Random(f"{entry['repo']}@{entry['commit']}")
    pick = rng.sample(rest, min(entry["sample"], len(rest)))
    return sorted(set(index) | set(pick))


def read(entry: dict, path: str) -> str:
    return git(entry["repo"], "show", f"{entry['commit']}:{path}")


CANDIDATE = re.compile(
    r"^\s*(?:[-*+]|\d+[.)])\s+(?P<lead>\S+)"  # list item lead
    r"|`(?P<code>[^`\n]+)`"
    r"|\*\*(?P<bold>[^*\n]+)\*\*"
    r"|\[\[(?P<wiki>[^\]\n]+)\]\]"
    r"|\]\((?P<href>[^)\s]+)\)"
    r"|(?P<mem>mem:[\w./-]+)"
)


def aid(entry: dict) -> str:
    names = {Path(f).stem.casefold() for f in memory_files(entry)}
    word = re.compile(r"[\w.-]+")
    out = [f"# {entry['repo']} @ {entry['commit']}", f"# memories: {len(names)}", ""]
    for path in sampled(entry):
        out.append(f"## FILE {path}")
        for n, line in enumerate(read(entry, path).split("\n"), 1):
            marks = [
                m.group(0).strip()
                for m in CANDIDATE.finditer(line)
                if m["wiki"] or m["mem"] or ".md" in m.group(0).lower() or _names_one(m, names)
            ]
            marks += [w for w in word.findall(line) if _stem(w) in names]
            flag = "  <<" + " | ".join(dict.fromkeys(marks)) if marks else ""
            out.append(f"{n:4d}: {line}{flag}")
        out.append("")
    return "\n".join(out)


def _stem(token: str) -> str:
    token = token.strip("`*_[]()<>:,;!?'\"").casefold()
    token = token.rpartition("/")[2]
    return token[:-3] if token.endswith(".md") else token


def _names_one(match: re.Match[str], names: set[str]) -> bool:
    text = next(g for g in match.groups() if g is not None)
    return _stem(text) in names


def main() -> None:
    if sys.argv[1:2] == ["list"]:
        for entry in stores():
            for path in sampled(entry):
                print(entry["repo"], path)
    elif sys.argv[1:2] == ["aid"]:
        entry = next(e for e in stores() if e["repo"] == sys.argv[2])
        print(aid(entry))
    else:
        sys.exit("usage: sample.py list | aid OWNER/NAME")


if __name__ == "__main__":
    main()
