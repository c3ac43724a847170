"""ISO 8601 timestamps as the stores write them.

Cortex writes `2026-01-01T00:00:00.000Z`; people write `2026-01-18` in tables.
Everything the tool keeps is an aware UTC datetime; what it writes is the
Cortex form, so files written by either tool look the same.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from functools import lru_cache

from memory_enhancement.core.errors import InvalidInputError, shown


def now() -> datetime:
    """The current time in UTC, at millisecond precision (what we can write back)."""
    moment = datetime.now(UTC)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def format_timestamp(moment: datetime) -> str:
    """Render as `YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC."""
    moment = as_utc(moment)
    # Not strftime: its %Y writes the year 1 as `1`, not `0001`, and that reads back as nothing.
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:"
        f"{moment.minute:02d}:{moment.second:02d}.{moment.microsecond // 1000:03d}Z"
    )


def as_utc(moment: datetime) -> datetime:
    """Naive datetimes are taken to be UTC, as YAML loaders produce them; precision is
    cut to the millisecond, what a file can hold, so a value reads back as it was given."""
    if moment.microsecond % 1000:
        moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def parse_timestamp(value: object, *, field: str = "timestamp") -> datetime:
    """Accept a datetime, a date, or an ISO 8601 string (date only, `Z`, offsets).

    Raises InvalidInputError naming the field and the value when it is none of these.
    """
    try:
        if isinstance(value, datetime):
            return as_utc(value)
        if isinstance(value, date):
            return datetime(value.year, value.month, value.day, tzinfo=UTC)
        if isinstance(value, str):
            text = value.strip()
            if text.endswith(("Z", "z")):
                text = text[:-1] + "+00:00"
            return as_utc(datetime.fromisoformat(text))
    except OverflowError:  # `0001-01-01T00:00+05:00` is before the year 1 in UTC
        raise InvalidInputError(
            f"invalid {field}: {shown(value)} is outside the years 1 to 9999 in UTC"
        ) from None
    except ValueError:
        pass
    raise InvalidInputError(f"invalid {field}: {shown(value)} (expected ISO 8601, e.g. 2026-01-31)")


def maybe_timestamp(value: object, *, field: str = "timestamp") -> datetime | None:
    """Like parse_timestamp, but None and empty strings mean "not set"."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str) and len(value) == 24 and value.endswith("Z"):
        return _canonical(value)  # the form the tool writes, read in bulk from its databases
    return parse_timestamp(value, field=field)


@lru_cache(maxsize=4096)
def _canonical(text: str) -> datetime:
    return parse_timestamp(text)
