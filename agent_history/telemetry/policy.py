"""The label policy: samples, the closed label sets resolved for one process, and the guard.

Pure (no I/O, no OTel, no database). A collector produces :class:`Sample` values; the
:class:`LabelGuard` admits a sample only when its family is declared, its label names are
exactly the family's, and every label value is in that label's set (see
:data:`agent_history.telemetry.families.LABEL_VALUES`) or, for a label of
:data:`~agent_history.telemetry.families.LABEL_PATTERNS`, matches its pattern. Anything else is dropped and counted
per family, so a bug that would leak a path or an id shows as a counter, never as a series.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from agent_history.telemetry.families import BY_NAME, LABEL_PATTERNS, LABEL_VALUES

_PATTERNS: dict[str, re.Pattern[str]] = {k: re.compile(v) for k, v in LABEL_PATTERNS.items()}

#: The label value for a model outside the allowlist (issue 13: "else `other`").
OTHER_MODEL = "other"
#: The ``family`` label of a dropped sample whose family is not declared at all.
UNKNOWN_FAMILY = "unknown"


@dataclass(frozen=True, slots=True)
class Sample:
    """One observation: family name, value (a float; counters are cumulative) and labels."""

    family: str
    value: float
    labels: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, family: str, value: float, /, **labels: str) -> Sample:
        """A sample with labels given as keywords (sorted, so equal samples compare equal)."""
        return cls(family, float(value), tuple(sorted(labels.items())))


def like_to_regex(pattern: str) -> re.Pattern[str]:
    """A SQL LIKE pattern (``%`` any run, ``_`` one character, no escapes) as a full-match regex."""
    parts = (".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    return re.compile("".join(parts), re.DOTALL)


def pattern_stem(pattern: str) -> str:
    """The label value of a price pattern: the pattern without its LIKE wildcards
    (``claude-opus-4-5%`` → ``claude-opus-4-5``)."""
    return pattern.replace("%", "").replace("_", "")


@dataclass(frozen=True)
class ModelLabels:
    """The ``model`` label: an extra configured name as itself, else the label `aliases` gives
    the lower-cased name (a priced name seen → its price row's model id:
    `db.prices.priced_model_ids`), else the stem of the longest matching LIKE pattern of
    `price_patterns`, else :data:`OTHER_MODEL`."""

    price_patterns: tuple[str, ...]
    extra: tuple[str, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=dict, hash=False)
    _compiled: tuple[tuple[str, re.Pattern[str]], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ordered = sorted(set(self.price_patterns), key=lambda p: (-len(p), p))
        object.__setattr__(self, "_compiled", tuple((p, like_to_regex(p)) for p in ordered))

    @property
    def values(self) -> tuple[str, ...]:
        """Every value the label can take (the declared set of this process)."""
        stems = {pattern_stem(p) for p in self.price_patterns}
        return tuple(sorted(stems | set(self.aliases.values()) | set(self.extra) | {OTHER_MODEL}))

    def label(self, model: str | None) -> str:
        """The label value for a model name (None or unknown → ``other``)."""
        if not model:
            return OTHER_MODEL
        name = model.lower()
        if name in self.extra:
            return name
        if name in self.aliases:
            return self.aliases[name]
        for pattern, regex in self._compiled:
            if regex.fullmatch(name):
                return pattern_stem(pattern)
        return OTHER_MODEL


def resolve_label_values(namespaces: Iterable[str], models: ModelLabels) -> dict[str, frozenset[str]]:
    """The closed label sets of this process: :data:`LABEL_VALUES` with the run-time sets filled
    in (``namespace``: the configured namespaces; ``model``: see :class:`ModelLabels`;
    ``family``: the declared family names plus ``unknown``, for a sample of an undeclared family)."""
    out: dict[str, frozenset[str]] = {}
    for label, values in LABEL_VALUES.items():
        if values is not None:
            out[label] = frozenset(values)
    out["namespace"] = frozenset(namespaces)
    out["model"] = frozenset(models.values)
    out["family"] = frozenset(BY_NAME) | {UNKNOWN_FAMILY}
    return out


class LabelGuard:
    """Admits samples whose labels fit their family's declaration; drops and counts the rest.

    Thread-safe. ``dropped`` maps a family name (``"unknown"`` for an undeclared family) to
    the number of samples dropped since the process started.
    """

    def __init__(self, label_values: Mapping[str, frozenset[str]]):
        self._values = label_values
        self._lock = threading.Lock()
        self._dropped: Counter[str] = Counter()

    def ok(self, sample: Sample) -> bool:
        """True when `sample` may leave the process."""
        family = BY_NAME.get(sample.family)
        if family is None:
            return False
        names = tuple(k for k, _ in sample.labels)
        if sorted(names) != sorted(family.labels):
            return False
        return all(
            _PATTERNS[k].fullmatch(v) is not None if k in _PATTERNS else v in self._values.get(k, ())
            for k, v in sample.labels
        )

    def admit(self, samples: Iterable[Sample]) -> list[Sample]:
        """The admissible samples of `samples`, in order; the others are counted as dropped."""
        kept, dropped = [], Counter()
        for s in samples:
            if self.ok(s):
                kept.append(s)
            else:
                dropped[s.family if s.family in BY_NAME else UNKNOWN_FAMILY] += 1
        if dropped:
            with self._lock:
                self._dropped.update(dropped)
        return kept

    @property
    def dropped(self) -> dict[str, int]:
        """Samples dropped so far, per family (cumulative)."""
        with self._lock:
            return dict(self._dropped)
