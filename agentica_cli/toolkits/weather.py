"""WeatherTool: current weather and forecast for a place, key-less, from Open-Meteo."""

from __future__ import annotations

import re
from typing import Any, Literal

from agentica_cli.toolkits._http import DEFAULT_TIMEOUT_S, HttpClient
from agentica_cli.toolkits._text import squash
from agentica_cli.tools.base import Tool

MAX_FORECAST_DAYS = 16
_LATLON = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$")

# WMO weather interpretation codes, as Open-Meteo documents them.
WMO_CODES = {
    0: "clear", 1: "mainly clear", 2: "partly cloudy", 3: "overcast", 45: "fog", 48: "rime fog",
    51: "light drizzle", 53: "drizzle", 55: "dense drizzle", 56: "freezing drizzle", 57: "freezing drizzle",
    61: "light rain", 63: "rain", 65: "heavy rain", 66: "freezing rain", 67: "freezing rain",
    71: "light snow", 73: "snow", 75: "heavy snow", 77: "snow grains", 80: "rain showers",
    81: "rain showers", 82: "violent rain showers", 85: "snow showers", 86: "heavy snow showers",
    95: "thunderstorm", 96: "thunderstorm with hail", 99: "thunderstorm with heavy hail",
}


class WeatherTool(Tool):
    """Weather now and daily forecasts (Open-Meteo, no key)."""

    def __init__(
        self,
        *,
        base_url: str = "https://api.open-meteo.com/v1",
        geocoding_url: str = "https://geocoding-api.open-meteo.com/v1",
        language: str = "en",
        unit: Literal["celsius", "fahrenheit"] = "celsius",
        timeout: float = DEFAULT_TIMEOUT_S,
    ):
        super().__init__(name="weather")
        self.language = language  # of place names in the answer
        self.unit = unit
        self.forecast_api = HttpClient(service="Open-Meteo", base_url=base_url, timeout=timeout)
        self.geocoding_api = HttpClient(service="Open-Meteo geocoding", base_url=geocoding_url, timeout=timeout)
        self.register(self.get_weather, is_read_only=True, concurrency_safe=True)

    async def get_weather(
        self, location: str, days: int = 0, unit: Literal["celsius", "fahrenheit"] | None = None
    ) -> str:
        """Current weather for a place, plus a daily forecast when days > 0.

        Args:
            location: City or place name (e.g. "Beijing", "Paris, FR") or "lat,lon".
            days: Forecast days, 0-16 (0: current weather only).
            unit: "celsius" or "fahrenheit".
        """
        name, lat, lon = await self._locate(location)
        days = max(0, min(int(days), MAX_FORECAST_DAYS))
        unit = unit or self.unit
        params: dict[str, Any] = {
            "latitude": lat,
            "longitude": lon,
            "current": "temperature_2m,apparent_temperature,relative_humidity_2m,precipitation,weather_code,"
            "wind_speed_10m",
            "timezone": "auto",
            "temperature_unit": "fahrenheit" if unit == "fahrenheit" else None,
        }
        if days:
            params["daily"] = "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum," \
                "precipitation_probability_max"
            params["forecast_days"] = days
        data = await self.forecast_api.get_json("/forecast", params=params)
        return format_weather(name, data, days)

    async def _locate(self, location: str) -> tuple[str, float, float]:
        match = _LATLON.match(location)
        if match:
            return location.strip(), float(match.group(1)), float(match.group(2))
        query = location.split(",")[0].strip()
        if not query:
            raise ValueError("location is empty.")
        data = await self.geocoding_api.get_json("/search", params={"name": query, "count": 5,
                                                                     "language": self.language, "format": "json"})
        places = data.get("results") if isinstance(data, dict) else None
        if not places:
            raise LookupError(f"no place called {location!r} found; try another spelling or 'lat,lon'.")
        hint = location.split(",", 1)[1].strip().lower() if "," in location else ""
        place = next((p for p in places if hint and hint in (str(p.get("country_code", "")).lower(),
                                                               str(p.get("country", "")).lower(),
                                                               str(p.get("admin1", "")).lower())), places[0])
        name = ", ".join(str(p) for p in (place.get("name"), place.get("admin1"), place.get("country")) if p)
        return name, float(place["latitude"]), float(place["longitude"])


def _value(block: dict[str, Any], units: dict[str, Any], key: str) -> str:
    value = block.get(key)
    if value is None:
        return "?"
    return f"{value}{units.get(key, '')}"


def format_weather(name: str, data: Any, days: int) -> str:
    if not isinstance(data, dict) or not isinstance(data.get("current"), dict):
        raise ValueError("Open-Meteo sent an unexpected response (no 'current' block).")
    now, units = data["current"], data.get("current_units") or {}
    sky = WMO_CODES.get(now.get("weather_code"), f"code {now.get('weather_code')}")
    lines = [
        f"{name} ({squash(now.get('time'))} local): {sky}, {_value(now, units, 'temperature_2m')} "
        f"(feels {_value(now, units, 'apparent_temperature')}), humidity {_value(now, units, 'relative_humidity_2m')}, "
        f"wind {_value(now, units, 'wind_speed_10m')}, precipitation {_value(now, units, 'precipitation')}"
    ]
    daily = data.get("daily") or {}
    if days and isinstance(daily, dict) and daily.get("time"):
        dunits = data.get("daily_units") or {}
        lines.append("date | weather | min..max | precip (chance)")
        for i, day in enumerate(daily["time"][:days]):
            def col(key: str, i: int = i) -> Any:
                values = daily.get(key) or []
                return values[i] if i < len(values) else None
            code = col("weather_code")
            chance = col("precipitation_probability_max")
            lines.append(
                f"{day} | {WMO_CODES.get(code, f'code {code}')} | {col('temperature_2m_min')}.."
                f"{col('temperature_2m_max')}{dunits.get('temperature_2m_max', '')} | "
                f"{col('precipitation_sum')}{dunits.get('precipitation_sum', '')}"
                + (f" ({chance}%)" if chance is not None else "")
            )
    return "\n".join(lines)
