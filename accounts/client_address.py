"""The client's address, the one key that the login lockout (django-axes), the re-identification password
check and every rate limit share.

``X-Forwarded-For`` is written by whoever sends the request, so it is believed only when the connection comes
from a proxy the operator named in ``ANONYMIZER_TRUSTED_PROXIES`` (addresses or networks). The header is then
read from the right, skipping the trusted proxies themselves: the first address that is not one of them is the
client, and whatever a client put further left is its own claim, never used. With no trusted proxy (the
default) the address is ``REMOTE_ADDR``, whatever the headers say.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
UNKNOWN = "unknown"  # no usable REMOTE_ADDR (a test client, a broken server): one shared bucket


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ImproperlyConfigured(f"ANONYMIZER_TRUSTED_PROXIES: {entry!r} is not an address or a network "
                                       "(e.g. 127.0.0.1, 10.0.0.0/8, ::1)") from None
    return tuple(networks)


def trusted_proxies() -> tuple[Network, ...]:
    return _networks(tuple(getattr(settings, "ANONYMIZER_TRUSTED_PROXIES", ()) or ()))


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [::1]:443
        text = text[1:text.index("]")]
    elif text.count(":") == 1:  # 203.0.113.7:5123
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    # an IPv4 client seen through an IPv6 socket is the IPv4 client, in one bucket with itself
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


def _trusted(address, networks: tuple[Network, ...]) -> bool:
    return any(address.version == net.version and address in net for net in networks)


def client_address(request) -> str:
    """The address of the client that sent ``request`` (a Django HttpRequest or a DRF Request)."""
    meta = getattr(request, "META", None) or {}
    peer = _address(str(meta.get("REMOTE_ADDR") or ""))
    if peer is None:
        return UNKNOWN
    networks = trusted_proxies()
    if not networks or not _trusted(peer, networks):
        return str(peer)
    # Every proxy appends the address it received the request from; the rightmost untrusted one is the client.
    hops = [h for part in str(meta.get("HTTP_X_FORWARDED_FOR") or "").split(",") if (h := part.strip())]
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            # garbage written by someone: what lies to its left cannot be trusted either; the last proxy that
            # wrote a good address is the best we know
            break
        if not _trusted(address, networks):
            return str(address)
        peer = address
    return str(peer)


IPV6_PREFIX = 64  # one IPv6 subscriber gets a /64 (or more): its 2**64 addresses are one client here


def client_bucket(request) -> str:
    """What the lockout and the rate limits count per: the client address, or for IPv6 the first address of its
    /64 (2001:db8:1:2::), so that rotating addresses inside one's own network opens no new budget or lock."""
    address = client_address(request)
    if ":" not in address:
        return address
    return str(ipaddress.ip_network(f"{address}/{IPV6_PREFIX}", strict=False).network_address)


def axes_client_ip(request) -> str | None:
    """AXES_CLIENT_IP_CALLABLE: django-axes keys its lockout on the same client as everything else. None when
    there is no address (a log-in made in code, e.g. force_login): axes stores it in an address column
    (PostgreSQL inet), where "unknown" is refused."""
    bucket = client_bucket(request)
    return None if bucket == UNKNOWN else bucket
