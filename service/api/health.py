"""Liveness and readiness, for load balancers and operators."""

from __future__ import annotations

from typing import Any

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
    wait, how many pull bots are connected, and which build of the referee (and of each compiled
    package) runs."""
    every = describe_all()
    builds = {"referee": every["referee"], "builds": every}
    if not store().ping():
        down = {"redis": False, "workers": 0, "queue_depth": 0, "pull_bots_connected": 0}
        return {"status": "unavailable", **down, **builds}, 503
    config = arena().config
    workers, depth = workers_and_depth(arena().queue, live_within_s=config.worker_ttl_s)
    return {
        "status": "ready",
        "redis": True,
        "workers": workers,
        "queue_depth": depth,
        "pull_bots_connected": store().mailbox.connected_count(),
        **builds,
    }, 200
