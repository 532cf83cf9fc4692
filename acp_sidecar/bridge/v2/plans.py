"""The v2 form of the core's plan operations: a checklist as stable ``plan_update`` items (its
removal as one with no entries, the stable surface having no removal), a Markdown plan as the
unstable ``plan_update`` ``markdown`` and its removal as the unstable ``plan_removed``.

Invariant: pure (a function of the v1 update alone), so live and replay send the same plans.
"""

from __future__ import annotations

from typing import Any, assert_never

from acp_sidecar import protocol as v1
from acp_sidecar.bridge import cards
from acp_sidecar.protocol.encoding import to_wire
from acp_sidecar.protocol.v2.unstable import MarkdownPlanUpdate, PlanMarkdown


def plan_of(update: v1.PlanUpdate | v1.PlanRemoved) -> dict[str, Any]:
    """One plan operation in its v2 form."""
    match update:
        case v1.PlanRemoved(plan_id=cards.CHECKLIST_PLAN_ID):
            emptied = v1.PlanItems(plan_id=update.plan_id, entries=[])
            return to_wire(v1.PlanUpdate(plan=emptied, meta=update.meta))
        case v1.PlanRemoved():
            return to_wire(update)  # the same shape in v2 (unstable)
        case v1.PlanUpdate():
            plan = update.plan
            match plan:
                case v1.PlanItems():
                    return to_wire(update)  # a checklist: the same shape in v2
                case v1.PlanMarkdown():
                    document = PlanMarkdown(
                        plan_id=plan.plan_id, content=plan.content, meta=plan.meta
                    )
                    return to_wire(MarkdownPlanUpdate(plan=document, meta=update.meta))
                case _:
                    assert_never(plan)
        case _:
            assert_never(update)
