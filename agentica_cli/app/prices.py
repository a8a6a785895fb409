"""What a session costs in money, where it can be known.

Two sources, per request: what the provider reports with the usage (OpenRouter's `usage.cost`,
in US dollars), else the user's price table, `[prices]` in config.toml, US dollars per million
tokens:

    [prices]
    "deepseek-chat" = { input = 0.28, output = 0.42 }
    "glm-4.*" = { input = 0.6, output = 2.2 }     # `*` matches any run of characters

No price is built in: prices change, and a wrong built-in figure is worse than none. A request
whose price is not known leaves the total unknown (`CostMeter.known` false): the money is shown
only when every request of the session could be priced.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Price:
    input_per_million: float
    output_per_million: float

    def of(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_million + output_tokens * self.output_per_million) / 1_000_000


class PriceError(ValueError):
    """A [prices] entry that cannot be read; the message names it."""


def parse_prices(table: Mapping[str, Any] | None) -> dict[str, Price]:
    """`[prices]` -> model pattern -> Price; raises PriceError naming a bad entry."""
    prices: dict[str, Price] = {}
    for model, entry in (table or {}).items():
        if not isinstance(entry, Mapping):
            raise PriceError(f"prices.{model}: want {{ input = USD per million tokens, output = ... }}")
        try:
            prices[str(model)] = Price(float(entry["input"]), float(entry["output"]))
        except (KeyError, TypeError, ValueError):
            raise PriceError(f"prices.{model}: needs numbers `input` and `output` (USD per million tokens)") from None
        if prices[str(model)].input_per_million < 0 or prices[str(model)].output_per_million < 0:
            raise PriceError(f"prices.{model}: a price cannot be negative")
    return prices


def price_for(model_id: str, prices: Mapping[str, Price]) -> Price | None:
    """The exact entry for `model_id`, else the longest pattern that matches it (a `provider/`
    prefix, as OpenRouter names models, may be left out of the table)."""
    names = [model_id, model_id.rsplit("/", 1)[-1]]
    for name in names:
        if name in prices:
            return prices[name]
    matching = [p for p in prices if any(fnmatch.fnmatchcase(n, p) for n in names)]
    return prices[max(matching, key=len)] if matching else None


class CostMeter:
    """The money spent so far: each request's reported cost, else its tokens at the table's price."""

    def __init__(self, prices: Mapping[str, Price] | None = None):
        self.prices = dict(prices or {})
        self.dollars = 0.0
        self.unpriced = 0  # requests whose cost could not be known
        self.requests = 0

    def add(self, model_id: str, input_tokens: int, output_tokens: int, reported: float | None = None) -> float | None:
        """Count one request; returns its cost, or None when it cannot be known."""
        cost = reported
        if cost is None:
            price = price_for(model_id, self.prices)
            cost = price.of(input_tokens, output_tokens) if price is not None else None
        self.record(cost)
        return cost

    def record(self, cost: float | None) -> None:
        """Count one request priced already (by another meter: None when it could not be)."""
        self.requests += 1
        if cost is None:
            self.unpriced += 1
        else:
            self.dollars += cost

    @property
    def known(self) -> bool:
        return self.requests > 0 and self.unpriced == 0

    @classmethod
    def from_stored(cls, prices: Mapping[str, Price], usage: Mapping[str, int]) -> CostMeter:
        """A meter going on from what a session recorded (`cost_fields` of each request)."""
        meter = cls(prices)
        meter.dollars = int(usage.get("cost_microusd", 0) or 0) / 1_000_000
        meter.unpriced = int(usage.get("unpriced_requests", 0) or 0)
        meter.requests = int(usage.get("priced_requests", 0) or 0) + meter.unpriced
        return meter


def cost_fields(cost: float | None) -> dict[str, int]:
    """One request's cost as the session's usage file keeps it (whole numbers, added up there:
    millionths of a dollar, and how many requests were priced or not)."""
    if cost is None:
        return {"unpriced_requests": 1}
    return {"cost_microusd": round(cost * 1_000_000), "priced_requests": 1}


def count_request(meter: CostMeter, model_id: str, event: Any, stored: Any | None) -> float | None:
    """One `usage` event's money into `meter` and, beside its tokens, into the stored session's
    usage file (`stored.record_usage`; None: nothing is saved). The one way a request's cost is
    counted, so every front end counts it alike and the file gets it once."""
    cost = meter.add(model_id, getattr(event, "input_tokens", 0) or 0, getattr(event, "output_tokens", 0) or 0,
                     getattr(event, "cost", None))
    if stored is not None:
        stored.record_usage(cost_fields(cost))
    return cost


def format_dollars(amount: float) -> str:
    """`$0.0123` below a dollar (cents are too coarse for one request), `$12.34` above."""
    return f"${amount:.4f}" if amount < 1 else f"${amount:,.2f}"
