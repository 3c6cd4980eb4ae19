"""File touches read from shell commands and patches (→ FileTouchRow). Pure; never raises.

`touches_from_shell(command)` → ``[(op, path)]`` with op in read | create | edit | delete | move.
The command is tokenised as `shlex` does (POSIX rules; one regular-expression pass gives its exact
tokens, `shlex` itself runs only where it would raise; on unbalanced quotes a plain regex split
is the fallback) and cut into simple commands at ``; && || | & ( )`` and newlines. Heredoc bodies are
set aside first, so their lines are never read as commands. Rules (declared as data below):

- Readers (`READERS`): ``cat head tail less more bat nl wc tac sort uniq cut diff cmp xxd od
  hexdump strings md5sum sha1sum sha256sum shasum stat file source .`` → read every path
  argument; ``sed awk jq`` → read the files after their script/filter argument. Options that
  take a value (``head -n 5``, ``cut -d ,``) are skipped with their value. Searches and listings
  (``grep rg find ls tree``) are not file touches.
- ``sed -i`` (GNU ``-i``, ``-i.bak``, ``--in-place``; BSD ``-i ''``) → edit the files.
- ``touch f`` → create; ``tee f`` → create, ``tee -a f`` → edit.
- Redirects: ``> f``, ``>| f``, ``&> f``, ``2> f`` → create; ``>> f``, ``&>> f``, ``<> f`` →
  edit; ``< f`` → read. ``/dev/null``, ``/dev/std*``, ``/dev/fd/*``, ``/dev/tty`` and fd
  duplications (``2>&1``) are not files.
- ``rm [-rf] f…``, ``unlink f``, ``git rm f…`` → delete (``git rm --cached`` touches no file).
- ``mv a b`` / ``git mv a b`` → ``("move", a)`` then ``("create", b)``: the source path is gone,
  a file appears at the destination. ``cp a b`` → ``("read", a)``, ``("create", b)``. When the
  destination is known to be a directory (several sources, a trailing ``/``, ``.``/``..``, or
  ``-t DIR``) the created path is ``DIR/basename(src)``; a single source with a bare
  destination is taken as a file path (we cannot tell a directory from its name).
- ``mkdir``/``rmdir`` are ignored (directories are not files).
- ``cd D`` (and ``pushd D``, ``git -C D``) with a literal ``D``: later relative paths are joined
  to ``D`` (``posixpath.normpath``), so ``cd pkg && cat a.ts`` reads ``pkg/a.ts``. After ``cd``
  with no/unknown target (``cd``, ``cd -``, ``cd $X``) relative paths are reported as given.
  Paths are otherwise reported as written: not resolved against the session cwd (the parser's
  job), ``~`` not expanded, globs kept (``rm /tmp/*`` deletes ``/tmp/*``).
- Arguments that need the shell to evaluate them (``$VAR``, ``$(…)``, backticks) are skipped.
- Wrappers are looked through: ``sudo env time nohup nice timeout command exec builtin xargs``,
  leading ``NAME=value`` assignments, ``bash/sh/zsh -c 'script'`` (the script is parsed too).
- ``apply_patch``/``applypatch``/``git apply``/``patch`` fed a heredoc, or a command holding a
  ``*** Begin Patch`` envelope (Codex ``["apply_patch", patch]``): the patch is parsed with
  `touches_from_patch` and its relative paths joined to the current ``cd``.
For an argv list (Codex legacy ``command: [...]``) pass ``shlex.join(argv)``.

`touches_from_patch(patch)` reads:
- Codex apply_patch envelopes (between ``*** Begin Patch`` and ``*** End Patch``, markers at a
  line start): ``*** Add File: p`` → create, ``*** Update File: p`` → edit, ``*** Delete File:
  p`` → delete, ``*** Update File: p`` + ``*** Move to: q`` → ``("move", p)``, ``("create", q)``
  (same convention as ``mv``).
- Unified diffs (git or plain): ``--- a/x`` / ``+++ b/x`` → edit x; ``--- /dev/null`` → create;
  ``+++ /dev/null`` → delete; different old/new names → move + create. Git headers without
  hunks count too (``new file mode``, ``deleted file mode``, ``rename from/to``). ``a/``/``b/``
  prefixes are dropped when both sides carry them; hunk bodies are skipped by their line counts,
  so a removed line ``-- comment`` (``--- comment``) is not a header.

Both return pairs in first-seen order without duplicates.

The package, one module per job: `tokenise` (POSIX words and simple commands), `heredocs`
(bodies cut out before tokenising), `rules` (the readers and wrappers, as data), `commands` (the
walk that classifies each simple command: `touches_from_shell`), `patches`
(`touches_from_patch`) and `touch` (the pair shape and its merge key, `touch_uid`).
"""

from __future__ import annotations

from agent_history.parsers.common.shell.commands import touches_from_shell
from agent_history.parsers.common.shell.patches import touches_from_patch
from agent_history.parsers.common.shell.touch import Touch, touch_uid

__all__ = ["Touch", "touch_uid", "touches_from_patch", "touches_from_shell"]
