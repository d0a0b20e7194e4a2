"""Scheduled tournaments: a cron schedule of ladder rounds among all active bots, which the
workers register with ``rq cron``."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from arena import schedules
from arena.store import schedule_json
from service.api.tournaments import spec_from
from service.auth import operator_only
from service.context import arena, store
from service.errors import ErrorSchema
from service.schemas import ScheduleCreate, ScheduleSchema
from service.smorest import Blueprint

blp = Blueprint(
    "schedules", __name__, url_prefix="/api/schedules", description="Scheduled tournaments"
)


@blp.route("")
class Schedules(MethodView):
    @operator_only(blp)
    @blp.response(200, ScheduleSchema(many=True))
    def get(self) -> list[dict[str, Any]]:
        """Every schedule."""
        return [schedule_json(s) for s in store().list_schedules()]

    @operator_only(blp)
    @blp.arguments(ScheduleCreate)
    @blp.response(201, ScheduleSchema)
    @blp.alt_response(422, schema=ErrorSchema, description="invalid field")
    def post(self, args: dict[str, Any]) -> dict[str, Any]:
        """Add a schedule: each time the cron expression fires, a tournament among the bots
        active then is created and started."""
        template = spec_from(args["template"], ())
        return schedule_json(schedules.create(arena(), args["cron"], template))


@blp.route("/<schedule_id>", methods=["DELETE"])
@operator_only(blp)
@blp.response(204)
@blp.alt_response(404, schema=ErrorSchema, description="no such schedule")
def delete_schedule(schedule_id: str) -> None:
    """Remove a schedule (tournaments it already created stay)."""
    schedules.delete(arena(), schedule_id)
