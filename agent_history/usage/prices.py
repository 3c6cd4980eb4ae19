"""List prices as rows of ``ah.model_pricing``: the genai-prices package's data (pydantic's
maintained price library, https://github.com/pydantic/genai-prices) plus our own rows for models it
lacks. Pure: values in, values out; `agent_history.db.prices` writes them.

Facts of genai-prices 0.2 this relies on (``genai_prices/types.py``, ``decompose.py``):

- ``data.providers``: each provider has ``models``; a model has ``match`` logic (see
  `usage.model_names`) and ``prices``: one ``ModelPrice``, or a list of ``ConditionalPrice`` tried
  last to first — the last whose constraint holds wins, and when none holds, the first. A
  ``StartDateConstraint`` holds from its date on (the call's UTC date), so a list of dated prices
  is a price history: one row per price, ``effective_from`` its start date (``None`` — stored as
  ``-infinity`` — for a price with no constraint: it holds from the beginning). A
  ``TimeOfDateConstraint`` (DeepSeek's off-peak hours) is not modelled: that price is left out
  and the standard price applies at every hour (docs/usage.md).
- Price keys are USD per million tokens. ``input_mtok`` prices all input, cache reads and writes
  included; ``cache_read_mtok``, ``cache_write_mtok``, ``cache_write_5m_mtok`` /
  ``cache_write_1h_mtok`` the cache buckets; ``output_mtok`` all output (reasoning included). The
  library charges each part of the usage at its most specific priced key: a bucket with no price
  of its own is charged at its nearest priced ancestor (a cache read with no cache-read price at
  the input rate; a 1-hour write with no 1-hour price at the cache-write rate, else the input
  rate). A row carries the rate each of our disjoint buckets is charged at (`BUCKET_KEYS`), so
  that rule is data.
- ``TieredPrices`` (``base`` + ``tiers``): once a call's input tokens (uncached + cache read +
  cache writes) exceed a tier's ``start``, that tier's rate prices *all* the tokens of that key
  (the cliff rule of Anthropic's long context and Gemini's >200K tier). A row holds one tier
  (``long_context_threshold`` + ``long_*``; untiered keys keep their base rate there). A model
  priced with more than one tier, or with tiers starting at different thresholds, gets no row
  (`UNMODELLED_TIERS`): its calls stay unpriced and are named, never priced wrong.
- Other price keys (web searches, audio, images, pages, per request) are not modelled: the
  catalogue does not record those quantities. ``price_variants`` (batch, priority, flex) apply
  only with a request context: list prices are the standard tier.

Our own tiers (`OWN_TIERS`) add a long-context tier the library lacks to its row of a model (with
the page read); our own rows (`OWN_PRICES`) are only for models the library lacks, each with the page its price was
read on; a name the library resolves never reaches them, so a row retires itself when the
library adds its model. The shared corpus, the samples and the field cases need none (every
public model they name is in genai-prices 0.2.3): the tuple is empty.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from datetime import date
from decimal import Decimal
from pathlib import Path

LIBRARY = "genai-prices"
"""The price library's distribution name (pinned in pyproject.toml)."""

BUCKET_KEYS: dict[str, tuple[str, ...]] = {
    "input": ("input_mtok",),
    "output": ("output_mtok",),
    "cache_read": ("cache_read_mtok", "input_mtok"),
    "cache_write_5m": ("cache_write_5m_mtok", "cache_write_mtok", "input_mtok"),
    "cache_write_1h": ("cache_write_1h_mtok", "cache_write_mtok", "input_mtok"),
}
"""Each of our token buckets → the library's price keys that may price it, most specific first
(the first one the model prices is its rate: genai_prices.decompose's leaf rule)."""

UNMODELLED_TIERS = "genai-prices prices it with more than one context tier (not modelled here)"
NO_TOKEN_PRICE = "genai-prices has no per-token input and output price for it"


@dataclass(frozen=True, slots=True)
class PriceRow:
    """One row of ``ah.model_pricing``: USD per million tokens per bucket (None = no price for the
    bucket), in effect from `effective_from` (None = from the beginning) until the model's next
    row. `long_context_threshold` (input tokens) and the ``long_*`` rates: the tier pricing a
    whole call whose input exceeds the threshold (None = no tier)."""

    price_key: str
    effective_from: date | None
    provider: str
    model_id: str
    model_name: str | None
    origin: str
    """``library`` (genai-prices) or ``ours`` (`OWN_PRICES`)."""
    source: str
    """``genai-prices <version>`` or the page our row's price was read on."""
    input_per_mtok: Decimal
    output_per_mtok: Decimal
    cache_read_per_mtok: Decimal | None
    cache_write_5m_per_mtok: Decimal | None
    cache_write_1h_per_mtok: Decimal | None
    long_context_threshold: int | None = None
    long_input_per_mtok: Decimal | None = None
    long_output_per_mtok: Decimal | None = None
    long_cache_read_per_mtok: Decimal | None = None
    long_cache_write_5m_per_mtok: Decimal | None = None
    long_cache_write_1h_per_mtok: Decimal | None = None
    long_context_source: str | None = None

    def as_dict(self) -> dict:
        """JSON-ready form: rates as floats, the date as ISO text (None = from the beginning)."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = float(v) if isinstance(v, Decimal) else v.isoformat() if isinstance(v, date) else v
        return out


COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(PriceRow))
"""`PriceRow`'s fields = the ``ah.model_pricing`` columns, in this order."""


@dataclass(frozen=True, slots=True)
class OwnPrice:
    """A price row of ours for a model the library lacks: `names` is a regular expression matched
    in full against the lower-cased model name; rates in USD per million tokens; `source` is the
    provider's page it was read on, with the day."""

    provider: str
    model_id: str
    names: str
    effective_from: date | None
    input_per_mtok: Decimal
    output_per_mtok: Decimal
    cache_read_per_mtok: Decimal | None
    cache_write_5m_per_mtok: Decimal | None
    cache_write_1h_per_mtok: Decimal | None
    source: str

    @property
    def price_key(self) -> str:
        """``<provider>/<model id>`` (no library key collides: the library lacks the model)."""
        return f"{self.provider}/{self.model_id}"

    def row(self) -> PriceRow:
        """The ``ah.model_pricing`` row."""
        return PriceRow(
            self.price_key,
            self.effective_from,
            self.provider,
            self.model_id,
            None,
            "ours",
            self.source,
            self.input_per_mtok,
            self.output_per_mtok,
            self.cache_read_per_mtok,
            self.cache_write_5m_per_mtok,
            self.cache_write_1h_per_mtok,
        )


OWN_PRICES: tuple[OwnPrice, ...] = ()
"""Our own rows (see the module docstring: none needed with genai-prices 0.2.3)."""


@dataclass(frozen=True, slots=True)
class OwnTier:
    """A long-context tier the library lacks for a model it prices: from `effective_from` on, a
    copy of the library's row carries this tier (rates in USD per million tokens for the whole
    call once its input exceeds `threshold` tokens). Applied only while the library's row has no
    tier of its own, so it retires itself when the library adds one."""

    price_key: str
    effective_from: date
    threshold: int
    input_per_mtok: Decimal
    output_per_mtok: Decimal
    cache_read_per_mtok: Decimal
    cache_write_5m_per_mtok: Decimal
    cache_write_1h_per_mtok: Decimal
    source: str


OWN_TIERS: tuple[OwnTier, ...] = (
    # Anthropic's page, "Long context pricing": Claude Sonnet 4 with the 1M-token context window
    # (available from 2025-08-12, https://www.anthropic.com/news/1m-context), a request of more
    # than 200K input tokens is charged $6 input / $22.50 output for all its tokens; the caching
    # multipliers stack on that input price (read 0.1x, 5m write 1.25x, 1h write 2x).
    # genai-prices 0.2.3 has the tier for Sonnet 4.5 / 4.6 but not for Sonnet 4.
    OwnTier(
        "anthropic/claude-sonnet-4-0",
        date(2025, 8, 12),
        200_000,
        Decimal("6"),
        Decimal("22.5"),
        Decimal("0.6"),
        Decimal("7.5"),
        Decimal("12"),
        "https://docs.anthropic.com/en/docs/about-claude/pricing#long-context-pricing (retrieved 2026-12-01)",
    ),
)
"""Tiers of ours on library rows (`OwnTier`)."""


def with_own_tiers(rows: list[PriceRow], tiers: Sequence[OwnTier] = OWN_TIERS) -> list[PriceRow]:
    """`rows` plus, for each tier whose model's row in effect on its date has no tier, a copy of
    that row from the tier's date on carrying it (origin ``ours``, its source naming both)."""
    out = list(rows)
    for t in tiers:
        mine = sorted(
            (r for r in rows if r.price_key == t.price_key),
            key=lambda r: r.effective_from or date.min,
        )
        current = [r for r in mine if (r.effective_from or date.min) <= t.effective_from]
        if not current or current[-1].long_context_threshold is not None:
            continue
        base = current[-1]
        if base.effective_from == t.effective_from:
            out.remove(base)
        out.append(
            replace(
                base,
                effective_from=t.effective_from,
                origin="ours",
                source=f"{base.source} + the long-context tier of {t.source}",
                long_context_threshold=t.threshold,
                long_input_per_mtok=t.input_per_mtok,
                long_output_per_mtok=t.output_per_mtok,
                long_cache_read_per_mtok=t.cache_read_per_mtok,
                long_cache_write_5m_per_mtok=t.cache_write_5m_per_mtok,
                long_cache_write_1h_per_mtok=t.cache_write_1h_per_mtok,
                long_context_source=t.source,
            )
        )
    return out


def installed_version() -> str | None:
    """The installed genai-prices version, read from its ``.dist-info`` directory name (a few
    stat calls: this runs at every command's start-up, where ``importlib.metadata`` costs ~0.1 s),
    else from ``importlib.metadata``; None when the package is not installed."""
    spec = importlib.util.find_spec("genai_prices")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        for info in Path(location).parent.glob("genai_prices-*.dist-info"):
            return info.name.removeprefix("genai_prices-").removesuffix(".dist-info")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(LIBRARY)
    except PackageNotFoundError:
        return None


def data_key(own: Sequence[OwnPrice] = OWN_PRICES) -> str:
    """What the loaded price data depends on: the library's version, the rules of this module and
    of `usage.model_names` (their source files), and our own rows — ``ah.meta['prices']`` holds
    the key of the data in the database, and a different key reloads it. Raises RuntimeError
    when genai-prices is not installed."""
    version = installed_version()
    if version is None:
        raise RuntimeError(f"{LIBRARY} is not installed (a dependency of agent-history: reinstall it)")
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for name in ("prices.py", "model_names.py"):
        digest.update((here / name).read_bytes())
    digest.update(repr(tuple(own)).encode())
    digest.update(repr(OWN_TIERS).encode())
    return f"{LIBRARY} {version}; rules {digest.hexdigest()[:12]}"


def _tiered(value) -> bool:
    return hasattr(value, "tiers") and hasattr(value, "base")


def model_rows(price_key: str, provider: str, model, source: str) -> tuple[list[PriceRow], str | None]:
    """The rows of one genai-prices ``ModelInfo`` (its dated prices, oldest first), or no rows and
    the reason it cannot be priced here (`NO_TOKEN_PRICE`, `UNMODELLED_TIERS`)."""
    from genai_prices.types import ModelPrice, StartDateConstraint

    if isinstance(model.prices, ModelPrice):
        history: list[tuple[date | None, object]] = [(None, model.prices)]
    else:
        history = []
        for conditional in model.prices:
            constraint = conditional.constraint
            if constraint is None:
                history = [(None, conditional.prices)]  # always holds: what precedes it is unreachable
            elif isinstance(constraint, StartDateConstraint):
                history = [h for h in history if h[0] != constraint.start_date]  # the later one wins
                history.append((constraint.start_date, conditional.prices))
            # TimeOfDateConstraint: not modelled (module docstring)
    rows = []
    for start, price in history:
        rates = _rates(price)
        if isinstance(rates, str):
            return [], rates
        base, tier = rates
        long = dict.fromkeys(BUCKET_KEYS) if tier is None else tier[1]
        rows.append(
            PriceRow(
                price_key,
                start,
                provider,
                model.id,
                model.name,
                "library",
                source,
                base["input"],
                base["output"],
                base["cache_read"],
                base["cache_write_5m"],
                base["cache_write_1h"],
                None if tier is None else tier[0],
                long["input"],
                long["output"],
                long["cache_read"],
                long["cache_write_5m"],
                long["cache_write_1h"],
                None if tier is None else source,
            )
        )
    starts = [r.effective_from for r in rows if r.effective_from is not None]
    if starts != sorted(starts):
        # the library takes the last listed price in effect; rows take the latest start: the same
        # only when the list is in date order (it is in 0.2.3)
        return [], "genai-prices lists its dated prices out of order (not modelled here)"
    return rows, None


def _rates(price) -> tuple[dict[str, Decimal], tuple[int, dict[str, Decimal]] | None] | str:
    """(base rate per bucket, (threshold, tier rate per bucket) or None) of a ``ModelPrice``, or
    the reason it cannot be priced here."""
    values = {k: v for k, v in vars(price).items() if v is not None and not k.startswith("_")}
    if "input_mtok" not in values or "output_mtok" not in values:
        return NO_TOKEN_PRICE
    chosen = {bucket: next(values[k] for k in keys if k in values) for bucket, keys in BUCKET_KEYS.items()}
    tiered = {bucket: v for bucket, v in chosen.items() if _tiered(v)}
    base = {bucket: (v.base if _tiered(v) else v) for bucket, v in chosen.items()}
    if not tiered:
        return base, None
    starts = {tuple(t.start for t in v.tiers) for v in tiered.values()}
    if len(starts) != 1 or len(next(iter(starts))) != 1:
        return UNMODELLED_TIERS
    threshold = next(iter(starts))[0]
    long = {bucket: (chosen[bucket].tiers[0].price if bucket in tiered else base[bucket]) for bucket in BUCKET_KEYS}
    return base, (threshold, long)


def library_rows(
    providers: Iterable | None = None, version: str | None = None
) -> tuple[list[PriceRow], dict[str, str]]:
    """Every price row of the library's data (`providers`, default the installed package's), and
    ``{price key: reason}`` for each library model left without rows. `version` names the source
    (default: the installed version). Price keys are ``<provider id>/<model id>``."""
    if providers is None:
        from genai_prices.data import providers as installed

        providers = installed
    source = f"{LIBRARY} {version or installed_version()}"
    rows: list[PriceRow] = []
    left_out: dict[str, str] = {}
    for provider in providers:
        for model in provider.models:
            key = f"{provider.id}/{model.id}"
            got, reason = model_rows(key, provider.id, model, source)
            rows.extend(got)
            if reason is not None:
                left_out[key] = reason
    return rows, left_out


def price_rows(own: Sequence[OwnPrice] = OWN_PRICES) -> tuple[list[PriceRow], dict[str, str]]:
    """The library's rows and our own (see `library_rows`); an own row whose key the library
    also has is dropped (the library's price wins)."""
    rows, left_out = library_rows()
    rows = with_own_tiers(rows)
    keys = {r.price_key for r in rows}
    rows.extend(o.row() for o in own if o.price_key not in keys)
    return rows, left_out
