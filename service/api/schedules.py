"""Scheduled tournaments: a cron schedule of ladder rounds among all active bots, which the
workers register with ``rq cron``."""

from __future__ import annotations

from typing import Any

from croniter import croniter
from flask.views import MethodView

from arena.store import schedule_json
from service.api.tournaments import spec_from
from service.auth import operator_only
from service.context import store
from service.errors import ErrorSchema
from service.schemas import ScheduleCreate, ScheduleSchema
from service.smorest import Blueprint, abort

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
        cron = args["cron"].strip()
        if len(cron.split()) != 5 or not croniter.is_valid(cron):
            why = f"{cron!r} is not a five-field cron expression such as '0 3 * * *'"
            abort(422, message=f"cron: {why}", errors={"cron": [why]})
        return schedule_json(store().create_schedule(cron, spec_from(args["template"], ())))


@blp.route("/<schedule_id>", methods=["DELETE"])
@operator_only(blp)
@blp.response(204)
@blp.alt_response(404, schema=ErrorSchema, description="no such schedule")
def delete_schedule(schedule_id: str) -> None:
    """Remove a schedule (tournaments it already created stay)."""
    if not store().delete_schedule(schedule_id):
        abort(404, message=f"there is no schedule {schedule_id}")
