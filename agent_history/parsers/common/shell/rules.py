"""What the shell walk (`commands`) knows about commands, declared as data: the commands that
read the files named in their arguments and how they take them (`READERS`, `ReadSpec`), and the
wrappers that run another command (`WRAPPERS`). Pure."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ReadSpec:
    """How a reading command takes its arguments.

    ``value_opts``: options followed by a value to skip (``-n 5``). ``script_first``: the first
    positional argument is a script/filter, not a file (``sed``, ``awk``, ``jq``).
    ``script_opts``: options whose value is the script, so no positional script follows.
    ``output_opts``: options whose value is a file written (``sort -o out``).
    ``two_value_opts``: options followed by two values (``jq --arg name value``).
    """

    value_opts: frozenset[str] = frozenset()
    script_first: bool = False
    script_opts: frozenset[str] = frozenset()
    output_opts: frozenset[str] = frozenset()
    two_value_opts: frozenset[str] = frozenset()


def _spec(
    value: str = "", *, script_first: bool = False, script: str = "", output: str = "", two: str = ""
) -> ReadSpec:
    return ReadSpec(
        frozenset(value.split()),
        script_first,
        frozenset(script.split()),
        frozenset(output.split()),
        frozenset(two.split()),
    )


READERS: dict[str, ReadSpec] = {
    "cat": _spec(),
    "bat": _spec("-l --language -r --line-range -H --highlight-line --style --theme"),
    "head": _spec("-n -c --lines --bytes"),
    "tail": _spec("-n -c --lines --bytes -s --sleep-interval --pid"),
    "less": _spec(),
    "more": _spec(),
    "nl": _spec("-b -d -f -h -i -l -n -s -v -w"),
    "wc": _spec(),
    "tac": _spec("-s --separator"),
    "sort": _spec("-k --key -t --field-separator -T -S --buffer-size", output="-o --output"),
    "uniq": _spec("-f -s -w --skip-fields --skip-chars --check-chars"),
    "cut": _spec("-d -f -c -b --delimiter --fields --characters --bytes"),
    "diff": _spec("-U -C -x -X -I -L --label --unified --context"),
    "cmp": _spec("-i -n --ignore-initial --bytes"),
    "xxd": _spec("-c -g -l -s -o"),
    "od": _spec("-A -j -N -t -w"),
    "hexdump": _spec("-n -s -e -f"),
    "strings": _spec("-n -t -e"),
    "md5sum": _spec(),
    "sha1sum": _spec(),
    "sha256sum": _spec(),
    "shasum": _spec("-a --algorithm"),
    "stat": _spec("-c -f --format --printf"),
    "file": _spec("-m -F"),
    "source": _spec(),
    ".": _spec(),
    "sed": _spec("-l --line-length", script_first=True, script="-e --expression -f --file"),
    "awk": _spec("-F -v", script_first=True, script="-f"),
    "gawk": _spec("-F -v", script_first=True, script="-f"),
    "jq": _spec(
        "--indent --tab -L", script_first=True, script="-f --from-file", two="--arg --argjson --slurpfile --rawfile"
    ),
}
"""Commands that read the files named in their arguments (see `ReadSpec`)."""

WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset("-u -g -h -p -C -D -U -r -t".split()),
    "env": frozenset("-u -C -S --unset --chdir".split()),
    "time": frozenset("-f -o".split()),
    "nohup": frozenset(),
    "nice": frozenset("-n --adjustment".split()),
    "timeout": frozenset("-s -k --signal --kill-after".split()),
    "command": frozenset(),
    "exec": frozenset("-a".split()),
    "builtin": frozenset(),
    "xargs": frozenset("-n -I -i -P -L -l -d -E -e -s -a --max-args --max-procs --delimiter".split()),
    "stdbuf": frozenset("-i -o -e".split()),
}
"""Commands that run another command: skip them (and their value options) and look at the rest."""
