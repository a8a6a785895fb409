"""What a tool that fetches from the web shares, whoever wrote it (builtin_tools/web.py's fetch_url,
the toolkits' HTTP client in agentica_cli/toolkits/_http.py): which addresses it may connect to
(`AddressPolicy`: public ones unless allowed, resolved once so DNS rebinding cannot move the
connection), sending pinned to the vetted addresses, and a page's HTML as Markdown.

Heavy libraries (httpx, markdownify) are imported on first use.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import httpx


class FetchRefusedError(PermissionError):
    """The URL is not allowed (scheme, or it resolves to a private/loopback address)."""


class FetchError(RuntimeError):
    """The page could not be fetched or is not text."""


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _is_public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast
                or ip.is_reserved or ip.is_unspecified or not ip.is_global)


# (host, port) -> the addresses to connect to, in order; the default asks the system resolver.
Resolver = Callable[[str, int], Awaitable[list[str]]]


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class AddressPolicy:
    """Which resolved addresses fetch_url may connect to: public ones, plus `allow_private`
    (True for every address, or an iterable of networks such as "127.0.0.1/32").

    `vetted_addresses` resolves a host once and returns the addresses to connect to; fetch_url
    connects to exactly those, so a DNS answer that changes between the check and the
    connection (DNS rebinding) cannot reach a refused address.
    """

    def __init__(self, allow_private: bool | Iterable[str] = False, *, resolver: Resolver | None = None):
        self.allow_all = allow_private is True
        networks: list[Network] = []
        if allow_private not in (True, False):
            networks = [ipaddress.ip_network(n, strict=False) for n in allow_private]  # type: ignore[union-attr]
        self.networks = networks
        self.resolver: Resolver = resolver or system_resolver

    def allows(self, ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        return self.allow_all or _is_public(ip) or any(ip in net for net in self.networks)

    async def vetted_addresses(self, url: str) -> list[str]:
        """The addresses `url`'s host resolves to, all of them allowed, or FetchRefusedError."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise FetchRefusedError(f"only http and https URLs can be fetched, not {parts.scheme or 'no scheme'!r}.")
        host = parts.hostname
        if not host:
            raise FetchRefusedError(f"URL {url!r} has no host.")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            answers = await self.resolver(host, port)
        except (OSError, ValueError) as err:
            raise FetchError(f"cannot resolve host {host!r}: {err}") from None
        addresses: list[str] = []
        for answer in answers:
            ip = ipaddress.ip_address(answer.split("%")[0])
            # One refused answer refuses the host: which answer a client uses is not ours to pick.
            if not self.allows(ip):
                raise FetchRefusedError(
                    f"refusing to fetch {url}: {host} resolves to {ip}, a private, loopback or link-local "
                    "address (the tool only fetches public addresses)."
                )
            if str(ip) not in addresses:
                addresses.append(str(ip))
        if not addresses:
            raise FetchError(f"cannot resolve host {host!r}: no addresses.")
        return addresses

    async def check(self, url: str) -> None:
        await self.vetted_addresses(url)


def html_to_markdown(html: str) -> str:
    from markdownify import markdownify

    text = markdownify(html, heading_style="ATX", strip=["img"])
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:  # collapse runs of blank lines left by layout markup
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def _title_of(html: str) -> str:
    import re

    match = re.search(r"<title[^>]*>(.*?)</title>", html, re.IGNORECASE | re.DOTALL)
    return " ".join(match.group(1).split()) if match else ""


class NoAddressConnected(Exception):
    """None of the vetted addresses took the connection."""

    def __init__(self, addresses: list[str], last_error: Exception | None):
        super().__init__(f"tried {', '.join(addresses)}: {last_error}")
        self.addresses, self.last_error = addresses, last_error

    def describe(self, where: str) -> str:
        return f"cannot connect to {where} (tried {', '.join(self.addresses)}): {self.last_error}"


async def send_pinned(client: httpx.AsyncClient, method: str, url: str, addresses: list[str],
                      **request_args: Any) -> httpx.Response:
    """Send over a connection to one of `addresses` (in order, the next one when a connection
    cannot be made), with the URL's own host in the Host header and TLS SNI, so certificates are
    still checked against the host name. The response is streamed (the caller closes it)."""
    import httpx

    last_error: Exception | None = None
    for address in addresses:
        request = client.build_request(method, url, **request_args)  # Host header from the URL's host
        host_name = request.url.raw_host.decode("ascii")
        request.url = request.url.copy_with(host=address)
        request.extensions["sni_hostname"] = host_name
        try:
            return await client.send(request, stream=True)
        except httpx.ConnectError as err:
            last_error = err
    raise NoAddressConnected(addresses, last_error)
