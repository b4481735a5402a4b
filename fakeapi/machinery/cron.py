"""CronJob schedules as upstream parses them (robfig/cron ``ParseStandard``), evaluated by croniter.

Accepted: five fields (minute hour day-of-month month day-of-week), the descriptors
``@yearly``/``@annually``/``@monthly``/``@weekly``/``@daily``/``@midnight``/``@hourly``, and
``@every <duration>``.  croniter (a maintained cron library) does the calendar arithmetic; it
also accepts 6- and 7-field forms with seconds and years, which upstream does not, so the field
count is checked here first.  Times are aware datetimes in the schedule's zone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from fakeapi.machinery.durations import parse_duration

if TYPE_CHECKING:
    from croniter import croniter


def _croniter() -> type[croniter]:
    # Imported at first use: croniter and dateutil are ~20 ms of every server's and control
    # plane's start, and only CronJobs need them.
    from croniter import croniter

    return croniter

DESCRIPTORS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}


class ScheduleError(ValueError):
    """An unparseable schedule; the message is what validation and events report."""


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: a cron expression or a fixed ``@every`` interval (seconds)."""

    expression: str = ""
    every: float = 0.0

    def next_after(self, moment: datetime) -> datetime:
        """The first activation strictly after ``moment`` (an aware datetime)."""
        if self.every:
            # robfig's ConstantDelaySchedule: the interval from the moment, rounded down to the second.
            return moment.replace(microsecond=0) + timedelta(seconds=self.every)
        result: datetime = _croniter()(self.expression, moment).get_next(datetime)
        return result

    def most_recent(self, after: datetime, until: datetime, limit: int = 100) -> tuple[datetime | None, int]:
        """The latest activation in ``(after, until]`` and how many there were (counted up to
        ``limit + 1``, as upstream's ``mostRecentScheduleTime`` warns past 100)."""
        latest, count, cursor = None, 0, after
        while count <= limit:
            upcoming = self.next_after(cursor)
            if upcoming > until:
                return latest, count
            latest, count, cursor = upcoming, count + 1, upcoming
        if not self.every:
            # Too many to walk: the last one before ``until`` (croniter steps back from just after it).
            latest = _croniter()(self.expression, until + timedelta(seconds=1)).get_prev(datetime)
        return latest, count


def parse_schedule(text: str) -> Schedule:
    """Parse like ``cron.ParseStandard``; raise :class:`ScheduleError` with robfig's wording."""
    spec = text.strip()
    if spec.startswith("@every "):
        try:
            every = parse_duration(spec.removeprefix("@every ").strip())
        except ValueError as exc:
            raise ScheduleError(f"failed to parse duration {spec}: {exc}") from exc
        if every < 1:
            every = 1.0  # robfig's minimum interval
        return Schedule(every=every)
    if spec.startswith("@"):
        if spec not in DESCRIPTORS:
            raise ScheduleError(f"unrecognized descriptor: {spec}")
        spec = DESCRIPTORS[spec]
    fields = spec.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    from croniter import CroniterError

    try:
        _croniter()(spec)
    except (CroniterError, ValueError, KeyError) as exc:
        raise ScheduleError(str(exc)) from exc
    return Schedule(expression=spec)
