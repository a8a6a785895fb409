"""YFinanceTool: quotes, price history, fundamentals and news for a ticker, from Yahoo Finance.

Talks to Yahoo's JSON endpoints directly (chart, quoteSummary, search) through the shared HTTP
layer rather than through the `yfinance` package, so it needs no extra, honours `base_url`
(a proxy or a test server) and answers in compact text. quoteSummary wants a session cookie and
a "crumb"; they are fetched once and reused.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Literal

from agentica_cli.toolkits._http import DEFAULT_TIMEOUT_S, HttpClient, ToolkitError, ToolkitHttpError
from agentica_cli.toolkits._text import clamp, numbered_results, squash
from agentica_cli.tools.base import Tool

_TICKER = re.compile(r"^[A-Za-z0-9^][A-Za-z0-9.\-=^]{0,19}$")
MAX_ROWS = 60
SUMMARY_MODULES = "price,summaryDetail,defaultKeyStatistics,financialData,assetProfile"
FUNDAMENTALS = (  # (module, field, label)
    ("price", "longName", "name"), ("assetProfile", "sector", "sector"), ("assetProfile", "industry", "industry"),
    ("price", "marketCap", "market cap"), ("summaryDetail", "trailingPE", "P/E"),
    ("summaryDetail", "forwardPE", "forward P/E"), ("defaultKeyStatistics", "trailingEps", "EPS"),
    ("defaultKeyStatistics", "priceToBook", "P/B"), ("summaryDetail", "dividendYield", "dividend yield"),
    ("summaryDetail", "beta", "beta"), ("financialData", "totalRevenue", "revenue"),
    ("financialData", "revenueGrowth", "revenue growth"), ("financialData", "profitMargins", "profit margin"),
    ("financialData", "totalDebt", "total debt"), ("financialData", "freeCashflow", "free cash flow"),
    ("financialData", "recommendationKey", "analyst view"), ("financialData", "targetMeanPrice", "target price"),
    ("summaryDetail", "fiftyTwoWeekLow", "52w low"), ("summaryDetail", "fiftyTwoWeekHigh", "52w high"),
)


def _ticker(symbol: str) -> str:
    value = symbol.strip().upper()
    if not _TICKER.match(value):
        raise ValueError(f"{symbol!r} is not a ticker symbol (e.g. AAPL, 600519.SS, ^GSPC).")
    return value


def _number(value: Any) -> str:
    if isinstance(value, dict):  # quoteSummary's {"raw": 1.2, "fmt": "1.20"}
        return str(value.get("fmt") or value.get("longFmt") or value.get("raw") or "")
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.4g}"  # prices: cents; ratios: 4 digits
    return "" if value is None else str(value)


class YFinanceTool(Tool):
    """Stock quotes, history, fundamentals and news (Yahoo Finance)."""

    def __init__(
        self,
        *,
        base_url: str = "https://query1.finance.yahoo.com",
        cookie_url: str = "https://fc.yahoo.com",
        max_news: int = 5,
        timeout: float = DEFAULT_TIMEOUT_S,
    ):
        super().__init__(name="yfinance")
        self.http = HttpClient(service="Yahoo Finance", base_url=base_url, timeout=timeout)
        self.cookie_url = cookie_url
        self.max_news = clamp(max_news, 5, 20)
        self._session: tuple[dict[str, str], str] | None = None
        self.register(self.stock_quote, is_read_only=True, concurrency_safe=True)
        self.register(self.stock_history, is_read_only=True, concurrency_safe=True)
        self.register(self.stock_fundamentals, is_read_only=True, concurrency_safe=True)
        self.register(self.stock_news, is_read_only=True, concurrency_safe=True)

    async def _chart(self, symbol: str, period: str, interval: str) -> dict[str, Any]:
        data = await self.http.get_json(f"/v8/finance/chart/{symbol}", params={"range": period, "interval": interval},
                                        ok_statuses=(404,))
        chart = data.get("chart") if isinstance(data, dict) else None
        if not isinstance(chart, dict):
            raise ToolkitError("Yahoo Finance sent an unexpected response (no 'chart').")
        if chart.get("error"):
            raise LookupError(f"no data for {symbol}: {squash((chart['error'] or {}).get('description'), 200)}")
        results = chart.get("result") or []
        if not results:
            raise LookupError(f"no data for {symbol}.")
        return results[0]

    async def stock_quote(self, symbol: str) -> str:
        """Latest price of a ticker, with the day's range, volume and 52-week range.

        Args:
            symbol: Ticker, e.g. AAPL, 0700.HK, 600519.SS.
        """
        symbol = _ticker(symbol)
        meta = (await self._chart(symbol, "5d", "1d")).get("meta") or {}
        price, previous = meta.get("regularMarketPrice"), meta.get("chartPreviousClose") or meta.get("previousClose")
        change = ""
        if isinstance(price, (int, float)) and isinstance(previous, (int, float)) and previous:
            change = f" ({(price - previous) / previous * 100:+.2f}% vs {previous:,.2f})"
        when = meta.get("regularMarketTime")
        stamp = datetime.fromtimestamp(when, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if when else "?"
        name = meta.get("longName") or meta.get("shortName") or symbol
        parts = [f"{name} ({symbol}, {meta.get('fullExchangeName') or meta.get('exchangeName', '?')}): "
                 f"{_number(price)} {meta.get('currency', '')}{change} at {stamp}"]
        day = (meta.get("regularMarketDayLow"), meta.get("regularMarketDayHigh"))
        if all(v is not None for v in day):
            parts.append(f"day {_number(day[0])}-{_number(day[1])}")
        if meta.get("regularMarketVolume") is not None:
            parts.append(f"volume {meta['regularMarketVolume']:,}")
        year = (meta.get("fiftyTwoWeekLow"), meta.get("fiftyTwoWeekHigh"))
        if all(v is not None for v in year):
            parts.append(f"52w {_number(year[0])}-{_number(year[1])}")
        return "; ".join(parts)

    async def stock_history(
        self,
        symbol: str,
        period: Literal["5d", "1mo", "3mo", "6mo", "1y", "2y", "5y", "max"] = "1mo",
        interval: Literal["1d", "1wk", "1mo"] = "1d",
    ) -> str:
        """Price history as CSV rows (date,open,high,low,close,volume), at most 60 rows.

        Args:
            symbol: Ticker.
            period: How far back.
            interval: One row per day, week or month.
        """
        symbol = _ticker(symbol)
        result = await self._chart(symbol, period, interval)
        stamps = result.get("timestamp") or []
        quote = ((result.get("indicators") or {}).get("quote") or [{}])[0]
        rows = []
        for i, stamp in enumerate(stamps):
            values = [(quote.get(k) or [None] * len(stamps))[i] for k in ("open", "high", "low", "close", "volume")]
            if values[3] is None:
                continue
            date = datetime.fromtimestamp(stamp, tz=timezone.utc).strftime("%Y-%m-%d")
            rows.append(",".join([date, *(f"{v:.2f}" if isinstance(v, float) else str(v or "") for v in values)]))
        if not rows:
            return f"No price history for {symbol} over {period}."
        note = ""
        if len(rows) > MAX_ROWS:
            note = f"\n[{len(rows) - MAX_ROWS} earlier rows left out; use a coarser interval for the whole period]"
            rows = rows[-MAX_ROWS:]
        currency = (result.get("meta") or {}).get("currency", "")
        return f"{symbol} {period} {interval} ({currency})\ndate,open,high,low,close,volume\n" + "\n".join(rows) + note

    async def stock_fundamentals(self, symbol: str) -> str:
        """Company profile and key figures: market cap, P/E, EPS, margins, debt, analyst view.

        Args:
            symbol: Ticker.
        """
        symbol = _ticker(symbol)
        data = await self._quote_summary(symbol)
        results = ((data or {}).get("quoteSummary") or {}).get("result") or []
        if not results:
            error = ((data or {}).get("quoteSummary") or {}).get("error") or {}
            raise LookupError(f"no fundamentals for {symbol}: {squash(error.get('description'), 200) or 'not found'}")
        modules = results[0]
        lines = [f"{label}: {_number((modules.get(module) or {}).get(key))}" for module, key, label in FUNDAMENTALS
                 if _number((modules.get(module) or {}).get(key))]
        about = squash((modules.get("assetProfile") or {}).get("longBusinessSummary"), 400)
        return f"{symbol}\n" + "\n".join(lines) + (f"\nabout: {about}" if about else "")

    async def _quote_summary(self, symbol: str) -> Any:
        for attempt in range(2):
            cookies, crumb = await self._crumb(refresh=attempt > 0)
            try:
                return await self.http.get_json(f"/v10/finance/quoteSummary/{symbol}",
                                                params={"modules": SUMMARY_MODULES, "crumb": crumb},
                                                cookies=cookies, ok_statuses=(404,))
            except ToolkitHttpError as err:
                if err.status != 401 or attempt:
                    raise
        raise AssertionError("unreachable")

    async def _crumb(self, refresh: bool = False) -> tuple[dict[str, str], str]:
        if self._session is None or refresh:
            # fc.yahoo.com answers 404 but sets the session cookie the crumb is tied to.
            cookie_page = await self.http.get(self.cookie_url, ok_statuses=(404,))
            crumb = await self.http.get("/v1/test/getcrumb", cookies=cookie_page.cookies)
            value = crumb.text.strip()
            if not value or "<" in value or " " in value:
                raise ToolkitError("Yahoo Finance did not hand out an access crumb; try again later.")
            self._session = (cookie_page.cookies, value)
        return self._session

    async def stock_news(self, symbol: str) -> str:
        """Recent news headlines about a ticker, with publisher, date and URL.

        Args:
            symbol: Ticker.
        """
        symbol = _ticker(symbol)
        data = await self.http.get_json("/v1/finance/search", params={"q": symbol, "quotesCount": 0,
                                                                      "newsCount": self.max_news})
        news = data.get("news") if isinstance(data, dict) else None
        if news is None:
            raise ToolkitError("Yahoo Finance sent an unexpected response (no 'news').")
        items = []
        for row in news[: self.max_news]:
            stamp = row.get("providerPublishTime")
            date = datetime.fromtimestamp(stamp, tz=timezone.utc).strftime("%Y-%m-%d") if stamp else ""
            items.append({"title": row.get("title"), "url": row.get("link"),
                          "extra": ", ".join(x for x in (row.get("publisher"), date) if x)})
        return numbered_results(items) if items else f"No news for {symbol}."
