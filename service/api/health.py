"""Liveness and readiness, for load balancers and operators.

``/ready`` fails (``503``) only when this process cannot serve: Redis unreachable. An archive
that takes no writes does not stop a web process serving (a log it cannot take is held in
Redis and served from there, :mod:`arena.archiving`), so a load balancer must not take every
web process out for it: ``/ready`` answers ``200`` with ``"status": "degraded"`` and says so
in its ``archive`` field, for the operator's alerting."""

from __future__ import annotations

from typing import Any

from arena import archiving
from arena.queue import workers_and_depth
from referee.build import describe_all
from service.context import arena, store
from service.schemas import HealthSchema, ReadySchema
from service.smorest import Blueprint

blp = Blueprint("health", __name__, description="Health")


@blp.route("/health")
@blp.response(200, HealthSchema)
def health() -> dict[str, Any]:
    """The process is up (no dependency is checked)."""
    return {"status": "ok"}


@blp.route("/ready")
@blp.response(200, ReadySchema)
@blp.alt_response(503, schema=ReadySchema, description="Redis is unreachable")
def ready() -> tuple[dict[str, Any], int]:
    """Redis is reachable; how many RQ workers are alive (a recent heartbeat), how many jobs
    wait, how many pull bots are connected, whether the archive of match logs takes writes and
    how many logs wait in Redis for it, and which build of the referee (and of each compiled
    package) runs.

    `status` is `ready`; `degraded` (still `200`) while the archive takes no writes: the arena
    plays and records matches and serves their logs, held in Redis until the archive takes
    them, but the operator must mend the archive; `unavailable` (`503`) while Redis is
    unreachable."""
    every = describe_all()
    builds = {"referee": every["referee"], "builds": every}
    if not store().ping():
        down = {"redis": False, "workers": 0, "queue_depth": 0, "pull_bots_connected": 0}
        return {"status": "unavailable", **down, **builds}, 503
    config = arena().config
    workers, depth = workers_and_depth(arena().queue, live_within_s=config.worker_ttl_s)
    archive = archiving.status(arena())
    return {
        "status": "ready" if archive["writable"] else "degraded",
        "redis": True,
        "archive": archive,
        "workers": workers,
        "queue_depth": depth,
        "pull_bots_connected": store().mailbox.connected_count(),
        **builds,
    }, 200
