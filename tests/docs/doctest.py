#!/usr/bin/env python3
"""The docs' examples, run: every `scaledesk` and `scaledesk-train` command line in README.md and
docs/*.md is either run or checked, as a Rust doctest keeps a crate's examples true.

What it does with each kind of text (docs/design.md, "The doc test"):
- A ```sh block that calls scaledesk or scaledesk-train is run, line by line, in one bash per
  document (so `export` and `cd` carry on to the next block), in a fresh folder that links the
  checkout's configs/ and tests/ and the build as build/, with HOME and every /tmp/ path inside it.
  Each scaledesk line must exit 0. Its other lines may only set things up (export, cd, mkdir,
  NAME=value); a ```sh block without scaledesk (packaging/demo.sh, tests/run-all.sh) is not an
  example.
- A trailing `# prints "TEXT"` (on a command or on the comment line after it): the output of that
  command contains TEXT (`…` in TEXT stands for anything). A comment line `# → PATH` (shell braces
  allowed): those files exist after the command above it.
- A block after `<!-- doctest: output -->` is the output of the ```sh block before it: each of its
  lines matches a line of that output, in order, where digits (times, job ids, timestamps) and runs
  of spaces may differ.
- `<!-- doctest: skip REASON -->` before a block: its lines need what the test machine lacks (a
  cluster, a second shell, minutes of measurement); they are counted as skipped, with the reason.
- A synopsis (a plain ``` block of command lines, or an inline `scaledesk …` span): its command
  must exist and every --option it names must be in that command's --help.

An unmarked line that cannot run (a placeholder such as <pid> or …) fails: mark its block.
Prints what it ran, checked and skipped, and exits 1 on any failure.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

BINARIES = ("scaledesk", "scaledesk-train")
# Subcommands whose parser falls through to the program's options (CLI11 fallthrough(); main.cpp).
FALLTHROUGH = {("scaledesk-train", "bench-comm"), ("scaledesk-train", "check-comm"), ("scaledesk-train", "bench-step")}
SETUP_WORDS = ("export", "cd", "mkdir")
MARK = re.compile(r"<!--\s*doctest:\s*(skip|output)\b\s*(.*?)\s*-->")


@dataclass
class Line:
    doc: str
    lineno: int
    text: str  # the logical line, continuations joined

    def where(self):
        return f"{self.doc}:{self.lineno}"


@dataclass
class Block:
    doc: str
    lineno: int
    info: str
    lines: list  # of Line
    mark: tuple = None  # ("skip", reason) | ("output", "")
    output_of: "Block" = None


@dataclass
class Tally:
    ran: int = 0
    synopses: int = 0
    skipped: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)

    def fail(self, where, what):
        self.failures.append(f"{where}: {what}")


def logical_lines(doc, first_lineno, raw):
    out, buf, start = [], "", None
    for i, text in enumerate(raw):
        if start is None:
            start = first_lineno + i
        if text.rstrip().endswith("\\"):
            buf += text.rstrip()[:-1] + " "
            continue
        out.append(Line(doc, start, buf + text))
        buf, start = "", None
    return out


def parse(path, doc):
    """The fenced blocks of a markdown file, with their marks, and its inline `scaledesk …` spans."""
    lines = path.read_text().splitlines()
    blocks, spans, i, mark, previous = [], [], 0, None, None
    while i < len(lines):
        m = MARK.search(lines[i])
        if m:
            mark = (m.group(1), m.group(2))
        elif lines[i].startswith("```"):
            info, body, start = lines[i][3:].strip(), [], i + 1
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            block = Block(doc, start, info, logical_lines(doc, start + 1, body), mark)
            if mark and mark[0] == "output":
                block.output_of = previous
            blocks.append(block)
            if info == "sh":
                previous = block
            mark = None
        else:
            for span in re.findall(r"`((?:scaledesk|scaledesk-train) [^`]*)`", lines[i]):
                spans.append(Line(doc, i + 1, span))
            if lines[i].strip():
                mark = mark if MARK.search(lines[i]) else None
        i += 1
    return blocks, spans


def command_word(text):
    """The program a shell line runs (after NAME=value assignments), or ''."""
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        words = text.split()
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words.pop(0)
    return words[0] if words else ""


def is_example(text):
    word = command_word(text)
    return os.path.basename(word) in BINARIES or word.startswith("$SD")


def placeholder(text):
    code = text.split(" #", 1)[0]
    m = re.search(r"<[a-z][a-z-]*>|…", code)
    return m.group(0) if m else None


# ---- synopses ------------------------------------------------------------------------------------

class Helps:
    def __init__(self, bins, env):
        self.bins, self.env, self.cache = bins, env, {}

    def text(self, argv):
        key = tuple(argv)
        if key not in self.cache:
            r = subprocess.run([self.bins[argv[0]], *argv[1:], "--help"], env=self.env, capture_output=True, text=True, timeout=60)
            self.cache[key] = (r.returncode, r.stdout + r.stderr)
        return self.cache[key]


def check_synopsis(line, helps, tally):
    words = line.text.replace("[", " ").replace("]", " ").replace("|", " ").split()
    program, command = words[0], [words[0]]
    # Subcommands: lowercase words right after the program (or after a subcommand) that its help lists.
    for w in words[1:]:
        if not re.fullmatch(r"[a-z][a-z-]*", w):
            break
        rc, text = helps.text(command)
        if re.search(rf"^\s+{re.escape(w)}\s", text, re.M):
            command.append(w)
        else:
            break
    rc, text = helps.text(command)
    if rc != 0:
        tally.fail(line.where(), f"`{' '.join(command)} --help` exits {rc}: {text.strip()[:200]}")
        return
    if tuple(command) in FALLTHROUGH:
        text += helps.text(command[:1])[1]
    for option in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9_-]*)", line.text))):
        if option in ("--help",):
            continue
        if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text):
            tally.fail(line.where(), f"`{' '.join(command)}` has no option {option} (its --help does not list it): {line.text.strip()}")
    tally.synopses += 1


# ---- running -------------------------------------------------------------------------------------

def brace_expand(word):
    m = re.search(r"\{([^{}]*)\}", word)
    if not m:
        return [word]
    return [x for alt in m.group(1).split(",") for x in brace_expand(word[: m.start()] + alt + word[m.end():])]


def prints_checks(text):
    return re.findall(r'#.*?\bprints "([^"]*)"', text)


def expected_regex(doc_line):
    parts = re.split(r"(\d[\d.:\-+eTZ]*|\s+)", doc_line.strip())
    out = ""
    for p in parts:
        if not p:
            continue
        if p.isspace():
            out += r"\s+"
        elif p[0].isdigit():
            out += r"[\d.:\-+eTZ]+"
        else:
            out += re.escape(p)
    return re.compile(out)


def run_document(doc, blocks, work, env, tmp, tally, timeout):
    """Runs the document's example blocks in one bash; checks exits, prints, files and outputs."""
    script, examples, outputs = ["set -o pipefail", "cd " + shlex.quote(str(work))], [], {}
    n = 0
    for b in blocks:
        if b.info != "sh" or not any(is_example(l.text) for l in b.lines):
            continue
        if b.mark and b.mark[0] == "skip":
            count = sum(bool(re.search(r"(^|[\s/])(scaledesk|scaledesk-train|\$SD)\s", l.text)) for l in b.lines)
            tally.skipped[b.mark[1]] = tally.skipped.get(b.mark[1], 0) + count
            continue
        for l in b.lines:
            code = l.text.strip()
            if not code:
                continue
            if code.startswith("#"):
                m = re.match(r"#\s*→\s*(\S+)", code)
                if m and examples:
                    examples[-1]["files"] += brace_expand(m.group(1))
                if prints_checks(code) and examples:
                    examples[-1]["prints"] += prints_checks(code)
                continue
            p = placeholder(code)
            if p:
                tally.fail(l.where(), f"{p} cannot run: put the line in a block marked <!-- doctest: skip REASON -->")
                continue
            example = is_example(code)
            if not example and command_word(code) not in SETUP_WORDS and not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$", code):
                tally.fail(l.where(), f"a line of an example block that is neither scaledesk nor set-up: {code}")
                continue
            code = code.replace("/tmp/", str(tmp) + "/")
            n += 1
            examples.append({"n": n, "line": l, "example": example, "prints": prints_checks(code), "files": [], "block": b})
            script += [f"printf '\\n@@doctest-begin {n}\\n'", code, f"__rc=$?; printf '\\n@@doctest-end {n} %d %s\\n' $__rc \"$PWD\""]
    if not examples:
        return
    # stderr joins stdout, so that each line's messages land between its markers.
    r = subprocess.run(["bash", "-c", "\n".join(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    out = r.stdout
    for m in re.finditer(r"@@doctest-begin (\d+)\n(.*?)\n@@doctest-end \1 (\d+) ([^\n]*)", out, re.S):
        outputs[int(m.group(1))] = (m.group(2), int(m.group(3)), m.group(4))
    per_block = {}
    for e in examples:
        l = e["line"]
        if e["n"] not in outputs:
            tally.fail(l.where(), f"did not run to its end (bash output: {out[-2000:]})")
            continue
        text, rc, cwd = outputs[e["n"]]
        per_block.setdefault(id(e["block"]), []).append(text)
        if not e["example"]:
            if rc != 0:
                tally.fail(l.where(), f"set-up line exits {rc}: {l.text.strip()}\n{text[-1500:]}")
            continue
        tally.ran += 1
        print(f"doctest: {l.where()}: exit {rc}: {l.text.strip()[:110]}", flush=True)
        if rc != 0:
            tally.fail(l.where(), f"exits {rc}: {l.text.strip()}\n{text[-3000:]}")
        for want in e["prints"]:
            pattern = ".*?".join(re.escape(p) for p in want.split("…"))
            if not re.search(pattern, text, re.S):
                tally.fail(l.where(), f'does not print "{want}":\n{text[-1500:]}')
        for f in e["files"]:
            if not (Path(cwd) / f).exists():
                tally.fail(l.where(), f"{f} does not exist after it (in {cwd})")
    for b in blocks:
        if b.mark and b.mark[0] == "output" and b.output_of is not None and id(b.output_of) in per_block:
            actual = "\n".join(per_block[id(b.output_of)]).splitlines()
            at = 0
            for k, doc_line in enumerate(x.text for x in b.lines):
                if not doc_line.strip():
                    continue
                rx = expected_regex(doc_line)
                while at < len(actual) and not rx.fullmatch(actual[at].strip()):
                    at += 1
                if at == len(actual):
                    tally.fail(f"{doc}:{b.lineno + 1 + k}", f"the shown output line is not printed (in order): {doc_line.strip()}\n"
                               f"printed:\n" + "\n".join(actual[-40:]))
                    break
                at += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True, help="the checkout (README.md, docs/, configs/, tests/)")
    ap.add_argument("--build", required=True, help="the build folder (gui/scaledesk, trainer/scaledesk-train)")
    ap.add_argument("--only", action="append", default=[], help="only these documents (README.md, docs/backend.md, …)")
    ap.add_argument("--timeout", type=int, default=1500, help="seconds per document")
    a = ap.parse_args()
    source, build = Path(a.source).resolve(), Path(a.build).resolve()
    bins = {"scaledesk": str(build / "gui/scaledesk"), "scaledesk-train": str(build / "trainer/scaledesk-train")}
    docs = [source / "README.md", *sorted((source / "docs").glob("*.md"))]
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="scaledesk-doctest-") as t:
        tmp = Path(t)
        for d in docs:
            doc = str(d.relative_to(source))
            if a.only and doc not in a.only:
                continue
            work, home = tmp / doc.replace("/", "_"), tmp / (doc.replace("/", "_") + ".home")
            work.mkdir()
            home.mkdir()
            (tmp / "tmp").mkdir(exist_ok=True)
            for name in ("configs", "tests"):
                (work / name).symlink_to(source / name)
            (work / "build").symlink_to(build)
            env = dict(os.environ, HOME=str(home), QT_QPA_PLATFORM="offscreen",
                       PATH=f"{build / 'gui'}:{build / 'trainer'}:{os.environ.get('PATH', '/usr/bin:/bin')}")
            env.pop("SCALEDESK_HOME", None)
            helps = Helps(bins, env)
            blocks, spans = parse(d, doc)
            for b in blocks:
                if b.info == "" and b.lines and b.lines[0].text.startswith(BINARIES) and not (b.mark and b.mark[0] == "skip"):
                    # A synopsis block: indented lines continue the command above them.
                    commands = []
                    for l in b.lines:
                        if l.text.startswith(BINARIES):
                            commands.append(Line(l.doc, l.lineno, l.text))
                        elif commands:
                            commands[-1].text += " " + l.text
                    for c in commands:
                        check_synopsis(c, helps, tally)
            for s in spans:
                if not s.text.startswith("scaledesk-train:"):
                    check_synopsis(s, helps, tally)
            run_document(doc, blocks, work, env, tmp / "tmp", tally, a.timeout)
    skipped = sum(tally.skipped.values())
    print(f"doctest: ran {tally.ran} command lines, checked {tally.synopses} synopses against --help, "
          f"skipped {skipped}" + (" (" + "; ".join(f"{n}: {r}" for r, n in sorted(tally.skipped.items())) + ")" if skipped else ""))
    for f in tally.failures:
        print("doctest: FAILED " + f, file=sys.stderr)
    print(f"doctest: {len(tally.failures)} failure(s)")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
